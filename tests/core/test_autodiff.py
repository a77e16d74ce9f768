"""Reverse-mode autodiff over the IR (``lazycore.grad``) against finite differences/JAX."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore import ops

R = np.random.default_rng(0)


def A(x):
    return lc.asarray(x)


def test_grad_of_mlp_loss_matches_jax():
    x, w1, w2 = R.standard_normal((8, 5)), R.standard_normal((5, 7)), R.standard_normal((7, 3))
    y = np.array([0, 2, 1, 1, 0, 2, 2, 1])

    def lazy_loss(x, w1, w2):
        h = nm.relu(nm.matmul(x, w1))
        return nm.cross_entropy(nm.matmul(h, w2), A(y))

    def jax_loss(w1, w2):
        h = jax.nn.relu(x @ w1)
        logp = jax.nn.log_softmax(h @ w2)
        return -jnp.mean(logp[jnp.arange(8), y])

    tw1, tw2 = A(w1), A(w2)
    loss = lazy_loss(A(x), tw1, tw2)
    g1, g2 = lc.grad([loss], [tw1, tw2])
    r1, r2 = jax.grad(jax_loss, argnums=(0, 1))(w1, w2)
    np.testing.assert_allclose(lc.to_numpy(loss), jax_loss(w1, w2), rtol=1e-12)
    np.testing.assert_allclose(lc.to_numpy(g1), r1, rtol=1e-10)
    np.testing.assert_allclose(lc.to_numpy(g2), r2, rtol=1e-10)


def test_grad_with_respect_to_intermediate_and_output_grads():
    x = A(R.standard_normal(4))
    h = ops.exp(x)
    y = ops.mul(h, h)
    seed = A(np.array([1.0, 2.0, 3.0, 4.0]))
    (gh,) = lc.grad([y], [h], [seed])
    np.testing.assert_allclose(lc.to_numpy(gh), 2 * lc.to_numpy(h) * np.arange(1, 5.0))


def test_unconnected_and_integer_inputs_give_none():
    x, z = A(np.ones(3)), A(np.ones(3))
    k = A(np.arange(3))
    y = nm.sum(ops.sin(x))
    gx, gz, gk = lc.grad([y], [x, z, k])
    assert gz is None and gk is None
    np.testing.assert_allclose(lc.to_numpy(gx), np.cos(1.0))


def test_second_order():
    x = A(np.array([0.3, -1.2]))
    y = nm.sum(ops.mul(ops.mul(x, x), x))
    (g,) = lc.grad([y], [x])
    (gg,) = lc.grad([nm.sum(g)], [x])
    np.testing.assert_allclose(lc.to_numpy(gg), 6 * np.array([0.3, -1.2]))


def test_gradient_step_compiles_once():
    x = A(R.standard_normal((16, 4)))
    w = A(np.zeros((4, 1)))
    target = A(R.standard_normal((16, 1)))
    for _ in range(4):
        loss = nm.mse_loss(nm.matmul(x, w), target)
        (g,) = lc.grad([loss], [w])
        w.assign(ops.sub(w, ops.mul(g, lc.numeric.full(g.shape, 0.1, g.dtype))))
        del loss, g
        lc.sync()
    assert lc.metrics.counters()["compiles"] == 1


@pytest.mark.parametrize("fn", [
    lambda x: nm.sum(nm.getitem(nm.softmax(x, 1), (slice(None), 0))),
    lambda x: nm.sum(nm.getitem(x, (np.array([0, 0, 2]), slice(1, 3)))),
    lambda x: nm.logsumexp(nm.layer_norm(x, 1)),
    lambda x: nm.sum(nm.max_pool(nm.reshape(x, (1, 1, 3, 4)), 2)),
    lambda x: nm.sum(nm.top_k(x, 2, 1)[0]),
])
def test_grad_matches_finite_differences(fn):
    x0 = R.standard_normal((3, 4))
    t = A(x0)
    (g,) = lc.grad([fn(t)], [t])
    got = lc.to_numpy(g)
    eps = 1e-6
    fd = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        fd[idx] = (lc.to_numpy(fn(A(xp))) - lc.to_numpy(fn(A(xm)))) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6)


def test_grad_reads_forward_results(tmp_path):
    """The vjp reads the forward's results instead of re-running the forward for XLA's CSE
    to merge: CSE never merges an op with a region (the max, the sum), and XLA rewrites the
    vjp's copy of a softmax's divide (a divisor it shares) as a multiply, so everything
    after either ran twice. The compiled step computes ``exp`` and ``tanh`` once; values
    equal JAX's."""
    import re

    x_np, w_np = R.standard_normal((4, 6)), R.standard_normal((6, 3))

    def ref(x, w):
        return jnp.sum(jnp.tanh(jax.nn.softmax(x, axis=1) @ w))

    old = lc.settings.tier, lc.settings.dump_dir
    lc.configure(tier="compile")
    lc.settings.dump_dir = str(tmp_path)
    try:
        x, w = A(x_np), A(w_np)
        loss = nm.sum(ops.tanh(nm.matmul(nm.softmax(x, 1), w)))
        got = [lc.to_numpy(t) for t in lc.grad([loss], [x, w]) + [loss]]
    finally:
        lc.tiers.wait_compiles()
        lc.configure(tier=old[0])
        lc.settings.dump_dir = old[1]
    want = list(jax.grad(ref, argnums=(0, 1))(x_np, w_np)) + [ref(x_np, w_np)]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    hlo = "".join(p.read_text() for p in tmp_path.glob("*.hlo.txt"))
    assert [len(re.findall(rf"= \S+ {op}\(", hlo)) for op in ("exponential", "tanh")] == [1, 1]
