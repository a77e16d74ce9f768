"""Sorting and selection: sort (stable), topk, fmax/fmin."""

from __future__ import annotations

import lazycore as lc

from .common import D, num, ops, promote, wrap_dim
from .registry import lower


@lower("sort.default", "sort.stable")
def sort(x, dim=-1, descending=False, *, stable=None):
    if isinstance(dim, bool):  # sort.stable(self, *, stable, dim, descending) positional form
        dim = -1
    if x.ndim == 0:
        return x, lc.scalar(0, D.int64)
    d = wrap_dim(dim, x.ndim)
    keys = num.cast(x, D.uint8) if D.is_bool(x.dtype) else x
    values, idx = num.sort_with_indices(keys, d, descending=descending, stable=True)
    return num.cast(values, x.dtype), idx


@lower("topk.default")
def topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - ATen name
    if x.ndim == 0:
        if k > 1:
            raise RuntimeError("selected index k out of range")
        return x, lc.scalar(0, D.int64)
    d = wrap_dim(dim, x.ndim)
    if not 0 <= k <= x.shape[d]:
        raise RuntimeError("selected index k out of range")
    values, idx = num.sort_with_indices(x, d, descending=largest, stable=True)
    starts, limits = [0] * x.ndim, list(x.shape)
    limits[d] = k
    cut = dict(start_indices=tuple(starts), limit_indices=tuple(limits))
    return ops.slice(values, **cut), ops.slice(idx, **cut)


@lower("fmax.default", "prims.fmax.default")
def fmax(x, y):
    return num.fmax(*promote([x, y]))


@lower("fmin.default", "prims.fmin.default")
def fmin(x, y):
    return num.fmin(*promote([x, y]))
