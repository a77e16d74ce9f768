"""The cross-frontend protocol and DLPack exchange."""

import numpy as np
import pytest

import lazycore as lc
from lazycore import interop, ops


class FrontendTensor:
    """A stand-in frontend type implementing the protocol."""

    def __init__(self, core):
        self._core = core

    def __lazycore_tensor__(self):
        return self._core


def test_adopt_shares_the_pending_value_without_a_sync():
    x = lc.asarray(np.arange(4.0))
    pending = ops.exp(x)
    other = interop.adopt(FrontendTensor(pending))
    assert other.is_pending and other.node is pending.node
    y = ops.add(other, other)
    assert lc.metrics.counters()["syncs"] == 0
    np.testing.assert_allclose(lc.to_numpy(y), 2 * np.exp(np.arange(4.0)))
    assert lc.metrics.counters()["executions"] == 1


def test_unwrap_and_errors():
    t = lc.asarray(np.ones(2))
    assert interop.unwrap(t) is t
    assert interop.unwrap(np.ones(2)) is None
    with pytest.raises(TypeError):
        interop.adopt(np.ones(2))


def test_dlpack_round_trip():
    host = np.arange(6.0).reshape(2, 3)
    x = interop.from_dlpack(host)
    np.testing.assert_array_equal(lc.to_numpy(ops.mul(x, x)), host * host)
    view = interop.host_array(x)
    np.testing.assert_array_equal(view, host)
    np.testing.assert_array_equal(np.from_dlpack(interop.to_dlpack_capsule_source(x)), host)
