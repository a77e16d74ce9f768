import os
import sys

import numpy as np
import pytest

import lazycore as lc


@pytest.fixture(autouse=True)
def _fresh_metrics():
    lc.metrics.reset()
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)

# helper modules (op_records) live next to the tests; importlib mode needs the path
sys.path.insert(0, os.path.dirname(__file__))
