"""The step model (``lazycore.steps``): an observation is a step barrier, so a loop that
only reads a value each iteration (logs a loss, tests a flag) compiles twice and then
hits the cache, in every frontend; values equal the eager framework's."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc


@pytest.fixture
def observe():
    """Set ``settings.observe`` for one test (and the compile tier, so counts are exact)."""
    saved = (lc.settings.observe, lc.settings.tier)

    def set_policy(policy):
        lc.configure(observe=policy, tier="compile")
    yield set_policy
    lc.configure(observe=saved[0], tier=saved[1])


def _softmax_regression(X, y, W, iters, log):
    """cs231n-style loop written for NumPy: the loss is read every iteration."""
    N = X.shape[0]
    for _ in range(iters):
        scores = X.dot(W)
        scores = scores - scores.max(axis=1, keepdims=True)
        exp_scores = np.exp(scores)
        probs = exp_scores / exp_scores.sum(axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(N), y]).mean() + 0.5e-3 * (W * W).sum()
        log.append((float(loss), lc.metrics.counters()["compiles"]))
        dscores = probs - np.eye(W.shape[1])[y]
        W = W - 0.5 * (X.T.dot(dscores) / N + 1e-3 * W)
    return W


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((40, 6)), rng.integers(0, 3, 40),
            0.01 * rng.standard_normal((6, 3)))


@pytest.mark.parametrize("policy", ["auto", "live"])
def test_numpy_loop_compiles_twice_then_hits(observe, policy):
    lnp = pytest.importorskip("lazy_numpy")
    observe(policy)
    X, y, W = _data()
    expected: list = []
    W_np = _softmax_regression(X, y, W, 6, expected)
    got: list = []
    W_lazy = _softmax_regression(lnp.asarray(X), y, lnp.asarray(W), 6, got)
    np.testing.assert_allclose([v for v, _ in got], [v for v, _ in expected], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(W_lazy), W_np, rtol=1e-12)
    compiles = [c for _, c in got]
    assert compiles[1] <= 2 and compiles[1:] == [compiles[1]] * 5, compiles


def test_value_policy_grows_the_graph(observe):
    """The old policy, kept as a setting: loop state stays pending, every sync compiles."""
    lnp = pytest.importorskip("lazy_numpy")
    observe("value")
    X, y, W = _data()
    got: list = []
    _softmax_regression(lnp.asarray(X), y, lnp.asarray(W), 4, got)
    assert [c for _, c in got] == [1, 2, 3, 4]


def test_torch_item_every_step(observe):
    torch = pytest.importorskip("torch")
    lazy_torch = pytest.importorskip("lazy_torch")
    observe("auto")

    def run(device):
        torch.manual_seed(0)
        w = torch.randn(5, 3).to(device)
        x = torch.randn(8, 5).to(device)
        out = []
        for _ in range(6):
            h = torch.tanh(x @ w)
            loss = (h * h).mean()
            out.append((loss.item(), lc.metrics.counters()["compiles"]))
            w = w - 0.1 * x.T @ (h * (1 - h * h)) / 8
        return out

    expected = run("cpu")
    got = run(lazy_torch.device())
    np.testing.assert_allclose([v for v, _ in got], [v for v, _ in expected], rtol=1e-5)
    compiles = [c for _, c in got]
    assert compiles[2:] == [compiles[1]] * 4, compiles


def test_tf_numpy_every_step(observe):
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    observe("auto")
    rng = np.random.default_rng(1)
    x0, w0 = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((5, 3))

    def run(convert):
        x, w = convert(x0), convert(w0.astype(np.float32))
        out = []
        for _ in range(5):
            h = tf.tanh(tf.matmul(x, w))
            loss = tf.reduce_mean(h * h)
            out.append((float(loss.numpy()), lc.metrics.counters()["compiles"]))
            w = w - 0.1 * tf.matmul(tf.transpose(x), h) / 8.0
        return out

    expected = run(tf.constant)
    got = run(ltf.convert_to_tensor)
    np.testing.assert_allclose([v for v, _ in got], [v for v, _ in expected], rtol=1e-5)
    compiles = [c for _, c in got]
    assert compiles[2:] == [compiles[1]] * 3, compiles


def _square(x):
    return lc.ops.mul(x, x)


def test_auto_leaves_a_dropped_temporary_pending(observe):
    """A value that shares no pending work with the observed one and carries none across
    a barrier is not computed by the observation ("live" computes it)."""
    observe("auto")
    a = lc.asarray(np.arange(4.0))
    big = _square(a)
    small = lc.ops.add(a, a)
    assert lc.to_numpy(small).tolist() == [0, 2, 4, 6]
    assert big.is_pending
    observe("live")
    other = lc.ops.add(a, a)
    assert lc.to_numpy(other).tolist() == [0, 2, 4, 6]
    assert not big.is_pending
    assert lc.to_numpy(big).tolist() == [0, 1, 4, 9]


def test_auto_computes_shared_work_and_carried_state(observe):
    observe("auto")
    a = lc.asarray(np.arange(3.0))
    shared = _square(a)
    seen = lc.ops.add(shared, a)   # shares ``shared``'s pending work
    counter = lc.ops.add(a, a)     # disjoint from ``seen``
    assert lc.to_numpy(seen).tolist() == [0, 2, 6]
    assert not shared.is_pending and counter.is_pending
    counter = lc.ops.add(counter, a)  # loop state: its graph was left pending before
    again = lc.ops.add(shared, a)
    lc.to_numpy(again)
    assert not counter.is_pending
    assert lc.to_numpy(counter).tolist() == [0, 3, 6]


def test_explicit_partial_sync_computes_what_it_names(observe):
    observe("live")
    a = lc.asarray(np.arange(3.0))
    x, y = _square(a), lc.ops.add(a, a)
    lc.sync([x])
    assert not x.is_pending and y.is_pending


def test_observe_setting_is_checked():
    with pytest.raises(ValueError, match="observe"):
        lc.configure(observe="sometimes")
