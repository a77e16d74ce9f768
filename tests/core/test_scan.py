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
