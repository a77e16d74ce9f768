"""What the backward programs of ``lazycore.grad`` compute, besides their values: work
the gradient does not need must not be in them (oracle for values: ``jax.grad``)."""

import jax
import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore import ops

R = np.random.default_rng(0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward_runs_nothing_through_its_max(name):
    """The max softmax subtracts is under stop_gradient (the result does not depend on
    it), and a stop_gradient is a leaf of the backward: no max mask (compare) in it."""
    x, w = R.standard_normal((4, 6)), R.standard_normal((4, 6))
    tx = lc.asarray(x)
    loss = nm.sum(ops.mul(getattr(nm, name)(tx, -1), lc.asarray(w)))
    g, = lc.grad([loss], [tx])
    assert "compare" not in lc.debug.stablehlo_text([g])
    ref = jax.grad(lambda x: (getattr(jax.nn, name)(x, -1) * w).sum())(x)
    np.testing.assert_allclose(lc.to_numpy(g), ref, rtol=1e-12, atol=1e-15)


def test_stop_gradient_cuts_the_backward_but_keeps_its_value():
    x = R.standard_normal(5)
    tx = lc.asarray(x)
    y = ops.mul(ops.stop_gradient(ops.mul(tx, tx)), ops.sin(tx))  # d/dx: x^2 cos(x)
    g, = lc.grad([nm.sum(y)], [tx])
    np.testing.assert_allclose(lc.to_numpy(g), x * x * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(lc.to_numpy(y), x * x * np.sin(x), rtol=1e-12)
