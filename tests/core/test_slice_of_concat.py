"""A slice whose window lies inside one operand of a pending ``concatenate`` reads that
operand (``ops/shape.py``): the program no longer holds the concatenation, the values
are the same. ``generate()`` reads ``input_ids[:, -1]`` right after growing it by one
column; without this its program changed with the sequence's length."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc
from lazycore import ops
from lazycore.lowering import linearize


def _ops_in(tensor) -> list[str]:
    return [node.op for node in linearize([tensor.node]).nodes]


def _slice(x, lo, hi, strides=None):
    return ops.slice(x, start_indices=lo, limit_indices=hi, strides=strides)


A = np.arange(12, dtype=np.float32).reshape(2, 6)
B = -np.arange(4, dtype=np.float32).reshape(2, 2)
C = np.full((2, 1), 7.0, np.float32)


def _cat():
    """A pending ``cat([a, neg(b)], 1)`` grown by ``neg(c)``: nested, 9 columns."""
    a, b, c = lc.asarray(A), lc.asarray(B), lc.asarray(C)
    inner = ops.concatenate(a, ops.neg(b), dimension=1)
    return ops.concatenate(inner, ops.neg(c), dimension=1)


WANT = np.concatenate([A, -B, -C], axis=1)


@pytest.mark.parametrize("lo, hi, strides, cats", [
    ((0, 8), (2, 9), None, 0),           # the last column: the grown one alone
    ((1, 6), (2, 8), None, 0),           # inside the inner concat's second operand
    ((0, 1), (2, 6), (1, 2), 0),         # strided, inside the first operand
    ((0, 5), (2, 7), None, 2),           # across the inner operands: kept as it is
    ((0, 7), (2, 9), None, 2),           # across the outer operands: both kept
    ((0, 3), (2, 3), None, 2),           # empty: left as it is
], ids=["last", "nested", "strided", "across_inner", "across_outer", "empty"])
def test_slice_reads_the_operand_holding_its_window(lo, hi, strides, cats):
    got = _slice(_cat(), lo, hi, strides)
    assert _ops_in(got).count("concatenate") == cats
    want = WANT[tuple(slice(a, b, s) for a, b, s in zip(lo, hi, strides or (1, 1), strict=True))]
    np.testing.assert_array_equal(lc.to_numpy(got), want)


def test_a_computed_concatenation_is_sliced_as_it_is():
    x = _cat()
    np.testing.assert_array_equal(lc.to_numpy(x), WANT)  # computed: one buffer to read
    got = _slice(x, (0, 8), (2, 9))
    assert got.node.operands[0] is x.node
    np.testing.assert_array_equal(lc.to_numpy(got), WANT[:, 8:9])


def test_a_bad_window_raises_the_rule_error():
    with pytest.raises(lc.ShapeError, match="slice"):
        _slice(_cat(), (0, 8), (2, 10))
    with pytest.raises(lc.ShapeError, match="slice"):
        _slice(_cat(), (0,), (2,))
