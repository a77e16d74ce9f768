"""View metadata (size, stride, storage offset) from PyTorch's own meta kernels.

Running the view op on a meta tensor with the source's layout gives exactly the
layout (and the errors, e.g. ``view`` of a non-contiguous tensor) eager PyTorch
would give. Results are cached per (op, layout, arguments): a training loop asks
the same questions every step.
"""

from __future__ import annotations

import torch

_CACHE: dict = {}


def freeze(v):
    kind = type(v)
    if kind is list or kind is tuple:
        for x in v:  # sizes and dims (all ints) are the common case: one frame, no genexpr
            if type(x) is not int:
                return tuple(map(freeze, v))
        return tuple(v)
    if isinstance(v, torch.Tensor):
        raise TypeError("tensor argument")
    return v


def _meta_like(t: torch.Tensor) -> torch.Tensor:
    size, stride, offset = tuple(t.shape), t.stride(), t.storage_offset()
    span = 1 + offset + sum((s - 1) * st for s, st in zip(size, stride, strict=True) if s > 0)
    if 0 in size:
        span = offset + 1
    return torch.empty(span, dtype=t.dtype, device="meta").as_strided(size, stride, offset)


def _layout(m: torch.Tensor, src: torch.Tensor):
    """(size, stride, offset, dtype), or None when the op returned a fresh tensor (no alias)."""
    if m.untyped_storage()._cdata != src.untyped_storage()._cdata:
        return None
    return tuple(m.shape), m.stride(), m.storage_offset(), m.dtype


def view_meta(func, t, args, kwargs):
    """(size, stride, offset, dtype) of ``func(t, *args, **kwargs)``, or a list for multi-output views;
    None where the op did not alias its input."""
    try:
        key = (id(func), t.shape, t.stride(), t.storage_offset(), t.dtype,  # _HANDLERS keeps ops
               freeze(args) if args else (),
               freeze(tuple(sorted(kwargs.items()))) if kwargs else ())
        hit = _CACHE.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit
    meta_args = [_meta_like(a) if isinstance(a, torch.Tensor) else a for a in args]
    src = _meta_like(t)
    out = func(src, *meta_args, **kwargs)
    result = [_layout(m, src) for m in out] if isinstance(out, list | tuple) else _layout(out, src)
    if key is not None:
        if len(_CACHE) > 65536:
            _CACHE.clear()
        _CACHE[key] = result
    return result
