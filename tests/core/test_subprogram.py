"""``lazycore.subprogram``: a graph captured once, called as one node."""

import numpy as np
import pytest

import lazycore as lc


def _capture(fn, *avals, generator=None):
    phs = [lc.subprogram.placeholder(a) for a in avals]
    with lc.subprogram.capturing() as captured:
        outs = fn(*phs)
    return lc.subprogram.Subprogram(phs, list(outs), generator, captured.checks)


def test_call_is_one_node_and_matches_the_ops():
    x = lc.asarray(np.arange(3.0))
    prog = _capture(lambda a: (lc.ops.mul(lc.ops.add(a, a), a), a), x.aval)
    out, same = prog(x)
    assert out.node.operands[0].op == "call"
    assert lc.to_numpy(out).tolist() == [0.0, 2.0, 8.0]
    assert lc.to_numpy(same).tolist() == [0.0, 1.0, 2.0]
    y = lc.asarray(np.array([1.0, -1.0, 0.5]))
    before = lc.metrics.counters()["traced_ops"]
    (out2, _) = prog(y)
    assert lc.metrics.counters()["traced_ops"] - before == 1  # the call (tuple_gets are free)
    assert lc.to_numpy(out2).tolist() == [2.0, 2.0, 0.5]


def test_placeholder_has_no_value():
    def observe_placeholder():
        ph = lc.subprogram.placeholder(lc.Aval((2,), np.dtype("float32")))
        try:
            lc.to_numpy(lc.ops.add(ph, ph))
        except lc.subprogram.CaptureError as e:
            # without its traceback: its frames hold the value over ``ph`` in a cycle
            # with this frame, alive (and failing later syncs) until the GC runs
            return e.with_traceback(None)
        finally:
            del ph  # a live value over a placeholder would fail every later sync

    assert isinstance(observe_placeholder(), lc.subprogram.CaptureError)


def test_random_draws_are_fresh_each_call():
    gen = lc.random.Generator(3)
    x = lc.asarray(np.zeros(256, np.float32))
    prog = _capture(lambda a: (lc.ops.add(a, gen.uniform((256,))),), x.aval, generator=gen)
    (a,), (b,) = prog(x), prog(x)
    assert not np.array_equal(lc.to_numpy(a), lc.to_numpy(b))

    def without_generator():
        try:
            _capture(lambda a: (lc.ops.add(a, gen.uniform((256,))),), x.aval)
        except lc.subprogram.CaptureError as e:
            return str(e)

    assert "no generator" in without_generator()


def test_data_checks_are_rearmed_per_call():
    def take(idx):
        lc.checks.index_in_range(idx, 3, IndexError, "index out of range", op="take")
        return (lc.ops.mul(idx, idx),)

    prog = _capture(take, lc.Aval((2,), np.dtype("int64")))
    (good,) = prog(lc.asarray(np.array([0, 2])))
    assert lc.to_numpy(good).tolist() == [0, 4]
    (bad,) = prog(lc.asarray(np.array([0, 5])))
    with pytest.raises(IndexError, match="index out of range"):
        lc.sync()


def test_a_value_known_without_the_placeholders_is_observable_while_capturing():
    """A bound computed from static shapes (``tf.shape(x)[1]`` in a tutorial's positional
    embedding) is read while the graph is captured: the observation computes only it,
    not the live values over placeholders, and takes none of the capture's checks
    (they stay the capture's, re-armed per call), nor the checks pending before it."""
    outer = lc.asarray(np.array([0, 7]))
    lc.checks.index_in_range(outer, 3, IndexError, "outer index", op="take")
    seen = []

    def body(idx):
        lc.checks.index_in_range(idx, 3, IndexError, "index out of range", op="take")
        doubled = lc.ops.mul(idx, idx)  # live, over the placeholder
        bound = lc.numeric.getitem(lc.constant(np.array([4, 2], np.int64)), 1)
        seen.append(int(lc.to_numpy(lc.ops.add(bound, bound))))
        return (doubled,)

    prog = _capture(body, lc.Aval((2,), np.dtype("int64")))
    assert seen == [4]
    assert len(prog._checks) == 1
    with pytest.raises(IndexError, match="outer index"):  # the check pending before it
        lc.sync()
    (good,) = prog(lc.asarray(np.array([0, 2])))
    assert lc.to_numpy(good).tolist() == [0, 4]
    prog(lc.asarray(np.array([0, 5])))
    with pytest.raises(IndexError, match="index out of range"):
        lc.sync()


def test_a_value_leaked_from_a_capture_fails_only_where_observed():
    """A value made inside a captured graph and kept after it (a Keras layer's activity
    loss in ``layer.losses``, TF's out-of-scope symbolic tensors) raises ``CaptureError``
    when observed, and never stops other values: full syncs and observations compute
    everything else (before, every later sync raised)."""
    kept = []

    def body(a):
        kept.append(lc.ops.mul(a, a))
        return (lc.ops.add(a, a),)

    prog = _capture(body, lc.Aval((2,), np.dtype("float32")))
    (out,) = prog(lc.asarray(np.array([1.0, 2.0], np.float32)))
    other = lc.ops.mul(out, out)
    lc.sync()
    assert lc.to_numpy(other).tolist() == [4.0, 16.0]
    assert lc.to_numpy(lc.ops.add(out, out)).tolist() == [4.0, 8.0]

    def observe_leaked():
        try:
            lc.to_numpy(lc.ops.add(kept.pop(), out))
        except lc.subprogram.CaptureError as e:
            return e.with_traceback(None)  # its frames would keep the leaked value alive

    assert isinstance(observe_leaked(), lc.subprogram.CaptureError)
