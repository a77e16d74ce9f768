"""NumPy's view semantics for LazyArrays: which results are views, and their layout.

A view shares its base's ``lazycore.views.Storage``: a write through any of them
reaches the others (``b = a[2:5]; b[:] = 0`` changes ``a``). Which operations return
views, and the honest ``strides``/``flags``/``base``/``shares_memory``, come from NumPy
itself: every array sharing a storage carries a *probe*, a host ndarray with the same
layout over a zero-filled buffer of the owner's size (``np.zeros``: untouched pages, no
real memory), and the same operation is applied to the probe. Where NumPy's result is a
view of the probe's buffer the lazy result is a view; otherwise it is a new array.
Read-only views (``broadcast_to``, ``diagonal``) and ``setflags(write=False)`` come
with the probe's flags.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc
from lazycore import views as core_views

derive = core_views.derive


_CLASS: list = []  # LazyArray, imported once (``_array`` imports this module)


def _lazy_array():
    if not _CLASS:
        from ._array import LazyArray
        _CLASS.append(LazyArray)
    return _CLASS[0]


def _new_array():
    cls = _lazy_array()
    return cls.__new__(cls)


def _storage(a):
    """Give the owner ``a`` a storage and a probe (views and layout queries need them)."""
    if a._s is None:
        a._s = core_views.Storage(a._v)
        a._chain = ()
        a._ver = 0
        a._base = None
        a._probe = np.zeros(a._v.shape, a._v.dtype)
    return a


def probe(a) -> np.ndarray:
    """The host ndarray with ``a``'s layout (NumPy answers layout questions on it)."""
    a._t  # noqa: B018 - a pending masked selection settles its shape first
    return _storage(a)._probe


def _root(q):
    while isinstance(q, np.ndarray) and q.base is not None:
        q = q.base
    return q


def view(src, value, lens, on_probe):
    """The result ``value`` of a view operation on ``src``: a view sharing ``src``'s
    storage where NumPy's ``on_probe(probe)`` is a view, else a new array."""
    cls = _lazy_array()
    if not isinstance(src, cls):
        return cls(value)
    p = probe(src)
    q = on_probe(p)
    if not isinstance(q, np.ndarray) or q is p or _root(q) is not _root(p):
        return cls(value)
    return _attach(src, value, src._chain + (lens,), q)


def _attach(src, value, chain, q):
    """A new array object over ``src``'s storage, reached by ``chain``, laid out as ``q``."""
    out = _new_array()
    s = src._s
    out._v = value
    out._s = s
    out._chain = chain
    out._ver = s.version
    out._base = src._base if src._base is not None else src
    out._probe = q
    return out


def same_view(a):
    """``a.view()``: a new array object over the same memory."""
    return view(a, a._t, core_views.Lens(lambda p: p, lambda p, c: c), lambda p: p.view())


def write(a, value) -> None:
    """Store ``value`` into ``a`` (its storage, so views and the base see it)."""
    if not a._probe.flags.writeable:
        raise ValueError("assignment destination is read-only")
    s = a._s
    s.value = core_views.put(s.value, a._chain, value) if a._chain else value
    s.version += 1
    a._v = value
    a._ver = s.version
    if any(isinstance(lens, _Overlapping) for lens in a._chain):
        a._ver = -1  # elements sharing memory: read back what the write left


def set_shape(a, shape) -> None:
    """``a.shape = shape``: in place where NumPy can (AttributeError where not)."""
    from ._shape import reshape

    new = reshape(a, shape)._t
    if a._s is None:
        a._v = new
        return
    a._probe.shape = new.shape
    a._chain = a._chain + (core_views.reshape_lens(new.shape),)
    a._v = new
    a._ver = a._s.version


def shares_memory(a, b) -> bool:
    """Exact overlap of two arrays' memory, answered by NumPy on their probes."""
    from ._array import LazyArray

    if not (isinstance(a, LazyArray) and isinstance(b, LazyArray)):
        return False
    if a._s is None or b._s is None or a._s is not b._s:
        return a is b and a.size > 0
    return bool(np.shares_memory(a._probe, b._probe))


# -- the view operations' lenses ------------------------------------------------------------

def index(src, value, key):
    """``src[key]`` for a basic key (ints, slices, None, ...). NumPy's basic indexing of
    an ndarray always gives a view of its memory (a scalar where every axis is indexed),
    so a plain LazyArray skips ``view``'s checks (the hot read of stencil loops)."""
    cls = _lazy_array()
    if type(src) is not cls:
        return view(src, value, core_views.index_lens(key, src.ndim), lambda p: p[key])
    p = (src if src._s is not None else _storage(src))._probe
    q = p[key]
    if type(q) is not np.ndarray:
        return cls(value)
    return _attach(src, value, src._chain + (core_views.index_lens(key, p.ndim),), q)


_TRANSPOSES: dict = {}  # perm -> its lens (a loop's ``x.T`` reuses one)


def transpose(src, value, perm):
    perm = tuple(int(d) for d in perm)
    lens = _TRANSPOSES.get(perm)
    if lens is None:
        if len(_TRANSPOSES) > 4096:
            _TRANSPOSES.clear()
        lens = _TRANSPOSES[perm] = core_views.transpose_lens(perm)
    return view(src, value, lens, lambda p: p.transpose(perm))


def reversed_axes(a):
    """``a.T`` without NumPy's dispatch: the nodes and view ``np.transpose(a)`` makes."""
    x = a._t
    perm = tuple(range(x.ndim - 1, -1, -1))
    return transpose(a, x if x.ndim < 2 else core_views.ops.transpose(x, permutation=perm),
                     perm)


def reshape(src, value):
    """A result with ``src``'s elements in C order under a new shape (reshape, ravel,
    squeeze, expand_dims, atleast_*)."""
    shape = value.shape
    return view(src, value, core_views.reshape_lens(shape),
                lambda p: np.reshape(p, shape, copy=None))


def general(src, value, get, on_probe, put=None):
    """Any other view (flip, diagonal, broadcast_to, real/imag ...): re-derived by
    ``get``, written by ``put`` (default: a scatter at the positions ``get`` reads)."""
    return view(src, value, core_views.Lens(get, put), on_probe)


# -- view(dtype): the same bytes read as another dtype ------------------------------------------

def reinterpret(x, dt: np.dtype):
    """``x``'s bytes read as ``dt`` (the last axis rescaled by the item-size ratio)."""
    return lc.numeric.reinterpret(x, dt)


def view_dtype(a, dtype):
    """``a.view(dtype)``: a view sharing ``a``'s memory (writes through either show in
    the other); NumPy's own checks on the probe raise its errors (a non-contiguous last
    axis, a 0-d array changing item size)."""
    if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
        if dtype is not np.ndarray:
            raise TypeError("LazyArray.view: ndarray subclasses are not supported")
        return same_view(a)
    dt = np.dtype(dtype)
    if dt.kind not in "biufc":  # void rows, strings: NumPy's view of a host copy
        return np.asarray(a).view(dt)
    src = a.dtype
    if dt == src:
        return same_view(a)
    probe(a).view(dt)  # NumPy's ValueError where it has one
    lens = core_views.Lens(lambda p: reinterpret(p, dt), lambda p, c: reinterpret(c, src))
    return view(a, reinterpret(a._t, dt), lens, lambda p: p.view(dt))


# -- a.flat --------------------------------------------------------------------------------------

def _unflat(v):
    if isinstance(v, FlatIter):
        return v._flat()
    if isinstance(v, list | tuple):
        return type(v)(_unflat(x) for x in v)
    if isinstance(v, dict):
        return {k: _unflat(x) for k, x in v.items()}
    return v


class FlatIter:
    """``a.flat``: NumPy's ``flatiter`` over a LazyArray -- reads are copies in C order
    (``a.flat[1:4]``, ``a.flat[[0, 5]]``), writes go into ``a`` (and so into its base
    and other views), a value shorter than the selection repeats as NumPy's does."""

    __slots__ = ("base", "index")

    def __init__(self, base):
        self.base = base
        self.index = 0

    def _flat(self):
        from ._array import LazyArray

        a = self.base
        return LazyArray(lc.ops.reshape(a._t, new_sizes=(a.size,)))  # a new owner: a copy

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self):
        return self

    def __next__(self):
        if self.index >= self.base.size:
            raise StopIteration
        self.index += 1
        return self._flat()[self.index - 1]

    @property
    def coords(self) -> tuple:
        return tuple(int(i) for i in np.unravel_index(self.index, self.base.shape))

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value) -> None:
        from . import _creation

        a = self.base
        if not probe(a).flags.writeable:
            raise ValueError("underlying array is read-only")
        flat = self._flat()
        picked = flat[key].shape
        v = _creation.asarray(value).astype(a.dtype).ravel()
        n = int(np.prod(picked))
        if v.size != n and v.size:  # NumPy repeats the value over the selection
            v = np.concatenate([v] * -(-n // v.size))[:n]
        flat[key] = v.reshape(picked) if v.size == n else v
        a._t = lc.ops.reshape(flat._t, new_sizes=a.shape)

    def __array__(self, dtype=None, copy=None):
        return self._flat().__array__(dtype)

    # NumPy functions and ufuncs of a flatiter see its 1-D copy (and stay lazy)
    def __array_function__(self, func, types, args, kwargs):
        return func(*_unflat(args), **_unflat(kwargs))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            return NotImplemented  # NumPy cannot write through a flatiter either
        return getattr(ufunc, method)(*_unflat(inputs), **kwargs)

    def copy(self):
        return self._flat()

    def __repr__(self) -> str:
        return f"<lazy_numpy flatiter over an array of shape {self.base.shape}>"


# -- as_strided / sliding_window_view: views at arbitrary positions of the memory ----------------

def strided(src, on_probe):
    """The view NumPy's ``on_probe(probe)`` makes of ``src``'s memory, however it was
    laid out (``as_strided``, ``sliding_window_view``): its elements are read from the
    storage by their flat positions, and writes scatter back -- where two elements share
    a position (overlapping windows), the last one written in C order wins, as NumPy's
    element-by-element copy leaves it. A layout NumPy would read from outside the
    array's memory, or between item boundaries, raises ValueError instead."""
    p = probe(src)
    q = on_probe(p)
    root = _root((src._base if src._base is not None else src)._probe)
    item = p.dtype.itemsize
    offset = q.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if offset % item or any(st % item for st in q.strides):
        raise ValueError("lazy_numpy: a strided view must start and step on whole items")
    pos = np.full(q.shape, offset // item, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(q.shape, q.strides, strict=True)):
        pos = pos + (np.arange(n, dtype=np.int64) * (st // item)).reshape(
            (n,) + (1,) * (q.ndim - axis - 1))
    if pos.size and (pos.min() < 0 or pos.max() >= root.size):
        raise ValueError("lazy_numpy: this strided view reaches outside the array's memory "
                         "(NumPy would read or write whatever lies there)")
    kind = core_views.Lens if np.unique(pos).size == pos.size else _Overlapping
    lens = kind(lambda v: _gather(v, pos), lambda v, c: _scatter(v, pos, c))
    value = _gather(src._s.value, pos)
    return _attach(src, value, (lens,), q)


class _Overlapping(core_views.Lens):
    """A lens whose elements share memory (a write to one changes others)."""

    __slots__ = ()


def _gather(value, pos):
    flat = lc.ops.reshape(value, new_sizes=(value.size,))
    return lc.numeric.take(flat, lc.asarray(pos), 0)


def _scatter(value, pos, child):
    """``value`` (the storage) with the view's elements ``child`` written back at their
    flat positions ``pos``; overlapping windows: the last element that changed wins."""
    return lc.numeric.write_positions(value, pos, child,
                                          last_changed=np.unique(pos).size != pos.size)
