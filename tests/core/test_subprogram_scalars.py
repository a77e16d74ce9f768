"""A sub-program's traced Python scalars (params) reach it as one device vector per dtype:
few operands per call, no host packing at the sync, and the same program for new values."""

import numpy as np

import lazycore as lc
from lazycore.numeric import full

F32, F64 = np.dtype("float32"), np.dtype("float64")


def _capture(scale: float, shift: float, bias: float):
    """x * scale + shift + 1 (float32 fills; the 1 a const), and x as float64 times bias."""
    ph = lc.subprogram.placeholder(lc.Aval((4,), F32))
    with lc.subprogram.capturing() as captured:
        y = lc.ops.add(lc.ops.add(lc.ops.mul(ph, full((4,), scale, F32)), full((4,), shift, F32)),
                       full((4,), 1.0, F32))
        z = lc.ops.mul(lc.ops.convert(ph, dtype=F64), full((4,), bias, F64))
    return lc.subprogram.Subprogram([ph], [y, z], None, captured.checks)


def _expected(x, scale, shift, bias):
    return x * np.float32(scale) + np.float32(shift) + np.float32(1), x.astype(F64) * bias


def test_scalars_are_one_vector_per_dtype_and_values_match():
    x_host = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    program = _capture(0.5, 2.5, 3.0)
    ops = sorted(t.node.op for t in program._leaves)
    assert ops == ["const", "data", "data"]  # the 1.0; float32 and float64 vectors
    for _ in range(3):  # repeated calls, in one step and across syncs
        y, z = program(lc.asarray(x_host))
        want_y, want_z = _expected(x_host, 0.5, 2.5, 3.0)
        np.testing.assert_array_equal(lc.to_numpy(y), want_y)
        np.testing.assert_array_equal(lc.to_numpy(z), want_z)


def test_new_scalar_values_give_the_same_program():
    x_host = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    first, second = _capture(0.5, 2.5, 3.0), _capture(-4.0, 0.125, 7.0)
    assert hash(first._spec) == hash(second._spec) and first._spec == second._spec
    lc.sync()
    tier = lc.settings.tier
    lc.configure(tier="compile")
    try:
        compiles = []
        for program, values in ((first, (0.5, 2.5, 3.0)), (second, (-4.0, 0.125, 7.0)),
                                (first, (0.5, 2.5, 3.0))):
            y, z = program(lc.asarray(x_host))
            lc.sync()
            compiles.append(lc.metrics.counters()["compiles"])
            want_y, want_z = _expected(x_host, *values)
            np.testing.assert_array_equal(lc.to_numpy(y), want_y)
            np.testing.assert_array_equal(lc.to_numpy(z), want_z)
        assert compiles[0] == compiles[1] == compiles[2]  # one executable for all values
    finally:
        lc.configure(tier=tier)
