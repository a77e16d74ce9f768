"""Node hashes tell apart attributes Python's ``hash`` confuses: ``hash(-1) == hash(-2)``,
so before ``ir.attrs_hash`` a ``pad`` by -1 and one by -2 got the same node hash, the
same program key and trace-cursor signature, and a later sync ran the other's program
(wrong shape and values, no error). Each case alternates the two attribute values over
syncs in both execution tiers and checks every result against NumPy."""

from __future__ import annotations

import numpy as np

import lazycore as lc
from lazycore.ir import Node, attrs_hash


def test_pad_by_minus_one_and_minus_two_run_their_own_programs(tier):
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for lo in (-1, -2, -1, -2, -1):
        t = lc.asarray(x)
        y = lc.ops.pad(lc.ops.mul(t, t), lc.asarray(np.float32(0)),
                       padding_config=((0, 0, 0), (lo, 0, 0)))
        np.testing.assert_array_equal(y.numpy(), (x * x)[:, -lo:])


def test_numbers_enter_the_hash_by_type_and_sign():
    # Attributes equal under ``==`` (0.0 and -0.0, 1 and 1.0) share the memo entry as
    # they shared the dict keys before; scalars that differ that way travel as params.
    pairs = [((("v", -1),), (("v", -2),)), ((("v", -1.0),), (("v", -2.0),)),
             ((("v", True),), (("v", 2),)), ((("v", ((-1, 0, 0),)),), (("v", ((-2, 0, 0),)),))]
    for a, b in pairs:
        assert attrs_hash(a) != attrs_hash(b), (a, b)
    assert attrs_hash((("v", -1),)) == attrs_hash((("v", -1),))
    leaf = Node("param", (), (), lc.ir.Aval((2,), np.dtype(np.float32)))
    assert (Node("neg", (leaf,), (("k", -1),), leaf.aval).hash
            != Node("neg", (leaf,), (("k", -2),), leaf.aval).hash)
