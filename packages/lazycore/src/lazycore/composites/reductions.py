"""Reductions with ``axis``/``keepdims``/``dtype`` and the statistics built on them."""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable

import numpy as np

from .. import ops
from ..dtypes import canonical, is_bool, is_inexact, is_integer, is_unsigned
from ..errors import AxisError
from ..tensor import Tensor
from ..trace import scalar
from .broadcasting import broadcast_to, cast, full
from .indexing import take_along_axis


def normalize_axes(axis, ndim: int, scalar_axes=(0, -1)) -> tuple[int, ...]:
    """None -> all axes; ints may be negative; duplicates raise ``AxisError``.

    A 0-d value has no axes; ``scalar_axes`` lists the axis values still accepted for
    it (PyTorch: 0 and -1; TensorFlow: none; NumPy reductions: 0)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, Iterable) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if ndim == 0:
            if a not in scalar_axes:
                raise AxisError(f"axis {a} is out of bounds for array of dimension 0")
            continue
        if not -ndim <= a < ndim:
            raise AxisError(f"axis {a} is out of bounds for array of dimension {ndim}")
        a %= ndim
        if a in out:
            raise AxisError(f"repeated axis {a}")
        out.append(a)
    return tuple(sorted(out))


def keep_dims(x: Tensor, reduced_shape_source: tuple[int, ...], axes) -> Tensor:
    return ops.reshape(x, new_sizes=tuple(1 if i in axes else s
                                          for i, s in enumerate(reduced_shape_source)))


def reduce(op_name: str, x: Tensor, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
    """A primitive reduction with NumPy-style arguments.

    ``dtype`` casts before reducing; without it, sums/products of bool and small
    integers accumulate in the platform integer (int64), as NumPy and PyTorch do."""
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        x = cast(x, dtype)
    elif op_name in ("reduce_sum", "reduce_prod") and (is_bool(x.dtype) or (
            is_integer(x.dtype) and x.dtype.itemsize < 8)):
        x = cast(x, np.uint64 if is_unsigned(x.dtype) else np.int64)
    if op_name in ("reduce_max", "reduce_min") and builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError("zero-size array to reduction operation which has no identity")
    out = ops.get(op_name)(x, axes=axes)
    return keep_dims(out, x.shape, axes) if keepdims else out


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    return reduce("reduce_sum", x, axis, keepdims, dtype)


def prod(x, axis=None, keepdims=False, dtype=None):
    return reduce("reduce_prod", x, axis, keepdims, dtype)


def max(x, axis=None, keepdims=False):  # noqa: A001
    """NaN propagates (XLA's max, as NumPy's and PyTorch's); a bool max is ``any``."""
    return reduce("reduce_or" if is_bool(x.dtype) else "reduce_max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    """NaN propagates; a bool min is ``all``."""
    return reduce("reduce_and" if is_bool(x.dtype) else "reduce_min", x, axis, keepdims)


def vector_norm(x, ord=2, axis=None, keepdims=False):  # noqa: A002
    """``sum(|x|**ord)**(1/ord)`` over ``axis``: ``ord`` 2 (sqrt of the sum of squares),
    1, ``inf``/``-inf`` (max/min of ``|x|``), 0 (count of non-zeros, in ``x``'s real
    dtype), or any other power. Complex ``x`` gives its real magnitude's norm."""
    axes = normalize_axes(axis, x.ndim)
    a = ops.abs(x)
    if ord == 2:
        out = ops.sqrt(ops.reduce_sum(ops.mul(a, a), axes=axes))
    elif ord == 1:
        out = ops.reduce_sum(a, axes=axes)
    elif ord == math.inf:
        out = ops.reduce_max(a, axes=axes)
    elif ord == -math.inf:
        out = ops.reduce_min(a, axes=axes)
    elif ord == 0:
        out = ops.reduce_sum(cast(ops.ne(a, full(a.shape, 0, a.dtype)), a.dtype), axes=axes)
    else:
        p = ops.reduce_sum(ops.pow(a, full(a.shape, ord, a.dtype)), axes=axes)
        out = ops.pow(p, full(p.shape, 1.0 / ord, p.dtype))
    return keep_dims(out, x.shape, axes) if keepdims else out


def l2_normalize(x, axis=None, epsilon: float = 1e-12):
    """``x * rsqrt(max(sum(x**2, axis), epsilon))`` (TF's ``l2_normalize``)."""
    axes = normalize_axes(axis, x.ndim, scalar_axes=())
    sq = reduce("reduce_sum", ops.mul(x, x), axes, keepdims=True)
    return ops.mul(x, broadcast_to(ops.rsqrt(ops.max(sq, full(sq.shape, epsilon, sq.dtype))),
                                   x.shape))


def any(x, axis=None, keepdims=False):  # noqa: A001
    return reduce("reduce_or", cast(x, np.bool_), axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return reduce("reduce_and", cast(x, np.bool_), axis, keepdims)


def count(x: Tensor, axes) -> int:
    return math.prod([x.shape[a] for a in axes])


def mean(x, axis=None, keepdims=False, dtype=None, float_dtype=np.float64):
    """Integers average in ``float_dtype`` (NumPy: float64)."""
    if dtype is None:
        dtype = x.dtype if is_inexact(x.dtype) else canonical(float_dtype)
    axes = normalize_axes(axis, x.ndim)
    total = reduce("reduce_sum", cast(x, dtype), axes, keepdims)
    return ops.div(total, full(total.shape, count(x, axes), total.dtype))


def var(x, axis=None, keepdims=False, correction=0, dtype=None, float_dtype=np.float64,
        where=None):
    """Variance with ``correction`` (ddof); ``where`` (a boolean tensor of ``x``'s
    shape) counts only those elements (NumPy's ``where=``; ``nanvar`` masks its NaNs)."""
    axes = normalize_axes(axis, x.ndim)
    if where is not None:
        return _masked_var(x, where, axes, keepdims, correction, dtype, float_dtype)
    return centered_var(center(x, axes, dtype, float_dtype)[1], axes, keepdims, correction)


def center(x, axes: tuple, dtype=None, float_dtype=np.float64) -> tuple:
    """``(mean over axes kept as size-1 axes, x minus it)``: what a variance, a layer
    norm and batch statistics share, traced once."""
    m = mean(x, axes, keepdims=True, dtype=dtype, float_dtype=float_dtype)
    return m, ops.sub(cast(x, m.dtype), broadcast_to(m, x.shape))


def centered_var(centered, axes: tuple, keepdims=False, correction=0):
    """The variance of values already centered on their mean (``center``)."""
    sq = ops.real(ops.mul(centered, ops.conj(centered))) if np.issubdtype(
        centered.dtype, np.complexfloating) else ops.mul(centered, centered)
    total = reduce("reduce_sum", sq, axes, keepdims)
    n = count(centered, axes) - correction
    # n <= 0 divides by zero, giving inf/nan as NumPy and PyTorch do
    return ops.div(total, full(total.shape, n if n > 0 else 0, total.dtype))


def _masked_var(x, where, axes, keepdims, correction, dtype, float_dtype):
    acc = canonical(dtype) if dtype is not None else (
        x.dtype if is_inexact(x.dtype) else canonical(float_dtype))
    x = cast(x, acc)
    zeros = full(x.shape, 0, acc)
    count = reduce("reduce_sum", cast(where, acc), axes, keepdims=True)
    m = ops.div(reduce("reduce_sum", ops.select(where, x, zeros), axes, keepdims=True), count)
    d = ops.select(where, ops.sub(x, broadcast_to(m, x.shape)), zeros)
    sq = ops.real(ops.mul(d, ops.conj(d))) if np.issubdtype(acc, np.complexfloating) \
        else ops.mul(d, d)
    total = reduce("reduce_sum", sq, axes, keepdims)
    n = cast(count if keepdims else ops.reshape(count, new_sizes=total.shape), total.dtype)
    return ops.div(total, ops.sub(n, full(n.shape, correction, total.dtype)))


def std(x, axis=None, keepdims=False, correction=0, dtype=None, float_dtype=np.float64):
    return ops.sqrt(var(x, axis, keepdims, correction, dtype, float_dtype))


def shift_max(x, axes) -> Tensor:
    """The max over ``axes`` (keepdims) that softmax-style ops subtract before ``exp``.
    Over an empty axis there is no max and nothing to shift: zeros (so softmax of an
    empty axis is empty and logsumexp is -inf, as in NumPy and PyTorch)."""
    if builtins.any(x.shape[a] == 0 for a in axes):
        return full(tuple(1 if i in axes else s for i, s in enumerate(x.shape)), 0, x.dtype)
    return reduce("reduce_max", x, axes, keepdims=True)


def logsumexp(x, axis=None, keepdims=False):
    axes = normalize_axes(axis, x.ndim)
    m = shift_max(x, axes)
    m = ops.select(ops.is_finite(m), m, full(m.shape, 0, m.dtype))  # all -inf: -inf, not NaN
    out = ops.add(ops.log(reduce("reduce_sum", ops.exp(ops.sub(x, broadcast_to(m, x.shape))), axes,
                                 keepdims=True)), m)
    return out if keepdims else ops.reshape(out, new_sizes=tuple(
        s for i, s in enumerate(x.shape) if i not in axes))


def argmax(x, axis=None, keepdims=False, index_dtype=np.int64):
    return _arg("argmax", x, axis, keepdims, index_dtype)


def argmin(x, axis=None, keepdims=False, index_dtype=np.int64):
    return _arg("argmin", x, axis, keepdims, index_dtype)


def _arg(name, x, axis, keepdims, index_dtype):
    if axis is None:
        flat = ops.reshape(x, new_sizes=(x.size,))
        out = ops.get(name)(flat, axis=0, index_dtype=index_dtype)
        return ops.reshape(out, new_sizes=(1,) * x.ndim) if keepdims else out
    if x.ndim == 0:  # NumPy and PyTorch both answer 0 for a 0-d input
        return scalar(0, index_dtype)
    (a,) = normalize_axes(axis, x.ndim)
    out = ops.get(name)(x, axis=a, index_dtype=index_dtype)
    return keep_dims(out, x.shape, (a,)) if keepdims else out


def cumulative(op_name: str, x: Tensor, axis=None, reverse=False, dtype=None,
               return_indices: bool = False):
    """``cumsum``-style op; ``axis=None`` flattens first (NumPy). ``return_indices``
    (``cummax``/``cummin``): ``(values, indices)``, each index the last position where
    ``x`` equals the running extreme (or is NaN), as PyTorch's ``cummax``."""
    if return_indices:
        return _cumulative_extreme(op_name, x, axis)
    if dtype is not None:
        x = cast(x, dtype)
    elif op_name in ("cumsum", "cumprod") and (is_bool(x.dtype) or (
            is_integer(x.dtype) and x.dtype.itemsize < 8)):
        x = cast(x, np.uint64 if is_unsigned(x.dtype) else np.int64)
    if axis is None:
        x = ops.reshape(x, new_sizes=(x.size,))
        axis = 0
    if x.ndim == 0:
        return x
    (a,) = normalize_axes(axis, x.ndim)
    return ops.get(op_name)(x, axis=a, reverse=reverse)


def _cumulative_extreme(op_name: str, x: Tensor, axis):
    if x.ndim == 0:
        return x, scalar(0, np.int64)
    (a,) = normalize_axes(axis, x.ndim)
    values = ops.get(op_name)(x, axis=a)
    hit = ops.eq(x, values)
    if is_inexact(x.dtype):
        hit = ops.bitwise_or(hit, ops.ne(x, x))
    index = ops.cummax(ops.select(hit, ops.iota(dtype=np.int64, shape=x.shape, dimension=a),
                                  full(x.shape, 0, np.int64)), axis=a)
    if is_inexact(x.dtype):  # the element itself: XLA's running max of (0., -0.) is 0.
        values = take_along_axis(x, index, a)
    return values, index
