"""``getitem`` with keys of Python ints and slices (the plan kept per shape and key,
issue 19): every such key of a grid against NumPy, errors included, and the same keys
read from arrays of different shapes."""

from __future__ import annotations

import itertools

import numpy as np

import lazycore as lc

BOUNDS = (None, 0, 1, -1, 2, -3, 5, -7)
STEPS = (None, 1, 2, -1, -2, 3)
SLICES = [slice(a, b, c) for a, b, c in itertools.product(BOUNDS, BOUNDS, STEPS)]


def _check_all(x: np.ndarray, keys) -> None:
    """Every key read lazily in one program, against NumPy (IndexError alike)."""
    t = lc.asarray(x)
    lazy = []
    for key in keys:
        try:
            want = x[key]
        except IndexError:
            try:
                lc.numeric.getitem(t, key)
            except IndexError:
                continue
            raise AssertionError(f"{key}: NumPy raised IndexError, lazy did not") from None
        lazy.append((key, want, lc.numeric.getitem(t, key)))
    lc.sync([g for _, _, g in lazy])
    for key, want, got in lazy:
        got = lc.to_numpy(got)
        assert got.shape == want.shape and got.dtype == want.dtype, key
        np.testing.assert_array_equal(got, want, err_msg=str(key))


def test_one_axis_every_slice():
    _check_all(np.arange(6.0), SLICES + [0, 5, -1, -6, 6, -7])


def test_two_axes_and_reuse_across_shapes():
    rng = np.random.default_rng(0)
    rows, cols = SLICES[::7] + [0, -1, 3], SLICES[:6] + [1, -2]
    for shape in ((4, 5), (7, 3), (1, 9)):
        keys = list(itertools.product(rows, cols)) + [(0, 0, 0), ()]
        _check_all(rng.standard_normal(shape), keys)
    _check_all(np.array(2.5), [(), 0])
