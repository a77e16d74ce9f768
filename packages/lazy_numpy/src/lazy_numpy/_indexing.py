"""``a[key]`` and ``a[key] = v`` with NumPy semantics, on the core's indexing composites.

Keys may mix ints, slices, ``None``, ``...``, lists, ndarrays and LazyArrays (integer
or boolean). A lazy boolean mask needs its number of ``True`` values: that is a
counted data-dependent sync. Assignment is functional: the LazyArray is re-pointed at
the updated value, so later reads see the write.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import numpy_errors, tensor


def core_key(key, base=None):
    """User key -> a key the core understands (LazyArrays become Tensors).

    A lazy boolean mask is a data-dependent shape: it is computed together with the
    array it indexes (one counted sync, which also cuts both histories so a loop's
    graphs stay small), and replaced by its ``nonzero`` index arrays as device data
    (not baked constants, so equal counts reuse the compiled program)."""
    items = key if isinstance(key, tuple) else (key,)
    masks = [k for k in items if isinstance(k, LazyArray) and k.dtype == np.bool_ and k.ndim]
    if masks:
        lc.metrics.inc("data_dependent_syncs")
        lc.sync([m._t for m in masks] + ([base] if base is not None else []),
                cause="data_dependent")
    out = []
    for k in items:
        if isinstance(k, LazyArray) and k.dtype == np.bool_ and k.ndim:
            out.extend(lc.asarray(i.astype(np.int64)) for i in np.nonzero(k.__array__()))
        else:
            out.append(_item(k))
    return tuple(out) if isinstance(key, tuple) or masks else out[0]


def _item(k):
    if isinstance(k, LazyArray):
        if k.dtype.kind not in "biu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return k._t
    if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
        if k.size == 0:
            return k.astype(np.int64)
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if isinstance(k, float | np.floating | complex):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                         "(`None`) and integer or boolean arrays are valid indices")
    if isinstance(k, slice):
        return slice(*(_slice_bound(v) for v in (k.start, k.stop, k.step)))
    if isinstance(k, list) and any(isinstance(v, LazyArray) for v in k):
        return tensor(k)
    return k


def _slice_bound(v):
    if v is None or isinstance(v, int):
        return v
    if hasattr(v, "__index__"):
        return v.__index__()  # a 0-d LazyArray bound syncs, as NumPy needs the int
    raise TypeError("slice indices must be integers or None or have an __index__ method")


def _check_masks(shape, key) -> None:
    """NumPy's IndexError for a boolean index whose shape does not match its axes."""
    items = key if isinstance(key, tuple) else (key,)

    def width(k):
        if k is None or k is Ellipsis or isinstance(k, bool | np.bool_):
            return 0
        if isinstance(k, LazyArray | np.ndarray) and k.dtype == np.bool_:
            return k.ndim
        return 1
    used = sum(width(k) for k in items)
    dim = 0
    for k in items:
        if k is Ellipsis:
            dim += max(len(shape) - used, 0)
            continue
        if isinstance(k, LazyArray | np.ndarray) and k.dtype == np.bool_ and k.ndim:
            for i, size in enumerate(k.shape):
                if dim + i < len(shape) and shape[dim + i] != size:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {dim + i}; "
                        f"size of axis is {shape[dim + i]} but size of corresponding boolean "
                        f"axis is {size}")
        dim += width(k)


@numpy_errors
def getitem(a: LazyArray, key) -> LazyArray:
    _check_masks(a.shape, key)
    return LazyArray(lc.numeric.getitem(a._t, core_key(key, a._t)))


@numpy_errors
def setitem(a: LazyArray, key, value) -> None:
    _check_masks(a.shape, key)
    if isinstance(value, bool | int | float | complex):
        if isinstance(value, complex) and a.dtype.kind != "c":
            raise TypeError(f"can't convert complex to {a.dtype}")
        v = lc.scalar(np.asarray(value, dtype=a.dtype)[()], a.dtype)  # OverflowError as NumPy
    else:
        v = tensor(value)
        if v.dtype.kind == "c" and a.dtype.kind != "c":
            v = lc.ops.real(v)  # NumPy warns (ComplexWarning) and drops the imaginary part
    k = core_key(key, a._t)
    a._t = lc.numeric.setitem(a._t, k, lc.numeric.cast(v, a.dtype))
