"""8 simulated CPU devices for this directory (its own pytest process, see noxfile).

XLA reads the flag when jax initialises its backends, so it is set at import time,
before anything imports jax."""

import os
import sys

_FLAG = "--xla_force_host_platform_device_count=8"
if _FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _FLAG).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import pytest  # noqa: E402

import lazycore as lc  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))  # helper modules next to the tests


def pytest_collection_modifyitems(config, items):
    if len(jax.devices()) < 8:  # jax was initialised before this conftest ran
        skip = pytest.mark.skip(reason="needs 8 devices: run tests/sharding in its own process")
        for item in items:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fresh_metrics():
    lc.metrics.reset()
    yield
