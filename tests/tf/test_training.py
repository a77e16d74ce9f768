"""Training parity: the same program with ltf.GradientTape + ltf.Variable and with
tf.GradientTape + tf.Variable on eager TF gives the same losses, and once the step is
compiled (steps 1-2) later steps compile nothing."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

STEPS = 20


def _mlp_params(rng):
    return [rng.normal(0, 0.1, (64, 32)).astype(np.float32), np.zeros(32, np.float32),
            rng.normal(0, 0.1, (32, 10)).astype(np.float32), np.zeros(10, np.float32)]


def _mlp(x, w1, b1, w2, b2):
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    return tf.matmul(h, w2) + b2


def _cnn_params(rng):
    return [rng.normal(0, 0.2, (3, 3, 1, 4)).astype(np.float32), np.zeros(4, np.float32),
            rng.normal(0, 0.1, (4 * 4 * 4, 10)).astype(np.float32), np.zeros(10, np.float32)]


def _cnn(x, k, bk, w, b):
    h = tf.nn.relu(tf.nn.conv2d(x, k, strides=1, padding="SAME") + bk)
    h = tf.nn.max_pool2d(h, 2, 2, "VALID")
    h = tf.reshape(h, [-1, 4 * 4 * 4])
    return tf.matmul(h, w) + b


def _data(rng, kind):
    xs, ys = [], []
    for _ in range(4):  # a few batches, cycled
        x = rng.normal(size=(16, 64) if kind == "mlp" else (16, 8, 8, 1)).astype(np.float32)
        xs.append(x)
        ys.append(rng.integers(0, 10, 16).astype(np.int32))
    return xs, ys


def _train(params, model, xs, ys, lazy: bool, lr=0.1):
    Var = ltf.Variable if lazy else tf.Variable
    Tape = ltf.GradientTape if lazy else tf.GradientTape
    vs = [Var(p) for p in params]
    losses, misses = [], []
    for step in range(STEPS):
        x = xs[step % len(xs)]
        x = ltf.convert_to_tensor(x) if lazy else tf.constant(x)
        y = ys[step % len(ys)]
        with Tape() as tape:
            logits = model(x, *vs)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, vs)
        for v, g in zip(vs, grads, strict=True):
            v.assign_sub(lr * g)
        if lazy:
            ltf.sync()
            misses.append(lc.metrics.counters()["cache_misses"])
        losses.append(float(loss))
    return np.array(losses), misses


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_parity_and_no_recompiles(kind):
    rng = np.random.default_rng(1)
    params = _mlp_params(rng) if kind == "mlp" else _cnn_params(rng)
    model = _mlp if kind == "mlp" else _cnn
    xs, ys = _data(rng, kind)
    eager, _ = _train(params, model, xs, ys, lazy=False)
    lc.metrics.reset()
    lazy, misses = _train(params, model, xs, ys, lazy=True)
    np.testing.assert_allclose(lazy, eager, rtol=1e-4)
    assert eager[-1] < eager[0]  # it actually trains
    assert misses[-1] == misses[1], f"steps after the second compiled: {misses}"
    assert ltf.fallback_counts() == {}
