"""lazy_torch: PyTorch programs run lazily on lazycore (recorded, compiled by XLA).

>>> import torch, lazy_torch
>>> dev = lazy_torch.device()
>>> x = torch.arange(4.0, device=dev)
>>> (x * 2 + 1).tolist()          # observing a value syncs
[1.0, 3.0, 5.0, 7.0]
"""

from __future__ import annotations

import os

import torch as _torch

import lazycore as _lc

from . import (
    _device,
    _dispatch,  # noqa: F401 - binds LazyTensor's dispatcher
    _fastpath,
)
from ._tensor import LazyTensor
from .lowerings import LOWERINGS
from .lowerings.random import manual_seed as _seed_lazy

metrics = _lc.metrics

# float16/bfloat16 round after every op, as eager's kernels do: XLA's default keeps float32
# between fused ops ("excess precision"); read when JAX creates its CPU client
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_allow_excess_precision=false"
_lc.register_internal_path(os.path.dirname(os.path.abspath(__file__)))
_lc.register_internal_path(os.path.dirname(os.path.abspath(_torch.__file__)))
_DEVICE = _device.setup()
_fastpath.install()


def device(index: int = 0) -> _torch.device:
    """The lazy device (``device(type='lazy', index=0)``)."""
    if index != 0:
        raise ValueError("lazy_torch has one device (index 0)")
    return _DEVICE


def sync(wait: bool = False) -> None:
    """The step barrier: compute every live pending value (logged as cause ``explicit``)."""
    _lc.sync(wait=wait, cause="explicit")


def mark_step(wait: bool = False) -> None:
    """PyTorch/XLA's name for the step barrier (logged as cause ``mark_step``)."""
    _lc.sync(wait=wait, cause="mark_step")


def manual_seed(seed: int) -> None:
    """Seed lazy_torch's generator (``torch.manual_seed`` does this too)."""
    _seed_lazy(seed)


def core(t: LazyTensor) -> _lc.Tensor:
    """The ``lazycore.Tensor`` holding ``t``'s current value."""
    from ._tensor import read

    return read(t)


def mark_sharding(t: LazyTensor, mesh: _lc.Mesh, spec) -> LazyTensor:
    """Split ``t`` over a ``lazycore.Mesh`` (PyTorch/XLA's ``xs.mark_sharding``): one spec
    entry per dimension, a mesh axis name or index, a tuple of them, or None. In place;
    returns ``t``. See ``lazycore.mark_sharding`` and docs/scaling.md."""
    from ._errors import translate

    if not isinstance(t, LazyTensor):
        raise TypeError(f"mark_sharding expects a tensor on the lazy device, got {type(t)}")
    try:
        _lc.mark_sharding(core(t), mesh, spec)
    except _lc.LazyError as e:
        raise translate(e) from None
    return t


from . import debug  # noqa: E402

__all__ = ["LOWERINGS", "LazyTensor", "core", "debug", "device", "manual_seed", "mark_step",
           "metrics", "sync"]
__all__ += ["mark_sharding"]

from ._interop import from_lazy  # noqa: E402  (one trace across frontends)
from ._loader import DeviceLoader  # noqa: E402  (batches copied to the device ahead)

__all__ += ["DeviceLoader", "__version__"]
__version__ = "0.1.0"  # the release; pyproject.toml pins lazycore to the same
