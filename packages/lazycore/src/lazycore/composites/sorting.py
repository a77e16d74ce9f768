"""Sort / argsort along an axis, top-k along an axis, membership (``isin``)."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import is_integer
from ..tensor import Tensor
from ..trace import constant
from .broadcasting import broadcast_to, cast, full, promote, where
from .elementwise import mixed_sign_compare
from .indexing import host_index, one_hot, take
from .manipulation import moveaxis, reshape
from .reductions import any as any_
from .reductions import normalize_axes


def sort(x: Tensor, axis=-1, descending: bool = False, stable: bool = True) -> Tensor:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.ndim == 0:
        return x
    (a,) = normalize_axes(axis, x.ndim)
    (out,) = ops.sort(x, dimension=a, is_stable=stable, descending=descending)
    return out


def argsort(x: Tensor, axis=-1, descending: bool = False, stable: bool = True,
            index_dtype=np.int64) -> Tensor:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.ndim == 0:
        return ops.reshape(ops.iota(dtype=index_dtype, shape=(1,), dimension=0),
                           new_sizes=())
    (a,) = normalize_axes(axis, x.ndim)
    _, out = ops.sort(x, ops.iota(dtype=index_dtype, shape=x.shape, dimension=a), dimension=a,
                      is_stable=stable, num_keys=1, descending=descending)
    return out


def sort_with_indices(x: Tensor, axis=-1, descending=False, stable=True, index_dtype=np.int64):
    (a,) = normalize_axes(axis, x.ndim)
    return ops.sort(x, ops.iota(dtype=index_dtype, shape=x.shape, dimension=a), dimension=a,
                    is_stable=stable, num_keys=1, descending=descending)


def top_k(x: Tensor, k: int, axis: int = -1, largest: bool = True):
    """(values, int64 indices) of the ``k`` largest (or smallest) along ``axis``."""
    (a,) = normalize_axes(axis, x.ndim)
    moved = moveaxis(x, a, -1) if a != x.ndim - 1 else x
    if largest:
        values, indices = ops.top_k(moved, k=k)
    else:
        values, indices = ops.top_k(ops.neg(moved), k=k)
        values = ops.neg(values)
    indices = ops.convert(indices, dtype=np.int64)
    if a != x.ndim - 1:
        values, indices = moveaxis(values, -1, a), moveaxis(indices, -1, a)
    return values, indices


def quantile(x: Tensor, q, axis=None, keepdims: bool = False) -> Tensor:
    """Quantiles ``q`` (host values in [0, 1], any shape) along ``axis`` by linear
    interpolation between the sorted neighbours (NumPy's default method, PyTorch's
    ``"linear"``); a NaN in a slice makes its quantiles NaN. The quantile axes come
    first; integers compute in float64. Needs a non-empty slice."""
    q_arr = np.asarray(q, dtype=np.float64)
    acc = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = cast(x, acc)
    ndim = x.ndim
    if axis is None:
        x, ax, axes = reshape(x, (-1,)), 0, None
    else:
        axes = normalize_axes(axis, x.ndim)
        rest = [i for i in range(x.ndim) if i not in axes]
        x = ops.transpose(x, permutation=tuple(rest + list(axes)))
        x = reshape(x, tuple(x.shape[:len(rest)]) + (-1,))
        ax = x.ndim - 1
    n = x.shape[ax]
    s = sort(x, ax)
    pos = q_arr * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    lo_v = take(s, host_index(lo.reshape(-1)), ax)
    hi_v = take(s, host_index(hi.reshape(-1)), ax)
    shape = [1] * s.ndim
    shape[ax] = lo.size
    f = constant((pos - lo).astype(acc).reshape(shape), acc)
    r = ops.add(lo_v, ops.mul(ops.sub(hi_v, lo_v), broadcast_to(f, lo_v.shape)))
    last = take(s, host_index([n - 1]), ax)  # NaNs sort last
    r = ops.select(broadcast_to(ops.ne(last, last), r.shape), full(r.shape, np.nan, acc), r)
    r = moveaxis(r, ax, 0)
    r = reshape(r, q_arr.shape + r.shape[1:])
    if keepdims:
        kept = iter(r.shape[q_arr.ndim:])
        reduced = range(ndim) if axes is None else axes
        r = reshape(r, q_arr.shape + tuple(1 if i in reduced else next(kept)
                                           for i in range(ndim)))
    return r


def searchsorted(sorted_: Tensor, v: Tensor, right: bool = False) -> Tensor:
    """int64 positions of ``v`` in the 1-D ascending ``sorted_`` (same dtype), as C++'s
    ``lower_bound`` (``right``: ``upper_bound``): how many entries are below each value
    (``right``: how many the value is not below, so a NaN value counts them all)."""
    a = broadcast_to(ops.reshape(v, new_sizes=v.shape + (1,)), v.shape + sorted_.shape)
    below = ops.get("not")(ops.lt(a, broadcast_to(sorted_, a.shape))) if right else ops.lt(
        broadcast_to(sorted_, a.shape), a)
    return ops.reduce_sum(cast(below, np.int64), axes=(v.ndim,))


def lower_median(x: Tensor, ignore_nan: bool = False) -> Tensor:
    """The ``(n - 1) // 2``-th smallest of all of ``x`` (PyTorch's ``median()``): NaN if
    any element is NaN; with ``ignore_nan`` (``nanmedian()``) of the non-NaN elements,
    NaN if there are none. The sort puts NaNs last."""
    flat = sort(reshape(x, (-1,)), 0)
    n = flat.shape[0]
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        return reshape(take(flat, host_index(np.array([(n - 1) // 2])), 0), ())
    nans = ops.reduce_sum(cast(ops.ne(flat, flat), np.int64), axes=(0,))
    count = ops.sub(full((), n, np.int64), nans) if ignore_nan else full((), n, np.int64)
    at = ops.div(ops.max(ops.sub(count, full((), 1, np.int64)), full((), 0, np.int64)),
                 full((), 2, np.int64))
    value = reshape(take(flat, reshape(at, (1,)), 0), ())
    empty = ops.eq(count, full((), 0, np.int64)) if ignore_nan else ops.gt(nans, full((), 0, np.int64))
    return where(empty, full((), np.nan, x.dtype), value)


def histogram(x: Tensor, bins: int, lo, hi) -> Tensor:
    """Counts of ``x``'s elements in ``bins`` equal-width bins of ``[lo, hi]``, in ``x``'s
    dtype, with PyTorch's bin arithmetic in that dtype (integers in int64): the bin is
    ``trunc((x - lo) * bins / (hi - lo))``, ``hi`` in the last; NaN and values outside
    count nowhere."""
    dtype = x.dtype
    x = cast(ops.reshape(x, new_sizes=(x.size,)), np.int64 if is_integer(dtype) else dtype)
    low, high = full(x.shape, lo, x.dtype), full(x.shape, hi, x.dtype)
    # + x * 0: a divisor XLA sees as a broadcast it turns into a product by its reciprocal,
    # which rounds differently and moves values across bin edges
    width = ops.add(ops.sub(high, low), ops.mul(x, full(x.shape, 0, x.dtype)))
    pos = cast(ops.div(ops.mul(ops.sub(x, low), full(x.shape, bins, x.dtype)), width), np.int32)
    inside = ops.bitwise_and(ops.ge(x, low), ops.le(x, high))
    pos = where(inside, ops.min(pos, full(pos.shape, bins - 1, np.int32)), full(pos.shape, -1, np.int32))
    return ops.reduce_sum(cast(one_hot(pos, bins), dtype), axes=(0,))


def isin(x: Tensor, test: Tensor, invert: bool = False) -> Tensor:
    """Whether each element of ``x`` equals one of ``test``'s (any shape): NumPy's and
    PyTorch's ``isin`` as one broadcast compare and one reduction, where PyTorch's
    decomposition dispatched ~10 ops per call (Hugging Face's ``generate()``)."""
    a = broadcast_to(ops.reshape(x, new_sizes=x.shape + (1,)), x.shape + (test.size,))
    b = broadcast_to(ops.reshape(test, new_sizes=(test.size,)), a.shape)
    mixed = {np.dtype(a.dtype).kind, np.dtype(b.dtype).kind} == {"i", "u"}  # NumPy 2: exact
    hit = any_(mixed_sign_compare("eq", a, b) if mixed else ops.eq(*promote([a, b])), axis=-1)
    return ops.get("not")(hit) if invert else hit
