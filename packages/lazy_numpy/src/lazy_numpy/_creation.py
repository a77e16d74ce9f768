"""Array creation: ``lnp.asarray/array/zeros/ones/empty/full/arange/linspace/eye/...``
and the ``*_like`` functions (which NumPy dispatches through ``__array_function__``).

Defaults follow NumPy: float64 for ``zeros``/``ones``, int64 for integer ``arange``.
"""

from __future__ import annotations

import functools

import numpy as np

import lazycore as lc

from . import _fallback
from ._array import HOST_KNOWN, LazyArray
from ._convert import HostOnlyDtype, check_dtype, normalize_dtype, numpy_errors, tensor
from ._registry import implements

num = lc.numeric
ops = lc.ops
_FLOAT = np.dtype(np.float64)
_HOST_KNOWN_MAX = 1 << 20  # elements of an integer arange also kept on the host


def numpys_for_host_dtypes(np_func):
    """The decorated creation function, or NumPy's own ``np_func`` (a host array, counted
    as a fallback) where the dtype is one no LazyArray holds: ``np.array(['cat', 'dog'])``,
    ``np.zeros(3, dtype=object)``, ``np.empty(2, dtype='U5')``."""
    def wrap(fn):
        @functools.wraps(fn)
        def create(*args, like=None, **kwargs):
            try:
                return fn(*args, **kwargs)
            except HostOnlyDtype:
                return _fallback.run(np_func.__name__, np_func, args, kwargs)
        return create
    return wrap


def _shape(shape):
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


@numpys_for_host_dtypes(np.asarray)
@numpy_errors
def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None) -> LazyArray:
    """Wrap host data (or a LazyArray) as a LazyArray; the one place user data enters.

    A LazyArray comes back as itself where NumPy would (no dtype change, ``copy`` not
    True); ``copy=True`` gives a new array (a new owner: nothing is moved)."""
    if isinstance(a, LazyArray):
        same = dtype is None or np.dtype(dtype) == a.dtype
        if copy is False and not same:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        if same:
            return LazyArray(a._t) if copy else a
        return a.astype(dtype)
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    dtype = normalize_dtype(dtype)
    if not isinstance(a, lc.Tensor) and lc.interop.unwrap(a) is not None:
        a = lc.interop.adopt(a)  # a lazy torch/TF value: same trace, no sync
    if isinstance(a, lc.Tensor):
        return LazyArray(a if dtype is None else num.cast(a, dtype))
    if isinstance(a, bool | int | float | complex | np.generic) or (
            isinstance(a, list | tuple) and not _has_lazy(a)):
        host = np.asarray(a, dtype=dtype)
        check_dtype(host.dtype)
        return LazyArray(lc.asarray(host))
    return LazyArray(tensor(a, dtype))


def _has_lazy(v) -> bool:
    if isinstance(v, LazyArray):
        return True
    return isinstance(v, list | tuple) and any(_has_lazy(u) for u in v)


@numpys_for_host_dtypes(np.array)
def array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """``np.array`` as a LazyArray, a copy by default. ``copy=False`` raises ValueError
    unless ``obj`` is a LazyArray of that dtype (host data is always copied to the
    device); ``ndmin`` adds leading axes."""
    out = asarray(obj, dtype, copy=copy)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


@numpys_for_host_dtypes(np.asanyarray)
def asanyarray(a, dtype=None, order=None, *, like=None):
    """``np.asanyarray``: the same as ``asarray`` (LazyArray is the only array subclass here)."""
    return asarray(a, dtype)


@numpys_for_host_dtypes(np.ascontiguousarray)
def ascontiguousarray(a, dtype=None, *, like=None):
    """``np.ascontiguousarray``: ``a`` itself if it is a C-contiguous LazyArray of that
    dtype (writes through the result reach ``a``, as NumPy's), else a copy; at least 1-d."""
    out = asarray(a, dtype)
    out = out.copy() if out is a and not a.flags.c_contiguous else out
    return out if out.ndim else out.reshape(1)


@numpys_for_host_dtypes(np.full)
@numpy_errors
def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None) -> LazyArray:
    """A lazy array of ``shape`` filled with ``fill_value`` (a LazyArray fill stays on device)."""
    return _full(shape, fill_value, dtype)


def _full(shape, fill_value, dtype):
    if isinstance(fill_value, LazyArray):
        dt = normalize_dtype(dtype) or fill_value.dtype
        return LazyArray(num.broadcast_to(num.cast(fill_value._t, dt), _shape(shape)))
    dt = normalize_dtype(dtype) or np.asarray(fill_value).dtype
    check_dtype(dt)
    return LazyArray(num.full(_shape(shape), np.asarray(fill_value).astype(dt)[()], dt))


@numpys_for_host_dtypes(np.zeros)
@numpy_errors
def zeros(shape, dtype=float, order="C", *, device=None, like=None) -> LazyArray:
    """``np.zeros`` on the device: float64 unless ``dtype`` says otherwise."""
    return _full(shape, 0, dtype if dtype is not None else _FLOAT)


@numpys_for_host_dtypes(np.ones)
@numpy_errors
def ones(shape, dtype=None, order="C", *, device=None, like=None) -> LazyArray:
    """``np.ones`` on the device: float64 unless ``dtype`` says otherwise."""
    return _full(shape, 1, dtype if dtype is not None else _FLOAT)


@numpys_for_host_dtypes(np.empty)
def empty(shape, dtype=float, order="C", *, device=None, like=None) -> LazyArray:
    """Zeros: an uninitialized lazy array would still need a defined value."""
    return zeros(shape, dtype)


@numpys_for_host_dtypes(np.arange)
@numpy_errors
def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None) -> LazyArray:
    """``np.arange``: ``ceil((stop - start) / step)`` elements, computed in int64 for an
    integer dtype and in the dtype's own fill type for a float one, then cast."""
    check_dtype(getattr(start, "dtype", None) or np.asarray(start).dtype)  # dates: NumPy's
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("division by zero")
    args = [v for v in (start, stop, step) if v is not None]
    dt = normalize_dtype(dtype) or np.result_type(*args)
    if stop is None:
        start, stop = 0, start
    n = max(0, int(np.ceil((stop - start) / step)))
    # NumPy's fill loops: the step is element 1 minus element 0, both stored in dtype
    # (int(0.5 + 1.5) - int(0.5) == 2), then start + i * step in the loop's type
    if dt.kind in "biu":
        out = LazyArray(num.arange(int(start), step=int(start + step) - int(start),
                                   dtype=dt, length=n))
        if dt.kind in "iu" and n <= _HOST_KNOWN_MAX and all(
                isinstance(v, int | np.integer) for v in (start, stop, step)):
            HOST_KNOWN[out._t.node] = np.arange(start, stop, step, dtype=dt)  # NumPy's own
        return out
    work = np.dtype(np.float32) if dt == np.float16 else dt
    first = work.type(dt.type(start))
    step = work.type(dt.type(start + step)) - first
    return LazyArray(num.arange(first, step=step, dtype=dt, length=n, work_dtype=work))


@numpy_errors
def linspace(start, stop, num_=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None, num=None):
    """``np.linspace`` for scalar ``start``/``stop`` (array endpoints or ``axis`` raise
    NotImplementedError rather than guess)."""
    count = num_ if num is None else num
    if count < 0:
        raise ValueError(f"Number of samples, {count}, must be non-negative.")
    if np.ndim(start) or np.ndim(stop) or axis != 0:
        raise NotImplementedError("lazy_numpy.linspace takes scalar start/stop")
    dt = normalize_dtype(dtype) or np.result_type(start, stop, float(count))
    out = LazyArray(lc.numeric.linspace(start, stop, count, endpoint, np.float64))
    if dt.kind in "iu":
        out = LazyArray(lc.ops.floor(out._t))
    out = out.astype(dt)
    if retstep:
        div = (count - 1) if endpoint else count
        return out, (stop - start) / div if div > 0 else np.nan
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace``: ``base ** linspace(start, stop)``, traced."""
    y = linspace(start, stop, num, endpoint)
    out = np.power(base, y)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``np.geomspace``: a geometric sequence from ``start`` to ``stop`` (zero raises
    ValueError like NumPy)."""
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    out = logspace(np.log10(start), np.log10(stop), num, endpoint)
    return out if dtype is None else out.astype(dtype)


@numpy_errors
def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):  # noqa: N803
    """``np.eye``: ones on diagonal ``k`` of an ``N x M`` array, built on the device."""
    return LazyArray(num.eye(int(N), None if M is None else int(M), int(k),
                             normalize_dtype(dtype) or _FLOAT))


def identity(n, dtype=None, *, like=None):
    """``np.identity``: the ``n x n`` identity (float64 by default)."""
    return eye(n, dtype=dtype if dtype is not None else _FLOAT)


@numpy_errors
def tri(N, M=None, k=0, dtype=float, *, like=None):  # noqa: N803
    """``np.tri``: ones at and below diagonal ``k``."""
    mask = num.tri_mask(int(N), int(N if M is None else M), int(k))
    return LazyArray(num.cast(mask, normalize_dtype(dtype) or _FLOAT))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``np.fromfunction``: calls ``function`` once with lazy index grids (so it must be
    vectorised, as in NumPy)."""
    grids = indices(shape, dtype=dtype)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


@numpy_errors
def indices(dimensions, dtype=int, sparse=False):
    """``np.indices``: one index grid per dimension, stacked (a tuple of broadcastable
    grids with ``sparse=True``)."""
    dims = _shape(dimensions)
    dt = normalize_dtype(dtype)
    grids = [ops.iota(dtype=dt, shape=dims, dimension=i) for i in range(len(dims))]
    if sparse:
        return tuple(LazyArray(num.getitem(g, tuple(slice(None) if j == i else slice(0, 1)
                                                    for j in range(len(dims)))))
                     for i, g in enumerate(grids))
    return LazyArray(num.stack(grids, 0)) if grids else LazyArray(
        num.zeros((0,), dt))


# -- *_like: NumPy dispatches these to us ---------------------------------------------------

def _like(prototype, dtype, shape):
    dt = normalize_dtype(dtype) or np.result_type(prototype.dtype if hasattr(
        prototype, "dtype") else np.asarray(prototype).dtype)
    check_dtype(dt)
    shp = np.shape(prototype) if shape is None else _shape(shape)
    return dt, shp


@implements(np.zeros_like)
@numpys_for_host_dtypes(np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros with ``a``'s shape and dtype (NumPy dispatches ``np.zeros_like`` here)."""
    dt, shp = _like(a, dtype, shape)
    return LazyArray(num.zeros(shp, dt))


@implements(np.ones_like)
@numpys_for_host_dtypes(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones with ``a``'s shape and dtype (NumPy dispatches ``np.ones_like`` here)."""
    dt, shp = _like(a, dtype, shape)
    return LazyArray(num.ones(shp, dt))


@implements(np.empty_like)
@numpys_for_host_dtypes(np.empty_like)
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros with ``prototype``'s shape and dtype: an uninitialized lazy array would
    still need a defined value."""
    dt, shp = _like(prototype, dtype, shape)
    return LazyArray(num.zeros(shp, dt))


@implements(np.full_like)
@numpys_for_host_dtypes(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``fill_value`` with ``a``'s shape and dtype (NumPy dispatches ``np.full_like`` here)."""
    dt, shp = _like(a, dtype, shape)
    if isinstance(fill_value, LazyArray):
        return LazyArray(num.broadcast_to(num.cast(fill_value._t, dt), shp))
    if dt.kind in "iu" and isinstance(fill_value, float):
        fill_value = int(fill_value)
    return LazyArray(num.full(shp, np.asarray(fill_value).astype(dt)[()], dt))



# -- NEP 35: np.zeros(..., like=lazy) and friends dispatch here ----------------------------------

def _drop_like(fn):
    def impl(*args, **kwargs):
        kwargs.pop("like", None)
        return fn(*args, **kwargs)
    impl.__name__ = fn.__name__
    return impl


for _np_func, _impl in ((np.zeros, zeros), (np.ones, ones), (np.empty, empty),
                        (np.full, full), (np.arange, arange), (np.eye, eye),
                        (np.identity, identity), (np.array, array), (np.asarray, asarray),
                        (np.asanyarray, asanyarray), (np.tri, tri)):
    implements(_np_func)(_drop_like(_impl))
