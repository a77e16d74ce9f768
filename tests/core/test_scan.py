"""The core's ``scan`` op: a loop recorded as one node, in both execution tiers."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc
from lazycore.loops import scan


def _body(carry, x, consts):
    h = lc.ops.add(lc.ops.mul(carry[0], consts[0]), x[0])
    return [h], [lc.ops.mul(h, h)]


def _reference(xs, w, reverse):
    h, ys = np.zeros(xs.shape[1]), [None] * len(xs)
    for t in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        h = h * w + xs[t]
        ys[t] = h * h
    return h, np.stack(ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_a_python_loop(tier, reverse):
    xs = np.arange(12.0).reshape(4, 3)
    w = np.full(3, 0.5)
    (last,), (ys,) = scan(_body, [lc.asarray(np.zeros(3))], [lc.asarray(xs)],
                          [lc.asarray(w)], reverse=reverse)
    assert ys.node.operands[0].op == "scan"
    want_last, want_ys = _reference(xs, w, reverse)
    np.testing.assert_allclose(lc.to_numpy(last), want_last)
    np.testing.assert_allclose(lc.to_numpy(ys), want_ys)


def test_ys_are_stacked_in_input_order_when_reversed():
    xs = lc.asarray(np.arange(8.0).reshape(4, 2))
    (last,), (ys,) = scan(lambda c, x, k: ([lc.ops.add(c[0], x[0])], [c[0]]),
                          [lc.asarray(np.zeros(2))], [xs], reverse=True)
    np.testing.assert_array_equal(lc.to_numpy(last), [12.0, 16.0])
    np.testing.assert_array_equal(lc.to_numpy(ys), [[12, 15], [10, 12], [6, 7], [0, 0]])


def test_body_must_keep_carry_avals():
    xs = lc.asarray(np.zeros((4, 2)))
    with pytest.raises(lc.ShapeError, match="changed a carry"):
        scan(lambda c, x, k: ([x[0]], []), [lc.asarray(np.zeros(3))], [xs])
    with pytest.raises(lc.ShapeError, match="loop length"):
        scan(lambda c, x, k: (c, []), [], [xs, lc.asarray(np.zeros((3, 2)))])


def test_body_that_draws_random_numbers_is_refused():
    """A key made while tracing the body is made once, so every step would repeat one
    draw: the loop raises rather than returning one value where a Python loop gives many."""
    gen = lc.random.Generator(0)
    xs = lc.asarray(np.zeros((4, 2), np.float32))

    def noisy(carry, x, consts):
        return [lc.ops.add(carry[0], gen.uniform((2,)))], []

    with pytest.raises(lc.ShapeError, match="draws random numbers"):
        scan(noisy, [lc.asarray(np.zeros(2, np.float32))], [xs])
    noise = gen.uniform((4, 2))  # drawn outside as a sequence: a different draw per step
    (last,), _ = scan(lambda c, x, k: ([lc.ops.add(c[0], x[0])], []),
                      [lc.asarray(np.zeros(2, np.float32))], [noise])
    np.testing.assert_allclose(lc.to_numpy(last), lc.to_numpy(noise).sum(0), rtol=1e-6)


def _rnn(c, x, k):
    h = lc.ops.tanh(lc.ops.add(lc.ops.mul(c[0], k[0]), x[0]))
    return [h, lc.ops.add(c[1], h)], [lc.ops.mul(h, h)]


@pytest.mark.parametrize("reverse", [False, True])
def test_grad_of_a_scan_reuses_the_forward_loop(tmp_path, reverse):
    """``grad`` through a scan equals JAX's gradient of ``lax.scan`` and runs the loop's
    backward from the forward loop's saved residuals: the compiled program holds two
    ``while`` loops (forward, backward), not a second forward run inside the vjp."""
    import re

    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    xs_np, w_np, h_np = (rng.normal(size=s).astype(np.float32) for s in [(5, 3), 3, 3])
    old = lc.settings.tier, lc.settings.dump_dir
    lc.configure(tier="compile")
    lc.settings.dump_dir = str(tmp_path)
    try:
        xs, w, h = lc.asarray(xs_np), lc.asarray(w_np), lc.asarray(h_np)
        (last, s), (ys,) = scan(_rnn, [h, lc.ops.mul(h, h)], [xs], [w], reverse=reverse)
        loss = lc.ops.reduce_sum(lc.ops.add(lc.ops.reduce_sum(ys, axes=(0,)),
                                            lc.ops.mul(s, last)), axes=(0,))
        grads = lc.grad([loss], [xs, w, h])
        got = [lc.to_numpy(t) for t in grads + [loss]]
    finally:
        lc.tiers.wait_compiles()
        lc.configure(tier=old[0])
        lc.settings.dump_dir = old[1]

    def ref(xs, w, h):
        def step(c, x):
            n = jnp.tanh(c[0] * w + x)
            return (n, c[1] + n), n * n
        (last, s), ys = jax.lax.scan(step, (h, h * h), xs, reverse=reverse)
        return jnp.sum(ys.sum(0) + s * last)

    want = list(jax.grad(ref, argnums=(0, 1, 2))(xs_np, w_np, h_np)) + [ref(xs_np, w_np, h_np)]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    hlo = [p.read_text() for p in tmp_path.glob("*.hlo.txt")]
    assert len(hlo) == 1
    assert len(re.findall(r"= .*\bwhile\(", hlo[0])) == 2


def test_backward_of_a_scan_does_not_redo_the_steps_matmul(tmp_path):
    """The forward loop saves each step's matrix products for the backward (JAX's vjp
    residuals, checkpointed to the dots): a recurrent step ``h @ w`` costs one dot forward
    and two backward (``dh``, ``dw``), as in TF's and JAX's own loop gradients. Before,
    the backward loop re-ran each step's body, a fourth dot."""
    import re

    rng = np.random.default_rng(1)
    xs_np = rng.normal(size=(6, 4, 8)).astype(np.float32)
    w_np = (rng.normal(size=(8, 8)) * 0.3).astype(np.float32)
    old = lc.settings.tier, lc.settings.dump_dir
    lc.configure(tier="compile")
    lc.settings.dump_dir = str(tmp_path)
    try:
        xs, w = lc.asarray(xs_np), lc.asarray(w_np)
        body = lambda c, x, k: ([lc.ops.tanh(lc.ops.add(lc.numeric.matmul(c[0], k[0]), x[0]))],
                                [])
        (last,), _ = scan(body, [lc.asarray(np.zeros((4, 8), np.float32))], [xs], [w])
        loss = lc.ops.reduce_sum(lc.ops.mul(last, last), axes=(0, 1))
        got = [lc.to_numpy(t) for t in lc.grad([loss], [xs, w])]
    finally:
        lc.tiers.wait_compiles()
        lc.configure(tier=old[0])
        lc.settings.dump_dir = old[1]
    import jax
    import jax.numpy as jnp

    def ref(xs, w):
        last, _ = jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), None), jnp.zeros((4, 8)), xs)
        return jnp.sum(last * last)

    for a, b in zip(got, jax.grad(ref, argnums=(0, 1))(xs_np, w_np), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    (hlo,) = [p.read_text() for p in tmp_path.glob("*.hlo.txt")]
    assert len(re.findall(r"= \S+ dot\(", hlo)) == 3
