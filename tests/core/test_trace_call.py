"""``trace.call`` builds a single-output op's node and handle inline (the per-op cost of
every frontend): they must be what ``Node(...)`` and ``Tensor(...)`` would build."""

from __future__ import annotations

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
