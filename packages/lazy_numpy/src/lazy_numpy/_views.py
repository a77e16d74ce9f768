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

from lazycore import views as core_views

derive = core_views.derive


def _new_array():
    from ._array import LazyArray

    return LazyArray.__new__(LazyArray)


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
    from ._array import LazyArray

    if not isinstance(src, LazyArray):
        return LazyArray(value)
    p = probe(src)
    q = on_probe(p)
    if not isinstance(q, np.ndarray) or q is p or _root(q) is not _root(p):
        return LazyArray(value)
    out = _new_array()
    s = src._s
    out._v = value
    out._s = s
    out._chain = src._chain + (lens,)
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
    """``src[key]`` for a basic key (ints, slices, None, ...)."""
    return view(src, value, core_views.index_lens(key, src.ndim), lambda p: p[key])


def transpose(src, value, perm):
    perm = tuple(int(d) for d in perm)
    return view(src, value, core_views.transpose_lens(perm), lambda p: p.transpose(perm))


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
