"""pytest setup for the lazy_numpy suite: makes ``lnp_testing`` importable
(the repo runs pytest with ``--import-mode=importlib``) and provides fixtures."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lazy_numpy as lnp  # noqa: E402


@pytest.fixture
def counters():
    """Metrics counters reset for the test."""
    lnp.metrics.reset()
    return lnp.metrics.counters
