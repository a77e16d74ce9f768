"""TF's stateless random ops on lazy seeds against eager TF (CPU, Philox): uniform floats
and integers bit for bit, normals to a few ulps (XLA's log/sin/cos are not glibc's),
stateless_dropout with its gradient, and a compiled Keras fit drawing through them
(Dropout, LSTM dropout, RandomFlip, GaussianNoise) with no fallback."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

SEEDS = [np.array([1, 2], np.int32), np.array([-7, 2**31 - 1], np.int32),
         np.array([2**40 + 3, -3], np.int64)]


@pytest.fixture(autouse=True)
def _interpreted():
    """Programs run once each here: interpreted (compiles would dominate the time)."""
    old = lc.settings.tier
    lc.configure(tier="interpret")
    yield
    lc.configure(tier=old)


@pytest.fixture(autouse=True)
def _no_fallback():
    """A lazy path that raised would hand the call to TF (the oracle): none may."""
    lc.metrics.reset()
    yield
    assert ltf.fallback_counts() == {}


def _same_bits(lazy, eager):
    assert isinstance(lazy, ltf.LazyTensor)
    a, b = lazy.numpy(), eager.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


def test_uniform_bits():
    dtypes = [(tf.float32, tf.int32, tf.uint64), (tf.float64, tf.int64, tf.int32),
              (tf.float16, tf.int32, tf.uint32)]
    for seed, (f, i, full) in zip(SEEDS, dtypes, strict=True):
        for shape in ([3, 7], [], [2, 0]):
            for d in (f, tf.bfloat16):
                _same_bits(tf.random.stateless_uniform(shape, ltf.constant(seed), -2.5, 3, d),
                           tf.random.stateless_uniform(shape, seed, -2.5, 3, d))
            _same_bits(tf.random.stateless_uniform(shape, ltf.constant(seed), -5, 2**31 - 3, i),
                       tf.random.stateless_uniform(shape, seed, -5, 2**31 - 3, i))
            _same_bits(tf.random.stateless_uniform(shape, ltf.constant(seed), None, None, full),
                       tf.random.stateless_uniform(shape, seed, None, None, full))


def test_compiled_bounds_are_not_one_fma():
    """Compiled, ``rnd * (max - min) + min`` must not become one FMA (TF rounds the
    product; 2 of these 5 values differ by an ulp if fused)."""
    old = lc.settings.tier
    lc.configure(tier="compile")
    try:
        for d in (tf.float32, tf.float64):
            _same_bits(tf.random.stateless_uniform([5], ltf.constant(SEEDS[2]), -2, 3, d),
                       tf.random.stateless_uniform([5], SEEDS[2], -2, 3, d))
    finally:
        lc.configure(tier=old)


@pytest.mark.parametrize("op", [tf.random.stateless_normal, tf.random.stateless_truncated_normal])
def test_normals_to_ulps(op):
    for seed, shape in zip(SEEDS, [[7], [301, 9], [2, 3, 5]], strict=True):
        for d, rtol in ((tf.float32, 2e-6), (tf.float64, 1e-14), (tf.float16, 1e-3)):
            lazy = op(shape, ltf.constant(seed), 0.5, 2.0, d)
            assert isinstance(lazy, ltf.LazyTensor)
            a = lazy.numpy()
            b = op(shape, seed, 0.5, 2.0, d).numpy()
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                       atol=rtol)
    big = op([200, 100], ltf.constant([5, 6])).numpy()
    np.testing.assert_allclose(big, op([200, 100], [5, 6]).numpy(), rtol=4e-6, atol=2e-6)


def test_errors_and_refusals_are_tfs():
    """What the lazy path refuses (here threefry too), TF decides: its error or result."""
    lc.metrics.reset()
    seed = ltf.constant([1, 2])
    with pytest.raises(ValueError, match="minval"):
        tf.random.stateless_uniform([3], seed, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="minval < maxval"):
        tf.random.stateless_uniform([3], seed, 5, 3, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seed must have shape"):
        tf.random.stateless_normal([3], ltf.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="rate"):
        tf.nn.experimental.stateless_dropout(ltf.constant([1.0]), 1.0, seed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="counter"):  # TF's CPU kernel
        tf.random.stateless_uniform([4], seed, alg="threefry")
    lc.metrics.reset()  # (those went to TF)


def test_stateless_dropout_and_its_gradient():
    x0 = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)

    def run(mod, x, seed, **kwargs):
        with mod.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.experimental.stateless_dropout(x * 2.0, 0.3, seed, **kwargs)
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, x)

    for kwargs in ({}, {"noise_shape": [4, 1]}):
        lazy = run(ltf, ltf.constant(x0), ltf.constant([3, 4]), **kwargs)
        eager = run(tf, tf.constant(x0), tf.constant([3, 4]), **kwargs)
        for a, b in zip(lazy, eager, strict=True):
            _same_bits(a, b)


def test_keras_fit_with_random_layers(metrics):
    """Keras's seed state is a lazy variable: each step's draws are part of the captured
    step, equal to eager Keras's."""
    L = keras.layers
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 5, 4)).astype(np.float32), rng.integers(0, 3, 8)

    def program():
        keras.utils.set_random_seed(3)
        model = keras.Sequential([
            keras.Input((5, 4)), L.Reshape((5, 4, 1)), L.RandomFlip("horizontal"),
            L.Reshape((5, 4)), L.GaussianNoise(0.5),
            L.LSTM(6, dropout=0.3, recurrent_dropout=0.2), L.Dropout(0.3), L.Dense(3)])
        model.compile(keras.optimizers.SGD(0.1),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, epochs=1, batch_size=4, verbose=0)  # 2 steps
        return history.history["loss"], [v.numpy() for v in model.weights]

    lazy, eager, counters = lazy_and_eager_keras(program)
    assert counters.get("tf_function_fallback", 0) == 0 and ltf.fallback_counts() == {}
    np.testing.assert_allclose(lazy[0], eager[0], rtol=1e-5)
    for a, b in zip(lazy[1], eager[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
