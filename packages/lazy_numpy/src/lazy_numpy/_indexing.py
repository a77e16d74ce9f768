"""``a[key]`` and ``a[key] = v`` with NumPy semantics, on the core's indexing composites.

Keys may mix ints, slices, ``None``, ``...``, lists, ndarrays and LazyArrays (integer
or boolean). A lazy boolean mask needs its number of ``True`` values: that is a
counted data-dependent sync, except where nothing needs it (``a[mask] = v`` and
``a[mask] op= v`` with ``v`` a scalar or per-element broadcastable: one ``where``).
Basic indexing returns views (``_views``); assignment stores the updated value into the
array, so the base and the other views of its storage see the write.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc
from lazycore.composites.indexing import basic_signature
from lazycore.views import is_basic_key, same_value

from . import _operators, _views
from ._array import HOST_KNOWN, LazyArray
from ._convert import cast_like_c, numpy_errors, tensor
from ._registry import implements


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
            for i in np.nonzero(k.__array__()):
                out.append(lc.asarray(i.astype(np.int64)))
                lc.checks.remember_range(out[-1], i)  # in range by construction
        else:
            out.append(_item(k))
    return tuple(out) if isinstance(key, tuple) or masks else out[0]


def checked(shape, k, result, op: str):
    """``result``, with every lazy integer index array of the core key ``k`` checked
    against its axis inside the next compiled program: NumPy's IndexError is raised at
    that barrier, never a clamped value (XLA clamps). Host-known values are checked now."""
    items = k if isinstance(k, tuple) else (k,)
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    axis = 0
    for i in items:
        if i is Ellipsis:
            axis += len(shape) - consumed
        elif i is not None:
            if isinstance(i, lc.Tensor) and i.dtype.kind in "iu" and axis < len(shape):
                known, n = HOST_KNOWN.get(i.node), shape[axis]  # an arange: checked now
                if known is not None and known.size:
                    bad = known[(known >= n) | (known < -n)]
                    if bad.size:
                        raise IndexError(f"index {bad[0]} is out of bounds for axis {axis} "
                                         f"with size {n}")
                    axis += 1
                    continue
                lc.checks.index_in_range(
                    i, shape[axis], IndexError,
                    f"index out of bounds for axis {axis} with size {shape[axis]}",
                    op=op, guards=(result,))
            axis += 1
    return result


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


def _host_lists(key):
    """Lists of host values in a key as the arrays NumPy makes of them: ``[True, False]``
    is a mask, not the indices 1 and 0."""
    if isinstance(key, tuple):
        return tuple(_host_lists(k) for k in key)
    if isinstance(key, list) and not any(isinstance(v, LazyArray) for v in key):
        return np.asarray(key)
    return key


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


def _lone_mask(a, key):
    """The lazy boolean mask of ``a[mask]`` (alone, or as a 1-tuple), else None."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if isinstance(key, LazyArray) and key.dtype == np.bool_ and 0 < key.ndim <= a.ndim:
        return key
    return None


def _per_element(value, a, mask) -> bool:
    """Whether ``value`` broadcasts to ``a[mask]`` whatever its length (the count of
    ``True``): then ``where`` expresses the write and no sync is needed."""
    if isinstance(value, MaskedSelection):
        return False
    return _per_element_shape(np.shape(value) if not isinstance(value, LazyArray)
                              else value.shape, a.shape[mask.ndim:])


def _per_element_shape(shape, trailing) -> bool:
    if len(shape) > len(trailing) + 1:
        return False
    if len(shape) == len(trailing) + 1 and shape[0] != 1:
        return False
    tail = shape[-len(trailing):] if trailing and shape else ()
    tail = tail[len(tail) - min(len(tail), len(trailing)):]
    return all(v in (1, t) for v, t in zip(tail, trailing[len(trailing) - len(tail):],
                                           strict=True))


def _value_tensor(a, value) -> lc.Tensor:
    if isinstance(value, bool | int | float | complex):
        if isinstance(value, complex) and a.dtype.kind != "c":
            raise TypeError(f"can't convert complex to {a.dtype}")
        return lc.scalar(np.asarray(value, dtype=a.dtype)[()], a.dtype)  # OverflowError
    v = tensor(value)
    if v.dtype.kind == "c" and a.dtype.kind != "c":
        v = lc.ops.real(v)  # NumPy warns (ComplexWarning) and drops the imaginary part
    return cast_like_c(v, a.dtype)


class MaskedSelection(LazyArray):
    """``a[mask]`` for a lazy mask, before anyone needs its length.

    NumPy's ``a[mask] += v``, ``x[x > 0] *= 2`` and ``Z[I] = Z[I]**2 + C[I]`` never
    need the number of ``True`` values: the selection is kept as a full-shape value
    plus the mask. Elementwise ufuncs over selections under the same mask (with
    scalars or per-element broadcastable operands) and in-place operators stay
    full-shape, and storing a selection back under the same mask is one ``where``.
    Anything else (its shape, a reduction, another mask) settles it into the ordinary
    selection: the counted data-dependent sync."""

    __slots__ = ("_mask", "_full")

    def __init__(self, full: lc.Tensor, mask: lc.Tensor):
        super().__init__(None)
        self._mask, self._full = mask, full

    def _settle(self) -> None:
        full, self._full = self._full, None
        self._v = lc.numeric.getitem(full, core_key(LazyArray(self._mask), full))

    @property
    def _t(self) -> lc.Tensor:
        if self._full is not None:
            self._settle()
        return LazyArray._t.fget(self)

    @_t.setter
    def _t(self, value: lc.Tensor) -> None:
        if self._full is not None:
            self._settle()
        LazyArray._t.fset(self, value)

    @property
    def dtype(self) -> np.dtype:
        return self._full.dtype if self._full is not None else self._v.dtype

    @property
    def ndim(self) -> int:
        if self._full is None:
            return self._v.ndim
        return self._full.ndim - self._mask.ndim + 1

    def _pending_under(self, mask: lc.Tensor, shape) -> bool:
        """Still unsettled, selected by this mask from a value of this shape."""
        return (self._full is not None and self._full.shape == shape
                and same_value(self._mask, mask))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        mask, shape = self._mask, self._full.shape if self._full is not None else None
        if (method == "__call__" and not kwargs and ufunc.nout == 1 and shape is not None
                and all(_selectable(x, mask, shape) for x in inputs)):
            fulls = [LazyArray(x._full) if isinstance(x, MaskedSelection) else x
                     for x in inputs]
            out = ufunc(*fulls)
            if isinstance(out, LazyArray) and out.shape == shape:
                return MaskedSelection(out._t, mask)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)


def _selectable(x, mask: lc.Tensor, shape) -> bool:
    """An operand of an elementwise op over selections under ``mask`` of ``shape``."""
    if isinstance(x, MaskedSelection):
        return x._pending_under(mask, shape)
    if isinstance(x, bool | int | float | complex | np.generic):
        return True
    if isinstance(x, LazyArray | np.ndarray):
        return _per_element_shape(np.shape(x), shape[mask.ndim:])
    return False


def _inplace(stem: str, ufunc):
    general = getattr(LazyArray, f"__i{stem}__")

    def method(self, other):
        if self._full is None or isinstance(other, MaskedSelection) or not _selectable(
                other, self._mask, self._full.shape):
            return general(self, other)
        full = LazyArray(self._full)
        ufunc(full, other, out=full)  # NumPy's loop, casting rule and errors
        self._full = lc.numeric.masked_assign(self._full, self._mask, full._t, full_shape=True)
        return self
    method.__name__ = f"__i{stem}__"
    return method


for _stem, _ufunc in _operators.BINARY.items():
    setattr(MaskedSelection, f"__i{_stem}__", _inplace(_stem, _ufunc))


@numpy_errors
def getitem(a: LazyArray, key) -> LazyArray:
    if basic_signature(key) is not None:  # ints and slices: a view (the common read)
        return _views.index(a, lc.numeric.getitem(a._t, key), key)
    key = _host_lists(key)
    _check_masks(a.shape, key)
    mask = _lone_mask(a, key)
    if mask is not None:
        return MaskedSelection(a._t, mask._t)  # settles (syncs) only if used otherwise
    k = core_key(key, a._t)
    value = lc.numeric.getitem(a._t, k)
    if is_basic_key(k):
        return _views.index(a, value, k)  # a view, as NumPy's basic indexing
    return LazyArray(checked(a.shape, k, value, "getitem"))


@numpy_errors
def setitem(a: LazyArray, key, value) -> None:
    if basic_signature(key) is not None:  # ints and slices: no masks, no index arrays
        a._t = lc.numeric.setitem(a._t, key, _value_tensor(a, value))
        return
    key = _host_lists(key)
    _check_masks(a.shape, key)
    mask = _lone_mask(a, key)
    if mask is not None:
        if isinstance(value, MaskedSelection) and value._pending_under(mask._t, a.shape):
            a._t = lc.numeric.masked_assign(a._t, mask._t, value._full, full_shape=True)
            return  # ``a[mask] op= v`` & co.
        if _per_element(value, a, mask):
            a._t = lc.numeric.masked_assign(a._t, mask._t, _value_tensor(a, value))
            return
    v = _value_tensor(a, value)
    k = core_key(key, a._t)
    a._t = checked(a.shape, k, lc.numeric.setitem(a._t, k, v), "setitem")


# -- element writes: ``a[i, j] = 3.0`` ------------------------------------------------------------

_SCRATCH: dict = {}  # dtype -> a one-element host array (NumPy's own scalar assignment)


def set_element(a: LazyArray, key, value) -> bool:
    """``a[i, j, ...] = scalar`` (one int per axis, a host scalar): held in the array's
    storage as one element write (``lazycore.views.Storage.write_element``), no graph
    node; False (nothing done) for any other key. The position comes from NumPy's layout
    of ``a`` (its probe), so a write through a view lands in the shared memory every
    alias reads. Errors are NumPy's, in its order: read-only, index, then the value's
    conversion (done by NumPy's own assignment into a scratch element)."""
    items = key if type(key) is tuple else (key,)
    for k in items:
        if type(k) is not int and not isinstance(k, np.integer):
            return False
    if a._s is None:
        _views._storage(a)
    q = a._probe
    s = a._s
    if len(items) != q.ndim or q.dtype != s.dtype:
        return False  # a row write, or a view reading the memory as another dtype
    if not q.flags.writeable:
        raise ValueError("assignment destination is read-only")
    item = q.itemsize
    pos = 0 if a._base is None else _offset(q, a._base._probe)
    for k, n, st in zip(items, q.shape, q.strides, strict=True):
        i = int(k)
        if i < 0:
            i += n
        if not 0 <= i < n:
            q[items]  # noqa: B018 - NumPy's IndexError, with its message
        pos += i * st
    scratch = _SCRATCH.get(q.dtype)
    if scratch is None:
        scratch = _SCRATCH[q.dtype] = np.empty(1, q.dtype)
    scratch[0] = value  # NumPy's cast: OverflowError, NaN to int, ComplexWarning ...
    s.write_element(pos // item, scratch[0])
    return True


def _offset(q: np.ndarray, owner: np.ndarray) -> int:
    """Bytes from the start of the owner's memory to the first element of the probe ``q``."""
    root = _views._root(owner)
    return q.__array_interface__["data"][0] - root.__array_interface__["data"][0]


# -- views at arbitrary strides -------------------------------------------------------------------

_stride_tricks = np.lib.stride_tricks


@implements(_stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """A view of ``x`` (read-only unless ``writeable``, as NumPy's)."""
    return _views.strided(x, lambda p: _stride_tricks.sliding_window_view(
        p, window_shape, axis, subok=subok, writeable=writeable))


def _lazy_as_strided(original):
    """``np.lib.stride_tricks.as_strided`` is not dispatched by NumPy (it would view a
    host copy of a LazyArray: writes to it silently lost), so lazy_numpy puts this
    wrapper in its place: a LazyArray gets a lazy view (``_views.strided``), anything
    else NumPy's own function."""
    def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
        if isinstance(x, LazyArray):
            return _views.strided(x, lambda p: original(p, shape, strides, subok, writeable))
        return original(x, shape, strides, subok, writeable)

    as_strided.__doc__ = original.__doc__
    as_strided._lazy_original = original
    return as_strided


def install_as_strided() -> None:
    from numpy.lib import _stride_tricks_impl

    if hasattr(_stride_tricks.as_strided, "_lazy_original"):
        return
    wrapped = _lazy_as_strided(_stride_tricks_impl.as_strided)
    _stride_tricks.as_strided = wrapped
    _stride_tricks_impl.as_strided = wrapped


install_as_strided()
