"""What a cache-hit sync keeps and does: nothing of the graph it ran outlives it (the
site history kept the last program's nodes, so the next sync there freed that graph,
and its buffers, before its own run)."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import lazycore as lc


def test_a_sync_keeps_no_node_of_the_program_it_ran(walks):
    x = lc.asarray(np.array([0.5, 1.0], np.float32))
    for step in range(4):  # walked, recorded, then taken from the recording
        y = lc.ops.exp(x)
        inner = weakref.ref(y.node)
        z = lc.ops.add(y, x)
        del y
        lc.sync()
        gc.collect()
        assert inner() is None, step
        np.testing.assert_allclose(z.numpy(), np.exp([0.5, 1.0]) + [0.5, 1.0], rtol=1e-6)
    assert walks[0] == 2
