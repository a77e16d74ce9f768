"""Array creation: full/zeros/ones, arange, linspace, eye, tri."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex, is_integer
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full


def zeros(shape, dtype) -> Tensor:
    return full(shape, 0, dtype)


def ones(shape, dtype) -> Tensor:
    return full(shape, 1, dtype)


def arange(start, stop=None, step=1, dtype=None, length=None, *, work_dtype=None) -> Tensor:
    """``start + step * iota`` (computed in ``work_dtype``: by default int64, float64 or
    complex128; then cast); the length is
    static: ``length``, or from ``stop`` as NumPy computes it."""
    if length is not None:
        n = int(length)
        if dtype is None:
            dtype = np.result_type(start, step)
    else:
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ValueError("step must be nonzero")
        if dtype is None:
            dtype = np.result_type(start, stop, step)
        n = max(0, math.ceil((stop - start) / step))
    dtype = canonical(dtype)
    work = work_dtype or (np.int64 if is_integer(dtype) else
                          np.complex128 if is_complex(dtype) else np.float64)
    idx = ops.iota(dtype=work, shape=(n,), dimension=0)
    # iota itself when it is the answer (exactly): arange(n), a mask's 7 per generate() token
    out = idx if start == 0 and step == 1 else ops.add(
        ops.mul(idx, full((n,), step, idx.dtype)), full((n,), start, idx.dtype))
    return cast(out, dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=np.float64) -> Tensor:
    dtype = canonical(dtype)
    div = (num - 1) if endpoint else num
    idx = ops.iota(dtype=np.float64, shape=(num,), dimension=0)
    if num == 1 or div == 0:
        return cast(full((num,), start, np.float64), dtype)
    step = (stop - start) / div
    out = ops.add(ops.mul(idx, full((num,), step, np.float64)), full((num,), start, np.float64))
    if endpoint and num > 1:  # pin the last point exactly
        last = ops.eq(idx, full((num,), num - 1, np.float64))
        out = ops.select(last, full((num,), stop, np.float64), out)
    if is_integer(dtype):
        out = ops.floor(out)
    return cast(out, dtype)


def eye(n: int, m: int | None = None, k: int = 0, dtype=np.float64) -> Tensor:
    m = n if m is None else m
    rows = ops.iota(dtype=np.int64, shape=(n, m), dimension=0)
    return cast(ops.eq(ops.add(rows, full((n, m), k, np.int64)),
                       ops.iota(dtype=np.int64, shape=(n, m), dimension=1)), dtype)


def tri_mask(n: int, m: int, k: int = 0, upper: bool = False) -> Tensor:
    """Boolean mask of the lower (``j <= i + k``) or upper (``j >= i + k``) triangle."""
    rows = ops.iota(dtype=np.int64, shape=(n, m), dimension=0)
    cols = ops.iota(dtype=np.int64, shape=(n, m), dimension=1)
    shifted = ops.add(rows, full((n, m), k, np.int64))
    return ops.ge(cols, shifted) if upper else ops.le(cols, shifted)


def triangle(x: Tensor, k: int = 0, upper: bool = False) -> Tensor:
    """``tril``/``triu`` over the last two axes."""
    n, m = x.shape[-2], x.shape[-1]
    return ops.select(broadcast_to(tri_mask(n, m, k, upper), x.shape), x, full(x.shape, 0, x.dtype))


def band_part(x: Tensor, lower: int, upper: int) -> Tensor:
    """``x`` with zeros outside the band of ``lower`` sub- and ``upper`` super-diagonals
    of its last two axes (a negative count keeps that whole triangle)."""
    n, m = x.shape[-2:]
    diff = ops.sub(ops.iota(dtype=np.int64, shape=(n, m), dimension=0),
                   ops.iota(dtype=np.int64, shape=(n, m), dimension=1))  # i - j
    keep = full((n, m), True, np.bool_)
    if lower >= 0:
        keep = ops.bitwise_and(keep, ops.le(diff, full((n, m), lower, np.int64)))
    if upper >= 0:
        keep = ops.bitwise_and(keep, ops.ge(diff, full((n, m), -upper, np.int64)))
    return ops.select(broadcast_to(keep, x.shape), x, full(x.shape, 0, x.dtype))
