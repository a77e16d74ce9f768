"""Reductions of a lazy boolean selection without its length.

``X[labels == i].mean(0)`` (k-means), ``x[x > 0].sum()``: reducing over the selected
axis needs no count of ``True`` values, only the mask -- it is NumPy's own ``where=``
reduction of the unselected array (``np.add.reduce(X, axis=0, where=mask)``), and a
mean divides by ``sum(mask)`` on the device. So an unsettled ``MaskedSelection``
(``_indexing``) reduced over its first axis (alone or with others, ``keepdims`` off)
stays lazy; any other reduction settles it (the counted data-dependent sync).

Differences from eager NumPy, where the count is only known on the device: the mean of
an empty selection is NaN as NumPy's, without its ``RuntimeWarning``; ``max``/``min`` of
an empty selection raise NumPy's ``ValueError`` at the next barrier (a data check),
not at the call.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import normalize_dtype
from ._indexing import MaskedSelection

_NoValue = np._NoValue


def _parts(a, axis, keepdims, out, where):
    """(full, full-shape mask, axes of ``full`` to reduce) for a reduction over the
    selection's first axis, else None (settle)."""
    if (type(a) is not MaskedSelection or a._full is None
            or (keepdims is not _NoValue and keepdims)
            or out is not None or where is not True):
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
    fullmask = lc.ops.reshape(mask, new_sizes=mask.shape + (1,) * (full.ndim - m))
    fullmask = lc.numeric.broadcast_to(fullmask, full.shape)
    return LazyArray(full), LazyArray(fullmask), tuple(range(m)) + trailing


def _count(where: LazyArray, axes) -> LazyArray:
    """Items per result element: the full-shape mask summed over the reduced axes."""
    return np.add.reduce(where, axis=axes, dtype=np.int64)


def _sum(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
         where=True):
    parts = _parts(a, axis, keepdims, out, where)
    if parts is None:
        return NotImplemented
    full, mask, axes = parts
    kw = {} if initial is _NoValue else {"initial": initial}
    return np.add.reduce(full, axis=axes, dtype=dtype, where=mask, **kw)


def _mean(a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=True):
    parts = _parts(a, axis, keepdims, out, where)
    if parts is None:
        return NotImplemented
    full, mask, axes = parts
    x = full.dtype
    acc = (normalize_dtype(dtype) if dtype is not None
           else np.dtype(np.float32) if x == np.float16
           else x if x.kind in "fc" else np.dtype(np.float64))
    total = np.add.reduce(full, axis=axes, dtype=acc, where=mask)
    # NumPy: true_divide(sum, count, casting="unsafe") -- the float64 loop for a
    # float32 sum and an integer count, cast back
    quotient = np.true_divide(total, _count(mask, axes))
    result = normalize_dtype(dtype) if dtype is not None else (
        np.dtype(np.float16) if x == np.float16 else acc)
    return quotient.astype(result) if quotient.dtype != result else quotient


def _extreme(ufunc, name):
    def reduce(a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=True):
        parts = _parts(a, axis, keepdims, out, where)
        if parts is None or initial is not _NoValue:
            return NotImplemented
        full, mask, axes = parts
        dt = full.dtype
        if dt.kind not in "biuf":
            return NotImplemented
        fill = (False if dt.kind == "b" else
                (-np.inf if name == "maximum" else np.inf) if dt.kind == "f" else
                (np.iinfo(dt).min if name == "maximum" else np.iinfo(dt).max))
        result = ufunc.reduce(full, axis=axes, where=mask, initial=fill)
        empty = _count(mask, axes) == 0
        lc.checks.require(np.any(empty)._t, ValueError, f"zero-size array to reduction operation {name} "
                          "which has no identity", op=f"{name} of a boolean selection",
                          guards=(result._t,))
        return result
    return reduce


REDUCERS = {np.sum: _sum, np.mean: _mean,
            np.max: _extreme(np.maximum, "maximum"), np.amax: _extreme(np.maximum, "maximum"),
            np.min: _extreme(np.minimum, "minimum"), np.amin: _extreme(np.minimum, "minimum")}
