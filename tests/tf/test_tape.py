"""ltf.GradientTape vs tf.GradientTape on eager TF."""

import numpy as np
import pytest
import tensorflow as tf
from tf_helpers import assert_same, lazy

import lazy_tf as ltf

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4)).astype(np.float32)
W = rng.normal(size=(4, 2)).astype(np.float32)


def _both(fn):
    """Run ``fn(tf_module_like)`` with eager TF classes and with lazy ones."""
    eager = fn(tf.Variable, tf.GradientTape, tf.constant)
    lz = fn(ltf.Variable, ltf.GradientTape, ltf.convert_to_tensor)
    return lz, eager


def test_gradient_of_variables_list():
    def prog(Var, Tape, const):
        w, b = Var(W), Var(np.zeros(2, np.float32))
        x = const(X)
        with Tape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w) + b) ** 2)
        return tape.gradient(loss, [w, b])
    assert_same(*_both(prog))


def test_gradient_nested_sources_and_watch():
    def prog(Var, Tape, const):
        x = const(X)
        with Tape() as tape:
            tape.watch(x)
            y = tf.reduce_mean(tf.exp(x) * x)
        return tape.gradient(y, {"a": x, "b": [x]})
    assert_same(*_both(prog))


def test_unwatched_tensor_gives_none_and_zeros_on_request():
    def prog(Var, Tape, const):
        x, z = const(X), const(X[:, :1])
        with Tape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * 2.0)
        return (tape.gradient(y, z),
                tape.gradient(y, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO))
    lz, eager = _both(prog)
    assert lz[0] is None and eager[0] is None
    assert_same(lz[1], eager[1])


def test_persistent_tape_and_non_persistent_error():
    def prog(Var, Tape, const):
        x = const(X)
        with Tape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(x ** 2)
            z = tf.reduce_sum(tf.sin(x))
        return tape.gradient(y, x), tape.gradient(z, x)
    assert_same(*_both(prog))
    x = lazy(X)
    with ltf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x)
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_stop_recording_and_stop_gradient():
    def prog(Var, Tape, const):
        w = Var(W)
        x = const(X)
        with Tape() as tape:
            h = tf.matmul(x, w)
            with tape.stop_recording():
                scale = tf.reduce_sum(w)
            loss = tf.reduce_sum(h * scale) + tf.reduce_sum(tf.stop_gradient(w) * w)
        return tape.gradient(loss, w)
    assert_same(*_both(prog), rtol=1e-4)


def test_output_gradients_and_multiple_targets():
    def prog(Var, Tape, const):
        w = Var(W)
        x = const(X)
        with Tape() as tape:
            y = tf.matmul(x, w)
            z = tf.reduce_sum(w)
        return tape.gradient([y, z], w, output_gradients=[const(np.ones((3, 2), np.float32)),
                                                          const(np.float32(2.0))])
    assert_same(*_both(prog))


def test_non_trainable_variable_is_not_watched_and_int_source_is_none():
    def prog(Var, Tape, const):
        w = Var(W, trainable=False)
        n = Var(np.arange(3, dtype=np.int32))
        with Tape() as tape:
            y = tf.reduce_sum(w * 3.0) + tf.cast(tf.reduce_sum(n), tf.float32)
        return tape.gradient(y, [w, n])
    lz, eager = _both(prog)
    assert lz == [None, None] and eager == [None, None]


def test_second_order_with_nested_tapes():
    def prog(Var, Tape, const):
        x = const(np.array([0.5, 1.5], np.float32))
        with Tape() as outer:
            outer.watch(x)
            with Tape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(x ** 3)
            g = inner.gradient(y, x)
        return outer.gradient(g, x)
    assert_same(*_both(prog), rtol=1e-5)


def test_observing_inside_the_tape_keeps_gradients():
    def prog(Var, Tape, const):
        w = Var(W)
        with Tape() as tape:
            loss = tf.reduce_sum(tf.matmul(const(X), w) ** 2)
            float(loss)            # a sync in the middle of the tape
            ltf.sync()
        return tape.gradient(loss, w)
    assert_same(*_both(prog), rtol=1e-5)


def test_jacobian():
    def prog(Var, Tape, const):
        w = Var(W)
        x = const(X)
        with Tape() as tape:
            y = tf.tanh(tf.matmul(x, w))
        return tape.jacobian(y, w)
    assert_same(*_both(prog), rtol=1e-5)


def test_values_computed_before_the_tape_are_constants():
    def prog(Var, Tape, const):
        x = const(X)
        y = x * 2.0                      # not recorded: before the tape
        with Tape(persistent=True) as tape:
            tape.watch(x)
            z = tf.reduce_sum(y * x)     # only the direct use of x is recorded
            u = tf.reduce_sum(y * 3.0)
        return tape.gradient(z, x), tape.gradient(u, x)
    lz, eager = _both(prog)
    assert lz[1] is None and eager[1] is None
    assert_same(lz[0], eager[0])


def test_watched_eager_tensor_through_lazy_ops():
    """The FGSM / saliency-map tutorials: ``tape.watch(image)`` on an eager tensor fed to
    a model whose weights are lazy. The eager tensor is a source of the lazy graph (the
    gradient matches TF's with a tf.Variable model); an unwatched one gets None, as in
    TF; an eager ``tf.Variable`` read by lazy ops gets eager TF's gradient (it was a
    ``ValueError``; ``tests/tf/test_tutorials_eager_sources.py`` has more)."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    image = tf.constant(rng.standard_normal((4, 3)).astype(np.float32))
    other = tf.constant(rng.standard_normal((4, 2)).astype(np.float32))

    def run(w):
        with tf.GradientTape() as tape:
            tape.watch(image)
            loss = tf.reduce_sum(tf.tanh(tf.matmul(image, w)) * other)
        return tape.gradient(loss, [image, other])

    (want, want_none) = run(tf.Variable(w0))
    with ltf.GradientTape() as tape:
        tape.watch(image)
        loss = tf.reduce_sum(tf.tanh(tf.matmul(image, ltf.Variable(w0))) * other)
    got, got_none = tape.gradient(loss, [image, other])
    assert want_none is None and got_none is None
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-7)
    eager_var = tf.Variable(w0)
    with ltf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.tanh(tf.matmul(lazy(image), eager_var)))
    with tf.GradientTape() as eager_tape:
        want = eager_tape.gradient(tf.reduce_sum(tf.tanh(tf.matmul(image, eager_var))), eager_var)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, eager_var)), want.numpy(),
                               rtol=1e-5, atol=1e-7)
