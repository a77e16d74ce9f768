"""``lazy_torch.DeviceLoader``: PyTorch/XLA's ``MpDeviceLoader`` over ``lazycore.DeviceLoader``."""

from __future__ import annotations

import torch

import lazycore as lc

from ._convert import cpu_to_numpy
from ._tensor import LazyTensor, wrap


def _to_host(leaf):
    if isinstance(leaf, torch.Tensor) and not isinstance(leaf, LazyTensor):
        return cpu_to_numpy(leaf)
    return None  # lazy tensors, labels, ints pass through


def DeviceLoader(loader, batches_per_execution: int = 1, *, prefetch: int = 2):  # noqa: N802
    """Iterate ``loader`` (a ``DataLoader`` or any iterable of CPU tensor batches) with
    each tensor already on the lazy device, copied by a background thread while the
    previous step runs; ``lazy_torch.mark_step()`` runs every ``batches_per_execution``
    batches and at the end.

    >>> import torch, lazy_torch
    >>> data = [(torch.full((2,), float(i)), torch.tensor(i)) for i in range(3)]
    >>> [(x.device.type, float(x.sum()), int(y)) for x, y in lazy_torch.DeviceLoader(data)]
    [('lazy', 0.0, 0), ('lazy', 2.0, 1), ('lazy', 4.0, 2)]
    """
    return lc.DeviceLoader(loader, batches_per_execution=batches_per_execution,
                           prefetch=prefetch, to_host=_to_host,
                           wrap=lambda t: wrap(t, fresh=True),
                           barrier=lambda: lc.sync(cause="mark_step"))
