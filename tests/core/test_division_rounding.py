"""A quotient is rounded once, as NumPy/torch/TF divide, in both execution tiers. XLA's
algebraic simplifier rewrites compiled quotients by a broadcast, sqrt, exp, pow or another
quotient into reciprocal products or reassociated quotients (one ulp off), and a floor or
an integer cast of such a quotient gives another integer: ``floor(t / 0.1)`` for times
on a 0.1 grid is the binning idiom this broke. Each pattern is checked bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc

ops = lc.ops


def _bcast(t, shape):
    return ops.broadcast_in_dim(t, shape=shape, broadcast_dimensions=())


def _first(t):
    return ops.reshape(ops.slice(t, start_indices=(0,), limit_indices=(1,), strides=None),
                       new_sizes=())


def _exp(v):
    return ops.exp(lc.asarray(v)).numpy()


# name -> (lazy program over (x, y, z), NumPy program over the same arrays)
PATTERNS = {
    "by a scalar": (lambda x, y, z: ops.div(x, _bcast(_first(y), x.shape)), lambda x, y, z: x / y[0]),
    "by sqrt": (lambda x, y, z: ops.div(x, ops.sqrt(y)), lambda x, y, z: x / np.sqrt(y)),
    # XLA's exp is not NumPy's to the ulp: the oracle divides by the exp the tier computed
    "exp by exp": (lambda x, y, z: ops.div(ops.exp(z), ops.exp(y)),
                   lambda x, y, z: _exp(z) / _exp(y)),
    "quotient by z": (lambda x, y, z: ops.div(ops.div(x, y), z), lambda x, y, z: x / y / z),
    "by a quotient": (lambda x, y, z: ops.div(x, ops.div(y, z)), lambda x, y, z: x / (y / z)),
    "by pow": (lambda x, y, z: ops.div(x, ops.pow(y, z)), lambda x, y, z: x / y ** z),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(PATTERNS))
def test_quotients_round_once_in_both_tiers(tier, name, dtype):
    rng = np.random.RandomState(0)
    x = (rng.randn(4096) * 3).astype(dtype)
    y = (rng.rand(4096) * 3 + 0.1).astype(dtype)
    z = (rng.rand(4096) + 0.5).astype(dtype)
    lazy, eager = PATTERNS[name]
    for _ in range(2):  # the second sync runs the cached program
        got = lazy(lc.asarray(x), lc.asarray(y), lc.asarray(z)).numpy()
        np.testing.assert_array_equal(got, eager(x, y, z), err_msg=name)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_floor_of_a_grid_over_its_step_is_the_grid_index(tier, dtype):
    step = np.asarray(0.1, dtype)
    grid = (np.arange(3000) * step).astype(dtype)
    bins = ops.floor(ops.div(lc.asarray(grid), _bcast(lc.asarray(step), grid.shape)))
    np.testing.assert_array_equal(bins.numpy(), np.floor(grid / step))
