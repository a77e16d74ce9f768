"""The core's writes at flat positions (issue 19): ``Storage``'s held element writes,
``write_elements``, ``write_positions`` (writes through views, overlapping ones) and
``masked_assign`` (``x[mask] = v`` without a count), against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc
from lazycore import views
from lazycore.composites.indexing import write_elements


def _host(t):
    return lc.to_numpy(t)


def _bits_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


def test_storage_holds_element_writes_until_read():
    x = lc.asarray(np.arange(12.0).reshape(3, 4))
    s = views.Storage(x)
    lc.metrics.reset()
    s.write_element(5, np.float64(-0.0))
    s.write_element(0, np.float64(np.nan))
    s.write_element(5, np.float64(7.0))  # the later write wins
    assert s.version == 3
    assert lc.metrics.counters().get("traced_ops", 0) == 0
    want = np.arange(12.0).reshape(3, 4)
    want.flat[5], want.flat[0] = 7.0, np.nan
    _bits_equal(_host(s.value), want)
    s.write_element(1, np.float64(2.0))
    s.value = lc.asarray(np.zeros((3, 4)))  # a whole new value drops the held writes
    _bits_equal(_host(s.value), np.zeros((3, 4)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.bool_, np.complex64])
def test_write_elements_keeps_every_bit(dtype):
    base = np.zeros(7, dtype)
    values = np.array([-0.0, 0.0, np.nan, 1.0, -1.0, 0.0, 3.0]).astype(dtype) \
        if np.dtype(dtype).kind in "fc" else np.array([1, 0, 1, 1, 0, 1, 1]).astype(dtype)
    writes = {int(p): values[k] for k, p in enumerate([6, 0, 3, 2, 5, 1, 4])}
    got = _host(write_elements(lc.asarray(base), writes))
    want = base.copy()
    for p, v in writes.items():
        want[p] = v
    _bits_equal(got, want)
    same = {1: np.array(-0.0, dtype)[()], 4: np.array(-0.0, dtype)[()]}  # one parameter
    want = base.copy()
    want[[1, 4]] = -0.0
    _bits_equal(_host(write_elements(lc.asarray(base), same)), want)


def test_write_positions_distinct_and_overlapping():
    x = np.arange(10.0)
    pos = np.array([[1, 2, 3], [2, 3, 4], [3, 4, 5]])  # windows of 3 over x[1:6]
    child = x[pos].copy()
    child[0, 2] = 99.0      # memory cell 3, seen by three windows; the others unchanged
    got = _host(lc.numeric.write_positions(lc.asarray(x), pos, lc.asarray(child), last_changed=True))
    want = x.copy()
    want[3] = 99.0
    _bits_equal(got, want)
    child[2, 0] = -0.0      # a later changed element of the same cell wins
    got = _host(lc.numeric.write_positions(lc.asarray(x), lc.asarray(pos), lc.asarray(child),
                                    last_changed=True))
    want[3] = -0.0
    _bits_equal(got, want)
    flat = _host(lc.numeric.write_positions(lc.asarray(x.reshape(2, 5)), np.array([9, 0]),
                                     lc.asarray(np.array([5, 6], np.int32))))
    _bits_equal(flat, np.array([[6.0, 1, 2, 3, 4], [5, 6, 7, 8, 5]]))


def test_masked_assign():
    x = np.arange(12.0).reshape(3, 4)
    mask = np.array([True, False, True])
    for value in (np.array(-1.0), np.array([10.0, 20, 30, 40]), np.array([[7.0, 8, 9, 0]])):
        want = x.copy()
        want[mask] = value
        got = _host(lc.numeric.masked_assign(lc.asarray(x), lc.asarray(mask), lc.asarray(value)))
        _bits_equal(got, want)
    full = -x
    want = np.where(mask[:, None], full, x)
    got = _host(lc.numeric.masked_assign(lc.asarray(x), lc.asarray(mask), lc.asarray(full),
                                         full_shape=True))
    _bits_equal(got, want)
    ints = lc.numeric.masked_assign(lc.asarray(x.astype(np.int32)), lc.asarray(mask),
                                    lc.asarray(np.array(2.9)))
    assert _host(ints).dtype == np.int32 and _host(ints)[0, 0] == 2

