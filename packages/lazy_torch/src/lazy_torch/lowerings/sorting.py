"""Sorting and selection: sort (stable), topk, fmax/fmin."""

from __future__ import annotations

import lazycore as lc

from .common import D, num, ops, promote, wrap_dim
from .registry import lower


def _sorted(x, d, descending):
    """Stable sort with indices along ``d``. NaN is the largest value, as eager's: first when
    descending (the core's descending sort puts NaN last), by a leading is-NaN key."""
    if not (descending and D.is_floating(x.dtype)):
        return num.sort_with_indices(x, d, descending=descending, stable=True)
    return ops.sort(num.isnan(x), x, ops.iota(dtype=D.int64, shape=x.shape, dimension=d),
                    dimension=d, is_stable=True, num_keys=2, descending=True)[1:]


@lower("sort.default", "sort.stable")
def sort(x, dim=-1, descending=False, *, stable=None):
    if isinstance(dim, bool):  # sort.stable(self, *, stable, dim, descending) positional form
        dim = -1
    if x.ndim == 0:
        return x, lc.scalar(0, D.int64)
    values, idx = _sorted(num.cast(x, D.uint8) if D.is_bool(x.dtype) else x, wrap_dim(dim, x.ndim),
                          descending)
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
    values, idx = _sorted(x, d, largest)
    cut = dict(start_indices=(0,) * x.ndim, limit_indices=(*x.shape[:d], k, *x.shape[d + 1:]))
    return ops.slice(values, **cut), ops.slice(idx, **cut)


lower("fmax.default", "prims.fmax.default")(lambda x, y: num.fmax(*promote([x, y])))
lower("fmin.default", "prims.fmin.default")(lambda x, y: num.fmin(*promote([x, y])))
