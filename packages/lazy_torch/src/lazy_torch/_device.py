"""The ``lazy`` device: PrivateUse1 renamed, plus Python kernels for allocation.

With these, ``torch.zeros(3, device="lazy")``, ``cpu_tensor.to("lazy")`` and
``module.to("lazy")`` produce ``LazyTensor``s. Factories that PyTorch implements as
"allocate, then fill in place" need only ``empty``; those implemented as
``out=`` kernels (arange, linspace, randperm) get direct kernels here.
"""

from __future__ import annotations

import torch

import lazycore as lc

from . import _tensor
from ._convert import cpu_to_core, np_dtype
from ._tensor import LazyTensor, to_cpu, wrap
from .lowerings import random as _random

_LIB = None


class _DeviceModule:
    """What ``torch.lazy`` answers (seeding, availability) for PyTorch's device hooks."""

    @staticmethod
    def is_initialized() -> bool:
        return True

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def _is_in_bad_fork() -> bool:
        return False

    @staticmethod
    def manual_seed_all(seed: int) -> None:
        _random.manual_seed(seed)

    manual_seed = manual_seed_all

    @staticmethod
    def synchronize(device=None) -> None:
        lc.wait()


def _dtype(dtype):
    return dtype if dtype is not None else torch.get_default_dtype()


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return wrap(lc.numeric.zeros(tuple(size), np_dtype(_dtype(dtype))))


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return wrap(lc.numeric.zeros(tuple(size), np_dtype(_dtype(dtype))))


def _copy_from(src, dst, non_blocking=False):
    if isinstance(dst, LazyTensor):
        from .lowerings.special import copy_

        copy_(None, (dst, src), {})
    else:
        with torch._C._DisableTorchDispatch():
            dst.copy_(to_cpu(src))
    return dst


def _host_factory(fn):
    """Factories whose exact values PyTorch defines (arange, linspace): computed on the
    host once and entered as device data."""
    def kernel(*args, dtype=None, layout=None, device=None, pin_memory=None, **kw):
        host = fn(*args, dtype=dtype, **kw)
        return wrap(cpu_to_core(host))
    return kernel


def _randperm(n, *, dtype=None, layout=None, device=None, pin_memory=None, generator=None):
    return wrap(_random.randperm(n, dtype or torch.int64))


def setup() -> torch.device:
    global _LIB
    if _LIB is not None:
        return _tensor.DEVICE
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    _setup_privateuseone_for_python_backend("lazy", backend_module=_DeviceModule())
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", _empty, "PrivateUse1")
    lib.impl("empty_strided", _empty_strided, "PrivateUse1")
    lib.impl("_copy_from", _copy_from, "PrivateUse1")
    lib.impl("arange.start_step", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("arange.start", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("arange", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("linspace", _host_factory(torch.linspace), "PrivateUse1")
    lib.impl("eye", _host_factory(torch.eye), "PrivateUse1")
    lib.impl("eye.m", _host_factory(torch.eye), "PrivateUse1")
    lib.impl("randperm", _randperm, "PrivateUse1")
    _LIB = lib
    _tensor.DEVICE = torch.device("lazy", 0)
    return _tensor.DEVICE

