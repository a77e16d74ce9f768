"""APIs TF does not dispatch (or dispatches only with list signatures) reach the lazy
trace, and nothing leaves the lazy graph silently while a tape differentiates it."""

import warnings

import numpy as np
import pytest
import tensorflow as tf
from tf_helpers import assert_same, lazy

import lazy_tf as ltf

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((4, 5)).astype(np.float32)
C = tf.signal.rfft(A).numpy()


@pytest.mark.parametrize("api", [tf.einsum, tf.linalg.einsum])
@pytest.mark.parametrize("eq,args", [("ij,jk->ik", (A, B)), ("ij->j", (A,)),
                                     ("ij,ij", (A, A)), ("...j,jk->...k", (A, B))])
def test_einsum_is_traced(api, eq, args):
    assert_same(api(eq, *[lazy(a) for a in args]), api(eq, *args))


def test_einsum_dtype_mismatch_raises_like_tf():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.einsum("ij,jk->ik", tf.constant(A, tf.float64), tf.constant(B))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.einsum("ij,jk->ik", lazy(A.astype(np.float64)), lazy(B))
    # a NumPy operand takes the first tensor's dtype, as in TF
    assert_same(tf.einsum("ij,jk->ik", lazy(A.astype(np.float64)), B),
                tf.einsum("ij,jk->ik", tf.constant(A, tf.float64), B))


@pytest.mark.parametrize("call", [
    lambda x: tf.signal.rfft(x), lambda x: tf.signal.rfft(x, [6]),
    lambda x: tf.signal.rfft(x, [3]),
])
def test_rfft(call):
    assert_same(call(lazy(A)), call(A))


@pytest.mark.parametrize("call", [
    tf.signal.fft, tf.signal.ifft, tf.signal.irfft, lambda c: tf.signal.irfft(c, [5]),
    lambda c: tf.signal.irfft(c, [8]),
])
def test_complex_transforms(call):
    assert_same(call(lazy(C)), call(C), rtol=1e-5, atol=1e-5)


def test_global_norm_clipping():
    lazy_out = tf.clip_by_global_norm([lazy(A), None, lazy(B)], 1.5)
    eager_out = tf.clip_by_global_norm([A, None, B], 1.5)
    assert lazy_out[0][1] is None
    assert_same([lazy_out[0][0], lazy_out[0][2], lazy_out[1]],
                [eager_out[0][0], eager_out[0][2], eager_out[1]])
    assert_same(tf.linalg.global_norm([lazy(A), lazy(B)]), tf.linalg.global_norm([A, B]))
    assert_same(tf.clip_by_norm(lazy(A), 0.5, axes=[1]), tf.clip_by_norm(A, 0.5, axes=[1]))


def test_map_fn_and_vectorized_map():
    def fn(r):
        return tf.reduce_sum(r * 2.0), r[:2]

    lz, eg = tf.map_fn(fn, lazy(A), fn_output_signature=(tf.float32, tf.float32)), \
        tf.map_fn(fn, tf.constant(A), fn_output_signature=(tf.float32, tf.float32))
    assert_same(list(lz), list(eg))
    assert_same(list(tf.vectorized_map(fn, lazy(A))), list(tf.vectorized_map(fn, A)))


def _mixed_loss(x, w, tape_cls):
    with tape_cls() as t:
        y = tf.einsum("ij,j->i", x, w)                       # not dispatchable in TF
        spectrum = tf.reduce_sum(tf.abs(tf.signal.rfft(y)))  # neither
        rows = tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_sum(r * w), x))
        loss = spectrum + rows + tf.reduce_sum(w * w)         # traced ops reach w too
    return loss, t.gradient(loss, w)


def test_gradients_through_wrapped_apis_match_eager():
    loss, g = _mixed_loss(lazy(A), ltf.Variable(np.ones(4, np.float32)), ltf.GradientTape)
    loss_e, g_e = _mixed_loss(tf.constant(A), tf.Variable(np.ones(4, np.float32)),
                              tf.GradientTape)
    assert_same([loss, g], [loss_e, g_e], rtol=1e-5, atol=1e-5)
    assert ltf.fallback_counts() == {} or all("einsum" not in k and "rfft" not in k
                                              for k in ltf.fallback_counts())


def test_clip_by_global_norm_keeps_gradients():
    def run(w, tape_cls):
        with tape_cls() as t:
            (c,), _ = tf.clip_by_global_norm([w * 3.0], 1.0)
            loss = tf.reduce_sum(c * tf.constant([1.0, 2.0]))
        return t.gradient(loss, w)

    assert_same(run(ltf.Variable([1.0, 2.0]), ltf.GradientTape),
                run(tf.Variable([1.0, 2.0]), tf.GradientTape))


def test_eager_fallback_inside_tape_raises_naming_the_api():
    w = ltf.Variable([1.0, 2.0, 3.0])
    with ltf.GradientTape():
        y = w * 2.0
        with pytest.raises(NotImplementedError, match="segment_sum"):
            tf.math.segment_sum(y, [0, 0, 1])             # dispatchable, no lazy entry
        ta = tf.TensorArray(tf.float32, size=1)
        with pytest.raises(NotImplementedError, match="write"):
            ta.write(0, y)                                 # converts through __tf_tensor__


def test_fallback_on_values_the_tape_does_not_differentiate_still_runs():
    w = ltf.Variable([1.0, 2.0, 3.0])
    x = lazy([1.0, 2.0, 4.0])
    with ltf.GradientTape() as t:
        s = tf.math.segment_sum(x, [0, 0, 1])              # data, not connected to w
        with t.stop_recording():
            s2 = tf.math.segment_sum(w * 1.0, [0, 0, 1])
        loss = tf.reduce_sum(w) + tf.reduce_sum(s) + tf.reduce_sum(s2)
    np.testing.assert_allclose(s.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(t.gradient(loss, w).numpy(), [1.0, 1.0, 1.0])


def test_optimizer_raises_without_gradients_like_keras():
    import keras

    for opt in (ltf.optimizers.SGD(0.1), ltf.optimizers.Adam(0.1)):
        w = ltf.Variable([1.0])
        with pytest.raises(ValueError, match="No gradients provided for any variable."):
            opt.apply_gradients([(None, w)])
    kopt = keras.optimizers.SGD(0.1)
    kw = keras.Variable([1.0])
    with pytest.raises(ValueError, match="No gradients provided for any variable."):
        kopt.apply_gradients([(None, kw)])


def test_optimizer_partial_gradients_warn_and_skip_like_keras():
    w1, w2 = ltf.Variable([1.0]), ltf.Variable([2.0])
    opt = ltf.optimizers.SGD(0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.apply_gradients([(lazy([1.0]), w1), (None, w2)])
    assert any("Gradients do not exist for variables" in str(w.message) for w in caught)
    np.testing.assert_allclose(w1.numpy(), [0.5])
    np.testing.assert_allclose(w2.numpy(), [2.0])
