"""Factories that take a tensor (``*_like``, ``new_*``) or build scalars/ranges."""

from __future__ import annotations

import lazycore as lc

from .common import default_float, num, to_np
from .registry import lower


def _dtype(x, dtype):
    return to_np(dtype) if dtype is not None else x.dtype


def _on_lazy(device) -> bool:
    import torch

    return device is None or torch.device(device).type == "lazy"


@lower("full_like.default")
def full_like(x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(x.shape, fill_value, _dtype(x, dtype))


@lower("zeros_like.default")
def zeros_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(x.shape, 0, _dtype(x, dtype))


@lower("ones_like.default")
def ones_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(x.shape, 1, _dtype(x, dtype))


@lower("new_zeros.default")
def new_zeros(x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(tuple(size), 0, _dtype(x, dtype))


@lower("new_ones.default")
def new_ones(x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(tuple(size), 1, _dtype(x, dtype))


@lower("new_full.default")
def new_full(x, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if not _on_lazy(device):
        return NotImplemented
    return num.full(tuple(size), fill_value, _dtype(x, dtype))


@lower("scalar_tensor.default", "prims.scalar_tensor.default")
def scalar_tensor(value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return lc.scalar(value, to_np(dtype) if dtype is not None else default_float())


@lower("prims.full.default")
def prims_full(shape, fill_value, *, dtype, device=None, requires_grad=False):
    return num.full(tuple(shape), fill_value, to_np(dtype))


@lower("prims.full_like.default")
def prims_full_like(x, fill_value, *, dtype, device=None, requires_grad=False):
    return num.full(x.shape, fill_value, to_np(dtype))

