"""The spmd_scaling benchmark's steps run on the 8 simulated devices and agree.

(tests/bench runs the whole benchmark, child process included, in --quick mode.)"""

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import lazycore as lc  # noqa: E402
from benchmarks import spmd_scaling  # noqa: E402


@pytest.mark.parametrize("devices", [1, 8])
def test_lazycore_step_matches_jax_and_compiles_once(devices):
    sizes = spmd_scaling.config(quick=True)["sizes"]
    batch = 4 * devices
    lazy = spmd_scaling.lazycore_step(sizes, devices, batch)
    ref = spmd_scaling.jax_step(sizes, devices, batch)
    lc.metrics.reset()
    lazy_losses = [lazy() for _ in range(3)]
    ref_losses = [ref() for _ in range(3)]
    np.testing.assert_allclose(lazy_losses, ref_losses, rtol=1e-5)
    assert lazy_losses[-1] < lazy_losses[0]
    assert lc.metrics.counters()["compiles"] == 1

