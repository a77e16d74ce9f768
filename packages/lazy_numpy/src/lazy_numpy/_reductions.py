"""Reductions, statistics, sorting and searching: ``np.sum`` ... ``np.quantile``.

Ufunc-shaped reductions (``sum``, ``prod``, ``max``, ``any``...) go through the
ufunc's ``reduce`` so that ``np.sum(a)`` and ``np.add.reduce(a, axis=None)`` share one
path (dtype upcasts, ``initial``, ``where``). Data-dependent results (``unique``,
``nonzero``) sync the size they need and continue lazily.
"""

from __future__ import annotations

import math

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import cast_like_c, normalize_dtype, tensor, wrap
from ._fallback import NotLazy
from ._registry import implements

num = lc.numeric
ops = lc.ops
_NoValue = np._NoValue


def store(r: lc.Tensor, out):
    """Return ``r`` as a LazyArray, or write it into ``out`` (NumPy's ``out=``)."""
    if out is None:
        return LazyArray(r)
    if isinstance(out, tuple):
        (out,) = out
    if tuple(out.shape) != r.shape:
        raise ValueError(f"output parameter has shape {tuple(out.shape)}, expected {r.shape}")
    r = cast_like_c(r, out.dtype)
    if isinstance(out, np.ndarray):
        out[...] = lc.to_numpy(r)
        return out
    out._t = r
    return out


def _kw(**kwargs):
    return {k: v for k, v in kwargs.items() if v is not _NoValue}


def _ufunc_reduce(ufunc, a, axis, dtype, out, keepdims, initial, where):
    return ufunc.reduce(a, axis=axis, **_kw(dtype=dtype, out=out, keepdims=keepdims,
                                            initial=initial, where=where))


@implements(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,  # noqa: A001
        where=True):
    return _ufunc_reduce(np.add, _lazy(a), axis, dtype, out, keepdims, initial, where)


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _ufunc_reduce(np.multiply, _lazy(a), axis, dtype, out, keepdims, initial, where)


@implements(np.max, np.amax)
def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    return _ufunc_reduce(np.maximum, _lazy(a), axis, None, out, keepdims, initial, where)


@implements(np.min, np.amin)
def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    return _ufunc_reduce(np.minimum, _lazy(a), axis, None, out, keepdims, initial, where)


@implements(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return _ufunc_reduce(np.logical_or, _lazy(a), axis, None, out, keepdims, _NoValue, where)


@implements(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return _ufunc_reduce(np.logical_and, _lazy(a), axis, None, out, keepdims, _NoValue, where)


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    return store((max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims))._t, out)


def _lazy(a) -> LazyArray:
    return a if isinstance(a, LazyArray) else LazyArray(tensor(a))


def _mean_dtype(x, dtype):
    if dtype is not None:
        return normalize_dtype(dtype)
    if x.dtype == np.float16:
        return np.dtype(np.float32)  # NumPy accumulates float16 in float32
    return x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    if where is not True:
        raise NotLazy("mean(where=)")
    x = tensor(a)
    _check_moment_axis(x, axis)
    acc = _mean_dtype(x, dtype)
    r = num.mean(x, axis, keepdims, dtype=acc)
    result = dtype or (np.float16 if x.dtype == np.float16 else acc)
    return store(num.cast(r, result), out)


@implements(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=_NoValue):
    return _moment(num.var, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


@implements(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=_NoValue):
    return _moment(num.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _check_moment_axis(x, axis):
    """mean/var/std count items per axis: unlike ufunc reductions, NumPy accepts no axis
    at all (not even 0) for a 0-d array."""
    if axis is not None:
        num.normalize_axes(axis, x.ndim, scalar_axes=())


def _moment(fn, a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    if where is not True or mean_ is not None:
        raise NotLazy("var/std(where=, mean=)")
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = tensor(a)
    _check_moment_axis(x, axis)
    acc = _mean_dtype(x, dtype)
    r = fn(x, axis, keepdims, correction=ddof, dtype=acc)
    if x.dtype == np.float16 and dtype is None:
        r = num.cast(r, np.float16)
    return store(r, out)


@implements(np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=False):
    return store(num.argmax(tensor(a), axis, keepdims), out)


@implements(np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=False):
    return store(num.argmin(tensor(a), axis, keepdims), out)


def _at_least_1d(t):
    # NumPy: a cumulative op over a 0-d array gives a 1-element array (any axis 0/-1)
    return num.reshape(t, (1,)) if t.ndim == 0 else t


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    t = _at_least_1d(tensor(a))
    return store(num.cumulative("cumsum", t, axis, dtype=normalize_dtype(dtype)), out)


@implements(np.cumprod)
def cumprod(a, axis=None, dtype=None, out=None):
    t = _at_least_1d(tensor(a))
    return store(num.cumulative("cumprod", t, axis, dtype=normalize_dtype(dtype)), out)


def _cumulative(op, x, axis, dtype, include_initial, identity):
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
    r = num.cumulative(op, x, axis, dtype=normalize_dtype(dtype))
    if include_initial:
        (ax,) = num.normalize_axes(axis, r.ndim)
        shape = tuple(1 if i == ax else s for i, s in enumerate(r.shape))
        r = ops.concatenate(num.full(shape, identity, r.dtype), r, dimension=ax)
    return r


@implements(np.cumulative_sum)
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return store(_cumulative("cumsum", tensor(x), axis, dtype, include_initial, 0), out)


@implements(np.cumulative_prod)
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return store(_cumulative("cumprod", tensor(x), axis, dtype, include_initial, 1), out)


# -- NaN-aware reductions ---------------------------------------------------------------

def _nan_filled(a, value):
    x = tensor(a)
    if x.dtype.kind not in "fc":
        return x, None
    nan = ops.ne(x, x)
    return ops.select(nan, num.full(x.shape, value, x.dtype), x), nan


@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    x, _ = _nan_filled(a, 0)
    return sum(LazyArray(x), axis, dtype, out, keepdims, initial, where)


@implements(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    x, _ = _nan_filled(a, 1)
    return prod(LazyArray(x), axis, dtype, out, keepdims, initial, where)


def _nan_extreme(a, axis, out, keepdims, fill, reducer):
    x, nan = _nan_filled(a, fill)
    r = reducer(LazyArray(x), axis, keepdims=keepdims)._t
    if nan is not None:  # all-NaN slices give NaN (NumPy also warns)
        all_nan = num.all(nan, axis, keepdims)
        r = ops.select(all_nan, num.full(r.shape, np.nan, r.dtype), r)
    return store(r, out)


@implements(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise NotLazy("nanmax")
    return _nan_extreme(a, axis, out, keepdims, -np.inf, max)


@implements(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise NotLazy("nanmin")
    return _nan_extreme(a, axis, out, keepdims, np.inf, min)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    if where is not True:
        raise NotLazy("nanmean")
    x, nan = _nan_filled(a, 0)
    if nan is None:
        return mean(a, axis, dtype, out, keepdims)
    acc = _mean_dtype(x, dtype)
    total = num.sum(num.cast(x, acc), axis, keepdims)
    count = num.sum(ops.get("not")(nan), axis, keepdims, dtype=acc)
    return store(ops.div(total, count), out)


@implements(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=_NoValue):
    if where is not True or mean is not None or correction is not _NoValue:
        raise NotLazy("nanvar")
    return store(_nanvar(a, axis, dtype, ddof, keepdims), out)


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=_NoValue):
    if where is not True or mean is not None or correction is not _NoValue:
        raise NotLazy("nanstd")
    return store(ops.sqrt(_nanvar(a, axis, dtype, ddof, keepdims)), out)


def _nanvar(a, axis, dtype, ddof, keepdims):
    x, nan = _nan_filled(a, 0)
    if nan is None:
        return num.var(x, axis, keepdims, correction=ddof, dtype=_mean_dtype(x, dtype))
    return num.var(x, axis, keepdims, correction=ddof, dtype=_mean_dtype(x, dtype),
                   where=ops.get("not")(nan))


# -- order statistics ---------------------------------------------------------------------

def _quantile_lazy(x, q, axis, keepdims, name):
    """Linear-interpolation quantiles (NumPy's default method): the core's ``quantile``."""
    q_arr = np.asarray(q, dtype=np.float64)
    if np.any(q_arr < 0) or np.any(q_arr > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if x.dtype.kind == "c":
        raise TypeError(f"a must be an array of real numbers for {name}")
    if (x.size if axis is None else math.prod(
            x.shape[i] for i in num.normalize_axes(axis, x.ndim))) == 0:
        raise NotLazy(name)
    return num.quantile(x, q_arr, axis, keepdims)


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    if method != "linear" or weights is not None or interpolation is not None or \
            isinstance(q, LazyArray):
        raise NotLazy("quantile")
    return store(_quantile_lazy(tensor(a), q, axis, keepdims, "quantile"), out)


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    if method != "linear" or weights is not None or interpolation is not None or \
            isinstance(q, LazyArray):
        raise NotLazy("percentile")
    q = np.true_divide(np.asarray(q), 100)
    return store(_quantile_lazy(tensor(a), q, axis, keepdims, "percentile"), out)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return store(_quantile_lazy(tensor(a), 0.5, axis, keepdims, "median"), out)


@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if returned:
            x = tensor(a)
            n = int(np.prod([x.shape[i] for i in num.normalize_axes(axis, x.ndim)]))
            return avg, LazyArray(num.full(avg.shape, n, avg.dtype))
        return avg
    a, w = _lazy(a), _lazy(weights)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1 or not isinstance(axis, int):
            raise NotLazy("average")
        ax = axis % a.ndim
        if w.shape[0] != a.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = w.reshape((1,) * ax + (-1,) + (1,) * (a.ndim - ax - 1))
    dt = np.result_type(a.dtype, w.dtype, np.float64 if a.dtype.kind in "biu" else a.dtype)
    a, w = a.astype(dt), w.astype(dt)
    wsum = np.broadcast_to(w, a.shape).sum(axis=axis, keepdims=keepdims)
    avg = np.multiply(a, w).sum(axis=axis, keepdims=keepdims) / wsum
    return (avg, wsum) if returned else avg


# -- sorting, searching, counting ---------------------------------------------------------

def _check_sort_kind(kind, order):
    if order is not None:
        raise NotLazy("sort(order=)")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _check_sort_kind(kind, order)
    x = tensor(a)
    if x.ndim == 0 and axis is not None:
        raise np.exceptions.AxisError("axis -1 is out of bounds for array of dimension 0")
    return LazyArray(num.sort(x, axis))


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _check_sort_kind(kind, order)
    x = tensor(a)
    if x.ndim == 0 and axis is not None:
        raise np.exceptions.AxisError("axis -1 is out of bounds for array of dimension 0")
    return LazyArray(num.argsort(x, axis))


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A full sort satisfies the partition contract (NumPy leaves the order of the
    elements on each side unspecified)."""
    _check_kth(a, kth, axis)
    return sort(a, axis, order=order)


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    _check_kth(a, kth, axis)
    return argsort(a, axis, order=order)


def _check_kth(a, kth, axis):
    x = tensor(a)
    n = x.size if axis is None else x.shape[num.normalize_axes(axis, x.ndim)[0]]
    for k in np.atleast_1d(np.asarray(kth)):
        if not -n <= int(k) < n:
            raise ValueError(f"kth(={int(k)}) out of bounds ({n})")


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    x = tensor(a)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if sorter is not None:
        x = num.take(x, tensor(sorter), 0)
    v = v if isinstance(v, LazyArray) else np.asarray(v)  # NumPy compares in the dtype
    dt = np.result_type(x.dtype, v.dtype)  # v's values discover (a Python float: float64)
    return LazyArray(num.searchsorted(num.cast(x, dt), tensor(v, dt), right=side == "right"))


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    x = tensor(a)
    return LazyArray(num.sum(ops.ne(x, num.full(x.shape, 0, x.dtype)), axis, keepdims, dtype=np.int64))


@implements(np.nonzero)
def nonzero(a):
    x = tensor(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    return tuple(wrap(list(num.nonzero(x))))


@implements(np.argwhere)
def argwhere(a):
    x = tensor(a)
    if x.ndim == 0:
        x = ops.reshape(x, new_sizes=(1,))
        idx = num.nonzero(x)
        return LazyArray(ops.reshape(idx[0], new_sizes=(idx[0].shape[0], 0)))
    idx = num.nonzero(x)
    return LazyArray(num.stack(list(idx), 1))


@implements(np.flatnonzero)
def flatnonzero(a):
    return LazyArray(num.nonzero(num.reshape(tensor(a), (-1,)))[0])


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    if axis is not None or not equal_nan:
        raise NotLazy("unique")
    x = tensor(ar)
    if x.dtype.kind in "fc":
        raise NotLazy("unique")  # NaN collapsing (equal_nan) is NumPy-specific
    values = num.unique(x)
    if not (return_index or return_inverse or return_counts):
        return LazyArray(values)
    flat = num.reshape(x, (-1,))
    _, index, inverse, counts = ops.unique_all(flat, size=values.shape[0]) if flat.size \
        else (None, flat, flat, flat)
    out = [LazyArray(values)]
    if return_index:
        out.append(LazyArray(index))
    if return_inverse:
        out.append(LazyArray(num.reshape(inverse, x.shape)))
    if return_counts:
        out.append(LazyArray(counts))
    return tuple(out)


@implements(np.unique_values)
def unique_values(x):
    return unique(x)


@implements(np.unique_counts)
def unique_counts(x):
    values, counts = unique(x, return_counts=True)
    return np.lib._arraysetops_impl.UniqueCountsResult(values, counts)


@implements(np.unique_inverse)
def unique_inverse(x):
    values, inverse = unique(x, return_inverse=True)
    return np.lib._arraysetops_impl.UniqueInverseResult(values, inverse)


@implements(np.unique_all)
def unique_all(x):
    values, index, inverse, counts = unique(x, True, True, True)
    return np.lib._arraysetops_impl.UniqueAllResult(values, index, inverse, counts)

