"""Element writes ``a[i, j] = scalar`` (issue 19, heat diffusion's initial disc): held
in the array's storage as host writes (no graph node per write) and applied as one
scatter when the array is next read. Every case runs the same code on NumPy and on
lazy_numpy, in each execution tier, and compares the arrays written into -- including
through views, where the write must reach every alias -- and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from lnp_testing import assert_same

import lazy_numpy as lnp
import lazycore as lc


def _both(program, *inputs):
    eager = [np.array(x) for x in inputs]
    lazy = [lnp.asarray(np.array(x)) for x in inputs]
    e_out = program(np, *eager)
    l_out = program(lnp, *lazy)
    for lv, ev in zip(lazy, eager, strict=True):
        assert_same(lv, ev)
    if e_out is not None:
        for lv, ev in zip(l_out, e_out, strict=True):
            assert_same(lv, ev)


def _disc(xp, u):
    """Hill's initial condition: cells inside a circle, one by one."""
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            if (i - 4.5) ** 2 + (j - 3.5) ** 2 < 9:
                u[i, j] = 700
    return (u * 2,)


def _mixed_values(xp, a):
    a[0, 0] = -0.0
    a[1, 2] = np.nan
    a[-1, -1] = np.float32(2.5)
    a[2, 1] = True
    a[np.int64(0), np.uint8(3)] = 7
    a[0, 0] = 3.0  # the later write to a position wins
    return (a + 0,)


def _read_between(xp, a):
    a[0, 0] = 1.0
    first = a.sum()
    a[0, 1] = 2.0
    snapshot = a.copy()
    a[0, 1] = 5.0
    pending = a * 10  # a value computed from a before the next write
    a[1, 1] = -1.0
    return first, snapshot, pending, a.sum()


def _through_views(xp, a):
    b = a[1:, ::2]
    b[0, 1] = 11.0          # a[1, 2]
    t = a.T
    t[3, 0] = 12.0          # a[0, 3]
    r = a.reshape(-1)
    r[5] = 13.0             # a[1, 1]
    f = a[::-1, ::-1]
    f[0, 0] = 14.0          # a[-1, -1]
    row = a[2]
    row[-1] = 15.0          # a[2, -1]
    return b + 0, t + 0, r + 0, f + 0, row + 0


def _view_then_owner(xp, a):
    b = a[1:3]
    a[1, 0] = -5.0          # the owner's write shows in the view
    c = b + 0
    b[1, 1] = -6.0          # and the view's in the owner
    return c, a + 0


def _overlapping_windows(xp, a):
    w = np.lib.stride_tricks.sliding_window_view(a[0], 3, writeable=True)
    w[0, 2] = 99.0          # one memory cell, seen by three windows
    return (w + 0,)


def _dtype_view(xp, a):
    v = a.view(np.int64)    # another dtype: the ordinary write path
    v[0, 0] = 1
    return (v + 0,)


def _ints(xp, a):
    a[0, 0] = 2.7           # truncates
    a[1, 1] = np.int64(-1)  # wraps (unsafe cast), no error
    a[2, 2] = 255
    return (a + 0,)


@pytest.mark.parametrize("program", [_disc, _mixed_values, _read_between, _through_views,
                                     _view_then_owner, _overlapping_windows, _dtype_view],
                         ids=lambda f: f.__name__)
def test_element_writes_match_numpy(program, tier):
    _both(program, np.arange(48, dtype=np.float64).reshape(8, 6))


def test_integer_and_complex_arrays(tier):
    _both(_ints, np.zeros((4, 4), np.uint8))
    _both(_mixed_values, np.zeros((4, 5), np.complex64))


def _error(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the exception is the result
            return type(e), str(e), [w.category for w in caught]
    return None, None, [w.category for w in caught]


@pytest.mark.parametrize(("dtype", "key", "value"), [
    (np.int8, (0, 0), 300),                 # OverflowError
    (np.int8, (0, 0), np.nan),              # ValueError: NaN to integer
    (np.float64, (0, 0), 1 + 2j),           # TypeError: complex to float
    (np.float64, (0, 0), np.complex128(1 + 2j)),  # ComplexWarning, imaginary part dropped
    (np.float64, (3, 0), 1.0),              # IndexError, NumPy's message
    (np.float64, (0, -4), 1.0),
    (np.int8, (9, 0), 300),                 # the index error comes first
])
def test_errors_and_warnings_are_numpys(dtype, key, value):
    e = np.zeros((3, 3), dtype)
    z = lnp.asarray(np.zeros((3, 3), dtype))

    def eager():
        e[key] = value

    def lazy():
        z[key] = value
    assert _error(lazy) == _error(eager)
    assert_same(z, e)


def test_read_only_destination():
    e = np.zeros((3, 3))
    e.setflags(write=False)
    z = lnp.asarray(np.zeros((3, 3)))
    z.setflags(write=False)
    for target in (e, z, np.broadcast_to(lnp.asarray(np.zeros(3)), (3, 3))):
        with pytest.raises(ValueError, match="read-only"):
            target[9, 0] = 300  # read-only comes before the index error, as NumPy's


def test_a_loop_of_writes_traces_one_scatter(counters):
    u = lnp.asarray(np.zeros((50, 50)))
    lc.sync()
    lnp.metrics.reset()
    for i in range(50):
        for j in range(0, 50, 2):
            u[i, j] = float(i + j)
    assert lnp.metrics.counters().get("traced_ops", 0) == 0  # nothing recorded yet
    total = float(u.sum())
    assert lnp.metrics.counters().get("traced_ops", 0) <= 5  # one scatter, one sum
    want = np.zeros((50, 50))
    for i in range(50):
        want[i, ::2] = i + np.arange(0, 50, 2)
    assert total == want.sum()


def test_equal_values_reuse_the_program(counters):
    """Positions and values are device data: a different disc does not recompile."""
    old = lc.settings.tier
    lc.configure(tier="compile")
    try:
        _run_twice()
    finally:
        lc.configure(tier=old)


def _run_twice():
    def run(value, shift):
        u = lnp.asarray(np.zeros((20, 20)))
        for i in range(5):
            u[i + shift, i] = value
        return np.asarray(u)
    run(3.0, 0)  # (0 and +-1 are baked constants: other values are parameters)
    lnp.metrics.reset()
    got = run(2.0, 3)
    assert lnp.metrics.counters().get("compiles", 0) == 0
    want = np.zeros((20, 20))
    want[np.arange(5) + 3, np.arange(5)] = 2.0
    np.testing.assert_array_equal(got, want)
