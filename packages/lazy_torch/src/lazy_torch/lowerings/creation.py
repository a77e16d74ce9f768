"""Factories that take a tensor (``*_like``, ``new_*``) or build scalars/ranges."""

from __future__ import annotations

import lazycore as lc

from .common import default_float, num, to_np
from .registry import lower


def _dtype(x, dtype):
    return to_np(dtype) if dtype is not None else x.dtype


def on_lazy(device) -> bool:
    import torch

    return device is None or torch.device(device).type == "lazy"


def _factory(fill=None, sized=False):
    """``*_like`` (``x``'s shape) or ``new_*`` (``sized``: the size argument) filled with
    ``fill``, or with the fill argument (``full_like``, ``new_full``) when it is None."""
    def build(x, *args, dtype=None, device=None, **_):  # layout, pin_memory, memory_format
        if not on_lazy(device):
            return NotImplemented
        shape = tuple(args[0]) if sized else x.shape
        return num.full(shape, args[sized] if fill is None else fill, _dtype(x, dtype))
    return build


lower("full_like.default")(_factory())
lower("zeros_like.default")(_factory(0))
lower("ones_like.default")(_factory(1))
lower("new_zeros.default")(_factory(0, sized=True))
lower("new_ones.default")(_factory(1, sized=True))
lower("new_full.default")(_factory(sized=True))
lower("prims.full_like.default")(_factory())  # requires_grad


@lower("scalar_tensor.default", "prims.scalar_tensor.default")
def scalar_tensor(value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return lc.scalar(value, to_np(dtype) if dtype is not None else default_float())


@lower("prims.full.default")
def prims_full(shape, fill_value, *, dtype, device=None, requires_grad=False):
    return num.full(tuple(shape), fill_value, to_np(dtype))
