"""lazy_tf tests: TensorFlow's eager mode is the oracle.

oneDNN is switched off so eager TF's float results do not depend on its blocking.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import pytest  # noqa: E402
import tensorflow  # noqa: E402,F401

import lazy_tf  # noqa: E402,F401
import lazycore as lc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tf_helpers


@pytest.fixture
def metrics():
    lc.metrics.reset()
    yield lc.metrics
    lc.metrics.reset()
