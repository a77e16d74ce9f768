"""``trace.call`` builds a single-output op's node and handle inline (the per-op cost of
every frontend): they must be what ``Node(...)`` and ``Tensor(...)`` would build."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lazycore as lc
from lazycore import runtime
from lazycore.ir import Node


@pytest.mark.parametrize("build", [
    lambda a, b: lc.ops.add(a, b),
    lambda a, b: lc.ops.exp(a),
    lambda a, b: lc.ops.lt(a, b),
    lambda a, b: lc.ops.reshape(a, new_sizes=(2, 3)),
    lambda a, b: lc.ops.select(lc.ops.lt(a, b), a, b),
], ids=["binary", "unary", "bool_out", "attrs", "ternary"])
def test_inline_node_and_handle_match_the_constructors(build):
    a = lc.asarray(np.arange(6, dtype=np.float32))
    b = lc.asarray(np.ones(6, np.float32))
    out = build(a, b)
    node = out.node
    again = Node(node.op, node.operands, node.attrs, node.aval)
    assert node.hash == again.hash
    assert node.value is None and node.aval == again.aval
    assert out.seq > a.seq and out.seq > b.seq
    assert any(r() is out for r in runtime._live)  # registered: a sync computes it
    np.testing.assert_allclose(lc.to_numpy(out), lc.to_numpy(build(a, b)))


def test_rule_errors_name_the_op():
    a = lc.asarray(np.ones(3, np.float32))
    b = lc.asarray(np.ones(4, np.float32))
    with pytest.raises(lc.ShapeError, match="add"):
        lc.ops.add(a, b)
    with pytest.raises(lc.DTypeError, match="bitwise|and|integer|bool"):
        lc.ops.get("and")(a, a)


def test_shape_rules_run_once_per_op_avals_and_attributes(monkeypatch):
    """``trace.call`` remembers a rule's result per (op, avals, attributes): a loop's
    repeated slice runs the rule once; other avals or attributes run it again; a failing
    call raises every time and is not remembered; unhashable attributes still trace."""
    op = lc.ops.slice
    calls = []
    monkeypatch.setattr(importlib.import_module("lazycore.trace"), "_RULES", {})

    def counting(*avals, **attrs):
        calls.append(attrs)
        return rule(*avals, **attrs)

    rule = op.rule
    object.__setattr__(op, "rule", counting)  # a frozen OpDef: patched for this test only
    try:
        x = lc.asarray(np.arange(12.0).reshape(3, 4))
        key = dict(start_indices=(1, 0), limit_indices=(3, 2), strides=(1, 1))
        a, b = op(x, **key), op(x, **key)
        assert len(calls) == 1 and a.node.hash == b.node.hash
        op(x, **{**key, "limit_indices": (3, 3)})
        op(lc.asarray(np.zeros((3, 5))), **key)
        assert len(calls) == 3
        for _ in range(2):
            with pytest.raises(lc.ShapeError, match="slice"):
                op(x, start_indices=(0, 0), limit_indices=(4, 1), strides=(1, 1))
        assert len(calls) == 5
        c = op(x, start_indices=[1, 0], limit_indices=np.array([3, 2]), strides=(1, 1))
        assert c.node.hash == a.node.hash and c.node.attrs == a.node.attrs
        np.testing.assert_array_equal(lc.to_numpy(c), np.arange(12.0).reshape(3, 4)[1:, :2])
    finally:
        object.__setattr__(op, "rule", rule)
