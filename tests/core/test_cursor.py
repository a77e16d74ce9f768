"""The trace cursor (``lazycore.cursor``): a sync whose epoch repeats a recorded one takes
its program without walking the graph, and never when anything differs (sharing, leaves,
ops, roots, another thread)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import lazycore as lc
from lazycore import cursor, runtime, tiers
from lazycore.lowering import _walk


def _data(*values):
    return [lc.asarray(np.asarray(v, np.float32)) for v in values]


def _step(w, x):
    """One training-like step: ``w`` updated from a fresh batch ``x``."""
    g = lc.ops.mul(lc.ops.add(w, x), lc.numeric.full((3,), 0.5, np.float32))
    return lc.ops.sub(w, g)


def test_a_repeated_step_takes_its_program_and_computes_the_same(walks):
    w, = _data([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    for step in range(6):
        batch = np.full(3, step, np.float32)
        x, = _data(batch)
        w = _step(w, x)
        lc.sync()
        expected = expected - (expected + batch) * np.float32(0.5)
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    assert walks[0] == 2  # the first step records, the second finds the recording


def test_a_taken_program_equals_a_walk():
    cursor.reset()
    seen = []
    real = runtime.from_recording

    def check(entry, nodes, roots):
        program = real(entry, nodes, roots)
        fresh = _walk(roots)
        assert program.key == fresh.key
        assert program.operand_positions == fresh.operand_positions
        assert [a is b for a, b in zip(program.inputs, fresh.inputs, strict=True)] \
            == [True] * len(fresh.inputs)
        assert [a is b for a, b in zip(program.nodes, fresh.nodes, strict=True)] \
            == [True] * len(fresh.nodes)
        seen.append(program)
        return program

    runtime.from_recording = check
    try:
        w, = _data([1.0, 2.0, 3.0])
        for step in range(4):
            x, = _data(np.full(3, step, np.float32))
            w = _step(w, x)
            lc.sync()
    finally:
        runtime.from_recording = real
    assert len(seen) == 2


def test_other_leaf_sharing_is_never_taken(walks):
    """``x + y`` and ``x + x`` record the same hashes; the places tell them apart."""
    values = []
    for step in range(6):
        x, y = _data([1.0, 2.0], [10.0, 20.0])
        z = lc.ops.add(x, x if step >= 4 else y)
        lc.sync()
        values.append(z.numpy())
    for v in values[:4]:
        np.testing.assert_array_equal(v, [11.0, 22.0])
    for v in values[4:]:
        np.testing.assert_array_equal(v, [2.0, 4.0])


def test_an_epoch_of_the_same_length_with_other_nodes_is_never_taken(walks):
    """Recorded: x, y, x + y. Then x, x + x, -(x + x): as many nodes, one root place."""
    for step in range(6):
        x, y = _data([1.0, 2.0], [10.0, 20.0])
        if step < 3:
            z = lc.ops.add(x, y)
            want = [11.0, 22.0]
        else:
            z = lc.ops.neg(lc.ops.add(x, x))
            want = [-2.0, -4.0]
        del y
        lc.sync()
        np.testing.assert_array_equal(z.numpy(), want)


def test_other_interior_sharing_and_other_ops_are_never_taken(walks):
    for step in range(8):
        x, = _data([0.5, 1.0])
        if step % 4 < 2:
            h = lc.ops.exp(x)
            z = lc.ops.add(h, h)
        elif step % 4 == 2:
            z = lc.ops.add(lc.ops.exp(x), lc.ops.exp(x))
        else:
            z = lc.ops.add(lc.ops.exp(x), lc.ops.log(x))
        lc.sync()
        want = (2 * np.exp([0.5, 1.0]) if step % 4 < 3
                else np.exp([0.5, 1.0]) + np.log([0.5, 1.0]))
        np.testing.assert_allclose(z.numpy(), want, rtol=1e-6)


def test_pending_work_from_an_earlier_epoch_joins_the_epoch_and_is_taken(walks):
    """Loop state an observation leaves pending joins the next epoch when read (or
    computed), so such a step is taken too: generate()'s decoding loop is one."""
    for _ in range(4):
        x, y = _data([1.0, 2.0], [3.0, 4.0])
        left = lc.ops.mul(x, y)  # stays pending across the first sync
        first = lc.ops.add(x, y)
        lc.sync([first])
        z = lc.ops.add(left, first)  # reads pending work recorded before that sync
        lc.sync()
        np.testing.assert_array_equal(z.numpy(), [7.0, 14.0])
        np.testing.assert_array_equal(left.numpy(), [3.0, 8.0])
    assert walks[0] == 3  # each epoch recorded, then the first repeats before its link


def test_pending_work_an_earlier_sync_left_is_taken_when_computed(walks):
    """The same, when the carried value is a root of the sync and no op reads it."""
    for step in range(4):
        x, y = _data([1.0, 2.0], [3.0, step])
        left = lc.ops.exp(lc.ops.mul(x, y))
        first = lc.ops.add(x, y)
        lc.sync([first])
        lc.sync()
        np.testing.assert_allclose(left.numpy(), np.exp([3.0, 2.0 * step]), rtol=1e-6)
        np.testing.assert_array_equal(first.numpy(), [4.0, 2.0 + step])
    assert walks[0] == 3


def test_alternating_steps_are_both_taken(walks):
    w, = _data([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    for step in range(10):
        if step % 2:
            w = lc.ops.mul(w, lc.numeric.full((3,), 0.5, np.float32))
            expected = expected * np.float32(0.5)
        else:
            w = lc.ops.add(w, lc.numeric.full((3,), 1.0, np.float32))
            expected = expected + np.float32(1.0)
        lc.sync()
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    assert walks[0] <= 4


def test_other_roots_walk_and_keep_their_values(walks):
    for step in range(6):
        x, y = _data([1.0, 2.0], [3.0, 4.0])
        a = lc.ops.add(x, y)
        b = lc.ops.mul(x, y)
        if step >= 3:
            del b  # the same recording, one root fewer
        lc.sync()
        np.testing.assert_array_equal(a.numpy(), [4.0, 6.0])
    assert walks[0] == 3  # steps 0 and 1, then the first step with one root


def test_multi_output_ops_in_a_loop(walks):
    for _ in range(4):
        x, = _data([[3.0, 1.0, 2.0]])
        values, indices = lc.ops.top_k(lc.ops.add(x, x), k=2)
        lc.sync()
        np.testing.assert_array_equal(values.numpy(), [[6.0, 4.0]])
        np.testing.assert_array_equal(indices.numpy(), [[0, 2]])
    assert walks[0] == 2


def test_another_thread_makes_syncs_walk(walks):
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    w, = _data([1.0, 2.0, 3.0])
    for step in range(5):
        if step == 3:
            thread.start()
        x, = _data(np.zeros(3, np.float32))
        w = _step(w, x)
        lc.sync()
    stop.set()
    thread.join()
    assert walks[0] == 4  # steps 0, 1 walk; 2 is taken; 3 and 4 run beside a thread


def test_donation_on_a_taken_program(walks):
    w, = _data([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    for step in range(4):
        x, = _data(np.ones(3, np.float32))
        expected = expected - (expected + 1) * np.float32(0.5)
        old = w.node.value
        w = _step(w, x)
        lc.sync()
        if step >= 2:
            assert old.is_deleted()  # its buffer was donated to the output
    assert walks[0] == 2
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("tier", ["interpret", "auto", "compile"])
def test_tiers_run_taken_programs(walks, tier):
    previous = lc.settings.tier
    lc.configure(tier=tier)
    try:
        w, = _data([1.0, 2.0, 3.0])
        expected = np.array([1.0, 2.0, 3.0], np.float32)
        for step in range(5):
            x, = _data(np.full(3, step, np.float32))
            w = _step(w, x)
            lc.sync()
            expected = expected - (expected + np.float32(step)) * np.float32(0.5)
        tiers.wait_compiles()
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    finally:
        lc.configure(tier=previous)
    assert walks[0] == 2


def test_an_observation_in_a_loop_is_decided_once(walks, monkeypatch):
    """Each step reads its loss (an observation: the loop state is computed with it, a
    dropped temporary is not); repeated steps reuse that answer without a walk."""
    from lazycore import steps

    decided = [0]
    real = steps._walked

    def counting(observed, live_pending):
        decided[0] += 1
        return real(observed, live_pending)

    monkeypatch.setattr(steps, "_walked", counting)
    w, = _data([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    unread = None
    for step in range(6):
        x, = _data(np.full(3, step, np.float32))
        w = _step(w, x)
        unread = lc.ops.exp(x)  # pending, connected to nothing observed: left pending
        loss = lc.numeric.sum(lc.ops.mul(w, w))
        expected = expected - (expected + np.float32(step)) * np.float32(0.5)
        np.testing.assert_allclose(loss.numpy(), np.sum(expected * expected), rtol=1e-6)
        assert not w.is_pending  # computed with the observed loss
        assert unread.is_pending
    np.testing.assert_allclose(unread.numpy(), np.exp(np.full(3, 5.0)), rtol=1e-6)
    assert decided[0] <= 3


def test_dropped_traces_are_not_kept_by_the_epoch():
    """A trace nobody keeps (dropped before a sync that has nothing to run) must not stay
    alive in the epoch's node list."""
    import gc
    import weakref

    x, = _data([1.0, 2.0])
    lc.sync()
    chain = lc.ops.add(x, x)
    for _ in range(50):
        chain = lc.ops.mul(chain, x)
    probe = weakref.ref(chain.node)
    del chain
    lc.sync()  # nothing pending: nothing runs
    gc.collect()
    assert probe() is None
    assert cursor.EPOCH.nodes == []
