"""ltf.optimizers against Keras optimizers on eager TF (same update rules)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

rng = np.random.default_rng(3)
W0 = rng.normal(size=(5, 3)).astype(np.float32)
B0 = rng.normal(size=(3,)).astype(np.float32)
GRADS = [(rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(3,)).astype(np.float32))
         for _ in range(6)]

CONFIGS = [
    ("SGD", {"learning_rate": 0.1}),
    ("SGD", {"learning_rate": 0.05, "momentum": 0.9}),
    ("SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"learning_rate": 0.01}),
    ("Adam", {"learning_rate": 0.01, "beta_1": 0.8, "epsilon": 1e-5, "amsgrad": True}),
]


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=lambda v: str(v))
def test_matches_keras(cls, kwargs):
    kv = [tf.Variable(W0), tf.Variable(B0)]
    kopt = getattr(keras.optimizers, cls)(**kwargs)
    lv = [ltf.Variable(W0), ltf.Variable(B0)]
    lopt = getattr(ltf.optimizers, cls)(**kwargs)
    for gw, gb in GRADS:
        kopt.apply_gradients(zip([tf.constant(gw), tf.constant(gb)], kv, strict=True))
        lopt.apply_gradients(zip([ltf.convert_to_tensor(gw), ltf.convert_to_tensor(gb)], lv,
                                 strict=True))
        ltf.sync()
        for a, b in zip(lv, kv, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_adam_steps_do_not_recompile():
    v = ltf.Variable(W0)
    opt = ltf.optimizers.Adam(0.01)
    g = ltf.convert_to_tensor(GRADS[0][0])
    misses = []
    for _ in range(5):
        opt.apply_gradients([(g, v)])
        ltf.sync()
        misses.append(lc.metrics.counters()["cache_misses"])
    assert misses[-1] == misses[1]


def test_training_with_adam_matches_keras():
    x = rng.normal(size=(8, 5)).astype(np.float32)
    y = rng.integers(0, 3, 8).astype(np.int32)

    def run(Var, Tape, opt, conv):
        w, b = Var(W0), Var(B0)
        losses = []
        for _ in range(5):
            with Tape() as tape:
                logits = tf.matmul(conv(x), w) + b
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            grads = tape.gradient(loss, [w, b])
            opt.apply_gradients(zip(grads, [w, b], strict=True))
            losses.append(float(loss))
        return losses
    eager = run(tf.Variable, tf.GradientTape, keras.optimizers.Adam(0.05), tf.constant)
    lazy = run(ltf.Variable, ltf.GradientTape, ltf.optimizers.Adam(0.05), ltf.convert_to_tensor)
    np.testing.assert_allclose(lazy, eager, rtol=1e-5)
