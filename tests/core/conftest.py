import os
import sys

import numpy as np
import pytest

import lazycore as lc
from lazycore import cursor, runtime


@pytest.fixture(autouse=True)
def _fresh_metrics():
    lc.metrics.reset()
    yield


@pytest.fixture
def walks(monkeypatch):
    """Counts syncs that walked (``linearize``) instead of taking a recorded program."""
    count = [0]
    real = runtime.linearize

    def counting(roots):
        count[0] += 1
        return real(roots)

    monkeypatch.setattr(runtime, "linearize", counting)
    cursor.reset()
    return count


@pytest.fixture
def rng():
    return np.random.default_rng(0)

# helper modules (op_records) live next to the tests; importlib mode needs the path
sys.path.insert(0, os.path.dirname(__file__))
