"""Reductions of a lazy boolean selection without its length.

``X[labels == i].mean(0)`` (k-means), ``x[x > 0].sum()``: reducing over the selected
axis needs no count of ``True`` values, only the mask -- it is NumPy's own ``where=``
reduction of the unselected array (``np.add.reduce(X, axis=0, where=mask)``), and a
mean divides by ``sum(mask)`` on the device. So an unsettled ``MaskedSelection``
(``_indexing``) reduced by ``sum``/``mean``/``var``/``std``/``max``/``min``/``any``/
``all`` over its first axis (alone or with others, ``keepdims`` either way) stays lazy;
any other reduction settles it (the counted data-dependent sync).

Differences from eager NumPy, where the count is only known on the device: ``mean``/
``var``/``std`` of an empty selection are NaN as NumPy's, without its ``RuntimeWarning``
(lazy_numpy gives no floating-point warnings, docs/lazy_numpy.md); ``max``/``min`` of an
empty selection raise NumPy's ``ValueError`` at the next barrier (a data check), not at
the call.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import normalize_dtype
from ._indexing import MaskedSelection

_NoValue = np._NoValue


def _parts(a, axis, keepdims, out, where):
    """(full, full-shape mask, axes of ``full`` to reduce, result shape with ``keepdims``
    or None) for a reduction over the selection's first axis, else None (settle)."""
    if type(a) is not MaskedSelection or a._full is None or out is not None or where is not True:
        return None
    full, mask = a._full, a._mask
    m = mask.ndim
    ndim = full.ndim - m + 1
    try:
        axes = (tuple(range(ndim)) if axis is None
                else lc.numeric.normalize_axes(axis, ndim))
    except Exception:  # noqa: BLE001 - NumPy's own error comes from the settled path
        return None
    if 0 not in axes:
        return None
    trailing = tuple(a + m - 1 for a in axes if a > 0)
    kept = None
    if keepdims is not _NoValue and keepdims:  # the selected axis is reduced: its 1 is known
        kept = tuple(1 if i in axes else full.shape[i + m - 1] for i in range(ndim))
    fullmask = lc.ops.reshape(mask, new_sizes=mask.shape + (1,) * (full.ndim - m))
    fullmask = lc.numeric.broadcast_to(fullmask, full.shape)
    return LazyArray(full), LazyArray(fullmask), tuple(range(m)) + trailing, kept


def _kept(result, kept):
    """The reduced value with NumPy's ``keepdims`` shape (``kept``), if asked."""
    return result if kept is None else result.reshape(kept)


def _sum(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
         where=True):
    parts = _parts(a, axis, keepdims, out, where)
    if parts is None:
        return NotImplemented
    full, mask, axes, kept = parts
    kw = {} if initial is _NoValue else {"initial": initial}
    return _kept(np.add.reduce(full, axis=axes, dtype=dtype, where=mask, **kw), kept)


def _logical(ufunc):
    """``any``/``all``: the ufunc's identity fills the unselected items (an empty
    selection gives False/True, as NumPy's)."""
    def reduce(a, axis=None, out=None, keepdims=_NoValue, *, where=True):
        parts = _parts(a, axis, keepdims, out, where)
        if parts is None:
            return NotImplemented
        full, mask, axes, kept = parts
        return _kept(ufunc.reduce(full, axis=axes, where=mask), kept)
    return reduce


def _accumulator(x: np.dtype, dtype) -> np.dtype:
    """NumPy's mean accumulator: ``dtype``, float32 for float16, float64 for integers."""
    if dtype is not None:
        return normalize_dtype(dtype)
    return np.dtype(np.float32) if x == np.float16 else x if x.kind in "fc" else np.dtype(np.float64)


def _average(full, mask, axes, acc, keepdims=False):
    """Sum over the selection / its count, as NumPy's ``true_divide(sum, count,
    casting="unsafe")`` (the float64 loop for a float32 sum, cast back)."""
    total = np.add.reduce(full, axis=axes, dtype=acc, where=mask, keepdims=keepdims)
    quotient = np.true_divide(total, np.add.reduce(mask, axis=axes, dtype=np.int64,
                                                   keepdims=keepdims))
    return quotient.astype(total.dtype) if quotient.dtype != total.dtype else quotient


def _mean(a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=True):
    parts = _parts(a, axis, keepdims, out, where)
    if parts is None:
        return NotImplemented
    full, mask, axes, kept = parts
    x = full.dtype
    quotient = _average(full, mask, axes, _accumulator(x, dtype))
    result = normalize_dtype(dtype) if dtype is not None else (
        np.dtype(np.float16) if x == np.float16 else quotient.dtype)
    return _kept(quotient.astype(result) if quotient.dtype != result else quotient, kept)


def _moment(root: bool):
    """``var``/``std`` as NumPy's ``_var``: the mean (kept dims), squared deviations
    summed over the selection, divided by ``max(count - ddof, 0)``. Real float32/64
    and integer/bool selections; others settle."""
    def reduce(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=True,
               mean=None, correction=_NoValue):
        parts = _parts(a, axis, keepdims, out, where)
        if parts is None or mean is not None or (correction is not _NoValue and ddof != 0):
            return NotImplemented
        full, mask, axes, kept = parts
        x = full.dtype
        if x.kind not in "biuf" or x == np.float16 or (dtype is not None and normalize_dtype(
                dtype).kind != "f"):
            return NotImplemented
        ddof = ddof if correction is _NoValue else correction
        acc = normalize_dtype(dtype) if dtype is not None else (
            x if x.kind == "f" else np.dtype(np.float64))
        deviation = full - _average(full, mask, axes, acc, keepdims=True)
        squares = np.add.reduce(np.square(deviation), axis=axes, dtype=acc, where=mask)
        dof = np.maximum(np.add.reduce(mask, axis=axes, dtype=np.int64) - ddof, 0)
        result = np.true_divide(squares, dof).astype(squares.dtype)
        return _kept(np.sqrt(result) if root else result, kept)
    return reduce


def _extreme(ufunc, name):
    def reduce(a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=True):
        parts = _parts(a, axis, keepdims, out, where)
        if parts is None or initial is not _NoValue:
            return NotImplemented
        full, mask, axes, kept = parts
        dt = full.dtype
        if dt.kind not in "biuf":
            return NotImplemented
        fill = (False if dt.kind == "b" else
                (-np.inf if name == "maximum" else np.inf) if dt.kind == "f" else
                (np.iinfo(dt).min if name == "maximum" else np.iinfo(dt).max))
        result = ufunc.reduce(full, axis=axes, where=mask, initial=fill)
        empty = np.add.reduce(mask, axis=axes, dtype=np.int64) == 0
        lc.checks.require(np.any(empty)._t, ValueError, f"zero-size array to reduction operation {name} "
                          "which has no identity", op=f"{name} of a boolean selection",
                          guards=(result._t,))
        return _kept(result, kept)
    return reduce


REDUCERS = {np.sum: _sum, np.mean: _mean, np.var: _moment(False), np.std: _moment(True),
            np.any: _logical(np.logical_or), np.all: _logical(np.logical_and),
            np.max: _extreme(np.maximum, "maximum"), np.amax: _extreme(np.maximum, "maximum"),
            np.min: _extreme(np.minimum, "minimum"), np.amin: _extreme(np.minimum, "minimum")}
