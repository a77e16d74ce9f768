"""``lazy_numpy.DeviceLoader``: NumPy batches as device-resident lazy arrays."""

from __future__ import annotations

import lazycore as lc

from ._array import LazyArray


def DeviceLoader(batches, batches_per_execution: int = 1, *, prefetch: int = 2):  # noqa: N802
    """Iterate ``batches`` (NumPy arrays or nests of them) as ``LazyArray`` values copied
    to the device by a background thread while the previous step runs; ``sync()`` runs
    every ``batches_per_execution`` batches and at the end.

    >>> import numpy as np, lazy_numpy as lnp
    >>> [float(b.sum()) for b in lnp.DeviceLoader([np.ones(2), np.zeros(2)])]
    [2.0, 0.0]
    """
    return lc.DeviceLoader(batches, batches_per_execution=batches_per_execution,
                           prefetch=prefetch, wrap=LazyArray)
