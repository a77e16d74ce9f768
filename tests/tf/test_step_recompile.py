"""State created at or during the first step does not make the second step another
program (the whole step compiled twice)."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3)).astype(np.float32)
Y = RNG.standard_normal((8, 1)).astype(np.float32)


@pytest.fixture
def compiled():
    """Every program compiled synchronously (no interpreted first runs)."""
    previous = lc.settings.tier
    lc.configure(tier="compile")
    lc.metrics.reset()
    yield lambda: lc.metrics.counters().get("compiles", 0)
    lc.configure(tier=previous)


def _steps(w, b, update, n=4):
    compiles = []
    for _ in range(n):
        x, y = ltf.convert_to_tensor(X), ltf.convert_to_tensor(Y)
        with ltf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        update(tape.gradient(loss, [w, b]))
        float(loss)
        compiles.append(lc.metrics.counters().get("compiles", 0))
    return compiles


@pytest.mark.parametrize("make", [lambda: ltf.optimizers.Adam(0.01),
                                  lambda: ltf.optimizers.SGD(0.01, momentum=0.9),
                                  lambda: ltf.optimizers.Adam(0.01, amsgrad=True)])
def test_optimizer_slots_made_in_step_one(compiled, make):
    w, b = ltf.Variable(np.ones((3, 1), np.float32)), ltf.Variable(tf.zeros([1]))
    opt = make()
    counts = _steps(w, b, lambda g: opt.apply_gradients(zip(g, [w, b], strict=True)))
    assert counts[-1] == counts[0] == 1, counts


def test_variables_from_fills_and_pending_values(compiled):
    w = ltf.Variable(ltf.random.normal([3, 1], seed=1))       # pending: its own program
    b = ltf.Variable(tf.zeros_like(ltf.convert_to_tensor([0.0])))  # a baked zero fill
    acc = ltf.Variable(tf.zeros_like(w), trainable=False)

    def update(g):
        acc.assign_add(g[0])
        w.assign_sub(0.1 * g[0])
        b.assign_sub(0.1 * g[1])

    counts = _steps(w, b, update)
    assert counts[-1] == counts[0], counts      # nothing compiled after the first step
    assert counts[0] <= 2                       # the initial values, then the step
