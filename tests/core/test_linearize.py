"""``linearize`` replays the last program with the same root hashes; the replay must
never hide a difference in sharing, operands or leaves."""

from __future__ import annotations

import numpy as np

import lazycore as lc
from lazycore.lowering import _walk, linearize


def _data(*values):
    return [lc.asarray(np.asarray(v, np.float32)) for v in values]


def _same_program(a, b):
    assert a.key == b.key
    assert a.operand_positions == b.operand_positions
    assert a.input_positions == b.input_positions
    assert [n is m for n, m in zip(a.nodes, b.nodes, strict=True)] == [True] * len(a.nodes)


def test_replay_equals_a_fresh_walk():
    for _ in range(3):  # first call walks, later ones replay
        x, y = _data([1.0, 2.0], [3.0, 4.0])
        z = lc.ops.mul(lc.ops.add(x, y), x)
        w = lc.ops.sub(z, y)
        roots = [z.node, w.node]
        _same_program(linearize(roots), _walk(roots))


def test_sharing_differences_are_not_replayed():
    x, y = _data([1.0, 2.0], [3.0, 4.0])
    distinct = lc.ops.add(x, y)  # leaves hash by aval, so both roots hash alike
    shared = lc.ops.add(x, x)
    assert distinct.node.hash == shared.node.hash
    p1 = linearize([distinct.node])
    p2 = linearize([shared.node])
    assert p1.key != p2.key
    assert len(p1.inputs) == 2 and len(p2.inputs) == 1
    p3 = linearize([distinct.node])
    _same_program(p3, _walk([distinct.node]))


def test_root_listed_twice_and_interior_sharing():
    x, = _data([1.0, 2.0])
    h = lc.ops.exp(x)
    a = lc.ops.add(h, h)
    b = lc.ops.add(lc.ops.exp(x), lc.ops.exp(x))  # same hash as a, no interior sharing
    assert a.node.hash == b.node.hash
    pa, pb = linearize([a.node, a.node]), linearize([b.node, b.node])
    _same_program(pa, _walk([a.node, a.node]))
    _same_program(pb, _walk([b.node, b.node]))
    assert pa.key != pb.key


def test_loop_results_and_one_compile():
    w, = _data(np.ones(3))
    before = lc.metrics.counters().get("compiles", 0)
    for step in range(5):
        g = lc.ops.mul(w, lc.numeric.full((3,), 0.5, np.float32))
        w = lc.ops.sub(w, g)
        lc.sync([w])
        np.testing.assert_allclose(w.numpy(), np.full(3, 0.5 ** (step + 1)), rtol=1e-6)
    assert lc.metrics.counters().get("compiles", 0) - before <= 1


def test_program_key_hashes_once_and_pickles_without_its_hash():
    import pickle

    from lazycore.ir import Frozen, freeze

    x, y = _data([1.0, 2.0], [3.0, 4.0])
    program = linearize([lc.ops.add(x, y).node])
    assert isinstance(program.key, Frozen)
    assert hash(program.key) == hash(tuple(program.key))
    again = pickle.loads(pickle.dumps(program.key))
    assert again == program.key and "_hash" not in again.__dict__
    assert freeze(program.key) is program.key  # already frozen: passed through


def test_vjp_subprogram_attribute_is_frozen_once():
    from lazycore.ir import Frozen

    x, = _data([1.0, 2.0])
    y = lc.numeric.sum(lc.ops.mul(x, x))
    (g,) = lc.grad([y], [x])
    vjp_node = g.node.operands[0]
    assert isinstance(dict(vjp_node.attrs)["program"], Frozen)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
