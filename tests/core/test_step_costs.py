"""A compiled step's fixed costs: a sub-program call records its outputs in one batch
(memoized ``tuple_get`` hashes and signatures, one slice comparison with the trace
cursor's recording), its repeated steps take their program without a walk, and a
known non-tracing thread (tqdm's monitor) neither stops that nor donation."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import lazycore as lc
from lazycore import cursor
from lazycore.ir import Node


def _capture(fn, *avals):
    phs = [lc.subprogram.placeholder(a) for a in avals]
    with lc.subprogram.capturing() as captured:
        outs = fn(*phs)
    return lc.subprogram.Subprogram(phs, list(outs), None, captured.checks)


def _chain(n):
    """A sub-program with ``n`` outputs: the running products and sums of two inputs."""
    def body(x, y):
        outs, a = [], x
        for i in range(n):
            a = lc.ops.add(a, y) if i % 2 else lc.ops.mul(a, y)
            outs.append(a)
        return outs
    aval = lc.Aval((3,), np.dtype("float32"))
    return _capture(body, aval, aval)


def _expected(x, y, n):
    outs, a = [], x
    for i in range(n):
        a = a + y if i % 2 else a * y
        outs.append(a)
    return outs


def test_outputs_are_the_nodes_a_plain_record_builds():
    prog = _chain(5)
    outs = prog(lc.asarray(np.ones(3, np.float32)), lc.asarray(np.ones(3, np.float32)))
    call = outs[0].node.operands[0]
    for i, t in enumerate(outs):
        node = t.node
        plain = Node("tuple_get", (call,), (("index", i),), call.aval[i])
        assert (node.op, node.attrs, node.aval, node.hash) == (plain.op, plain.attrs,
                                                               plain.aval, plain.hash)
        assert node.operands[0] is call and node.idx == call.idx + 1 + i
    assert len({t.seq for t in outs}) == 5


def test_a_loop_of_calls_is_taken_and_computes_the_ops(walks):
    prog = _chain(40)
    x = lc.asarray(np.array([1.0, 2.0, 0.5], np.float32))
    y = lc.asarray(np.array([0.5, 1.0, 1.5], np.float32))
    host_x, host_y = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.5, 1.0, 1.5], np.float32)
    for _ in range(5):
        outs = prog(x, y)
        expected = _expected(host_x, host_y, 40)
        x = outs[1]  # loop state: one output; the rest are read
        lc.sync()
        for got, want in zip(outs, expected, strict=True):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        host_x = expected[1]
    # the first epoch also holds the capture's ops; then two steps walk, the rest are taken
    assert walks[0] == 3


def test_other_calls_in_the_same_places_diverge_and_compute_their_own(walks):
    """A recording expects one sub-program's outputs; a step that calls another of the
    same size in the same place must neither take the first's program nor misplace the
    outputs (the batch comparison falls back to node-by-node divergence)."""
    a, b = _chain(6), _capture(lambda x, y: [lc.ops.sub(x, y)] * 3 + [lc.ops.mul(x, x)] * 3,
                               *[lc.Aval((3,), np.dtype("float32"))] * 2)
    x = lc.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    y = lc.asarray(np.array([2.0, 2.0, 2.0], np.float32))
    for prog in (a, a, a, b, a, b, b):
        outs = prog(x, y)
        lc.sync()
        got = [t.numpy() for t in outs]
        want = (_expected(x.numpy(), y.numpy(), 6) if prog is a
                else [x.numpy() - y.numpy()] * 3 + [x.numpy() * x.numpy()] * 3)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_calls_on_pending_work_from_an_earlier_epoch(walks):
    """A call whose input was left pending by the previous sync taints the epoch: its
    outputs are recorded into a sink, and the sync walks and computes them."""
    prog = _chain(4)
    x = lc.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    left = lc.ops.add(x, x)
    lc.sync([x])  # computes nothing: ``left`` stays pending across this barrier
    other = lc.ops.mul(x, x)
    lc.sync([other])
    outs = prog(left, x)
    lc.sync()
    want = _expected(np.array([2.0, 4.0, 6.0], np.float32), np.array([1.0, 2.0, 3.0]), 4)
    for g, w in zip(outs, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w)


@pytest.mark.parametrize("name, quiet", [("tqdm_monitor", True), ("user-thread", False)])
def test_only_known_quiet_threads_keep_the_cursor_and_donation(walks, name, quiet):
    previous = lc.settings.tier
    lc.configure(tier="compile")  # the interpreter donates nothing
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True, name=name)
    thread.start()
    try:
        w = lc.asarray(np.array([1.0, 2.0, 3.0], np.float32))
        deleted = []
        for _ in range(4):
            old = w.node.value
            w = lc.ops.sub(w, lc.ops.mul(w, lc.asarray(np.full(3, 0.5, np.float32))))
            lc.sync()
            deleted.append(old.is_deleted())
    finally:
        stop.set()
        thread.join()
        lc.configure(tier=previous)
    np.testing.assert_allclose(w.numpy(), np.array([1.0, 2.0, 3.0]) / 16, rtol=1e-6)
    assert walks[0] == (2 if quiet else 4)
    assert deleted[-1] is quiet  # the old weights' buffer went to the new ones


def test_a_batch_that_differs_from_the_recording_is_recorded_from_there():
    """``cursor.record_many``'s fallback: the batch compared node by node, the epoch
    recorded from the first difference."""
    cursor.reset()
    ep = cursor.EPOCH
    nodes = [Node("param", (), (), lc.Aval((), np.dtype("float32"))) for _ in range(3)]
    try:
        rec = cursor.Recording([("a",), ("x",), ("c",)])
        ep.rec, ep.expected, ep.sigs = rec, rec.expected, None
        cursor.record_many(nodes, [("a",), ("b",), ("c",)])
        assert ep.expected is None and ep.sigs == [("a",), ("b",), ("c",)]
        assert ep.nodes == nodes
        ep.nodes = []
        short = cursor.Recording([("a",), ("b",)])  # the batch runs past its end
        ep.rec, ep.expected, ep.sigs = short, short.expected, None
        cursor.record_many(nodes, [("a",), ("b",), ("c",)])
        assert ep.expected is None and ep.sigs == [("a",), ("b",), ("c",)]
    finally:
        cursor.reset()
