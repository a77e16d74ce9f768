"""``LazyArray``: an ndarray look-alike holding one ``lazycore.Tensor``.

Operators come from ``NDArrayOperatorsMixin`` and arrive as ufuncs in
``__array_ufunc__``, except where ``_operators`` replays a plan learned from that path
(``x * y``, ``x + 0.5``: the hot path of traced loops); ``np.*`` functions arrive in
``__array_function__``; both are table-driven (``_ufuncs``, ``_functions``). Methods delegate to the same ``np.*``
functions so that one implementation serves ``np.sum(a)`` and ``a.sum()``.
Observing a value (``__array__``, ``float()``, ``print``) syncs.
"""

from __future__ import annotations

import weakref

import numpy as np

import lazycore as lc

from . import _views

# bound by the package __init__ once the dispatch modules exist (avoids import cycles)
_dispatch = {}
# values known on the host when traced (an integer ``arange``), by their unchanged node:
# ``np.random.choice(np.arange(n), k)`` reads them with no sync (a write makes a new node)
HOST_KNOWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SCALARS = (bool, int, float, complex, np.bool_, np.number)  # element-write values


class LazyArray(np.lib.mixins.NDArrayOperatorsMixin):
    """A lazily computed NumPy array. Create with ``lazy_numpy.asarray`` & co."""

    # ``_v``: the value (for a view: as of storage version ``_ver``); ``_s``: the
    # ``lazycore.views.Storage`` shared with views, None until a view or a layout query
    # needs one; then ``_chain`` (lenses from the storage), ``_base`` (the owner, None
    # for the owner) and ``_probe`` (a host array with this array's layout, see _views).
    __slots__ = ("_v", "_s", "_chain", "_ver", "_base", "_probe", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, tensor: lc.Tensor):
        self._v = tensor
        self._s = None

    def __lazycore_tensor__(self) -> lc.Tensor:
        """The core handle (``lazycore.interop``: another frontend adopts it, no sync)."""
        return self._t

    @property
    def _t(self) -> lc.Tensor:
        """The current value; a view re-derives it once its storage was written."""
        s = self._s
        if s is not None and self._ver != s.version:
            self._v = _views.derive(s.value, self._chain)
            self._ver = s.version
        return self._v

    @_t.setter
    def _t(self, value: lc.Tensor) -> None:
        """Store a new value (same shape and dtype): every write of lazy_numpy lands
        here, so writes through views reach their base and its other views."""
        if self._s is None:
            self._v = value
        else:
            _views.write(self, value)

    # -- NumPy protocols ----------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _dispatch["ufunc"](ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _dispatch["function"](func, types, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a LazyArray cannot be exposed without a copy")
        known = HOST_KNOWN.get(self._t.node)
        host = known.copy() if known is not None else lc.to_numpy(self._t, cause="host_transfer")
        return host if dtype is None else host.astype(dtype, copy=False)

    def __array_namespace__(self, *, api_version=None):
        from . import array_api

        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}")
        return array_api

    # -- attributes (no sync) ------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._t.shape

    @shape.setter
    def shape(self, value):
        _views.set_shape(self, value)

    # -- memory layout (NumPy's own answers, from a host probe with this layout) ---------
    @property
    def base(self):
        return self._base if self._s is not None else None

    @property
    def strides(self) -> tuple[int, ...]:
        return _views.probe(self).strides

    @property
    def flags(self):
        return _views.probe(self).flags

    def setflags(self, write=None, align=None, uic=None) -> None:
        _views.probe(self).setflags(write=write, align=align, uic=uic)

    @property
    def dtype(self) -> np.dtype:
        return self._t.dtype

    @property
    def ndim(self) -> int:
        return self._t.ndim

    @property
    def size(self) -> int:
        return self._t.size

    @property
    def itemsize(self) -> int:
        return self._t.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._t.size * self._t.dtype.itemsize

    @property
    def T(self) -> LazyArray:  # noqa: N802 - NumPy's name
        return _views.reversed_axes(self) if type(self) is LazyArray else np.transpose(self)

    @property
    def mT(self) -> LazyArray:  # noqa: N802 - NumPy's name
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return np.swapaxes(self, -1, -2)

    @property
    def real(self) -> LazyArray:
        return np.real(self)

    @property
    def imag(self) -> LazyArray:
        return np.imag(self)

    @property
    def flat(self):
        return _views.FlatIter(self)

    @flat.setter
    def flat(self, value):
        _views.FlatIter(self)[...] = value

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def tensor(self) -> lc.Tensor:
        """The core handle (for interop with other lazycore frontends)."""
        return self._t

    # -- observation (syncs) ---------------------------------------------------------
    @lc.diagnostics.observes("print")
    def __repr__(self) -> str:  # a 0-d value stands for a NumPy scalar: np.int64(3)
        return repr(self.__array__()[()] if self.ndim == 0 else self.__array__())

    @lc.diagnostics.observes("item")
    def __hash__(self) -> int:  # 0-d as NumPy scalars: dict keys (for label in y: d[label])
        if self.ndim:
            raise TypeError("unhashable type: 'numpy.ndarray'")
        return hash(self.__array__()[()])

    @lc.diagnostics.observes("print")
    def __str__(self) -> str:
        return str(self.__array__())

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    @lc.diagnostics.observes("control_flow")
    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.__array__())

    @lc.diagnostics.observes("item")
    def __float__(self) -> float:
        return float(self._scalar())

    @lc.diagnostics.observes("item")
    def __int__(self) -> int:
        return int(self._scalar())

    @lc.diagnostics.observes("item")
    def __complex__(self) -> complex:
        return complex(self._scalar())

    @lc.diagnostics.observes("item")
    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._scalar())

    def _scalar(self):  # NumPy 2.4: an array of one element with ndim > 0 is no scalar
        if self.ndim:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return self.__array__()[()]

    @lc.diagnostics.observes("item")
    def item(self, *args):
        return self.__array__().item(*args)

    def tolist(self):
        return self.__array__().tolist()

    def tobytes(self, order="C") -> bytes:
        return self.__array__().tobytes(order)

    def numpy(self) -> np.ndarray:
        """A host ndarray copy (syncs)."""
        return self.__array__()

    def __copy__(self):
        return LazyArray(self._t)  # a new owner: values are immutable, so no data moves

    def __deepcopy__(self, memo):
        return LazyArray(self._t)

    @lc.diagnostics.observes("print")
    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.__array__()[()], spec)  # as NumPy scalars format
        return format(self.__array__(), spec)

    def __round__(self, ndigits=None):
        """0-d arrays stand in for NumPy scalars (``round(x.mean(), 2)``); NumPy arrays
        have no ``__round__``."""
        if self.ndim:
            raise TypeError("type numpy.ndarray doesn't define __round__ method")
        return round(self.__array__()[()], ndigits)

    def __reduce__(self):
        from . import _creation

        return (_creation.asarray, (self.__array__(),))

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, key):
        return _dispatch["getitem"](self, key)

    def __setitem__(self, key, value):
        if (isinstance(value, _SCALARS) and type(self) is LazyArray
                and _dispatch["set_element"](self, key, value)):
            return  # ``a[i, j] = 3.0``: held in the storage, no graph node
        _dispatch["setitem"](self, key, value)

    # -- methods: thin aliases of the np.* functions (one implementation each) -----------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return _dispatch["astype"](self, dtype, casting, copy)

    def copy(self, order="C"):
        return LazyArray(self._t)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = shape[0]
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def flatten(self, order="C"):  # always a copy, ravel's view or not
        return np.ravel(self, order=order).copy()

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def fill(self, value) -> None:
        self[...] = value

    def sort(self, axis=-1, kind=None, order=None, *, stable=None) -> None:
        self._t = np.sort(self, axis=axis, kind=kind, order=order)._t

    def partition(self, kth, axis=-1, kind="introselect", order=None) -> None:
        self._t = np.partition(self, kth, axis=axis, kind=kind, order=order)._t

    def compress(self, condition, axis=None, out=None):
        return np.compress(condition, self, axis=axis, out=out)

    def view(self, dtype=None, type=None):  # noqa: A002 - NumPy's name
        if type is not None and type is not np.ndarray:
            raise TypeError("LazyArray.view: ndarray subclasses (type=) are not supported")
        return _views.same_view(self) if dtype is None else _views.view_dtype(self, dtype)

    def to_device(self, device, /, *, stream=None):
        return self

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.__array__().__dlpack__(stream=stream, max_version=max_version,
                                           dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (1, 0)


def _method(name, np_name=None):
    fn = getattr(np, np_name or name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``numpy.{np_name or name}(self, ...)``."
    return method


# ndarray methods that are just the np.* function with the array first
METHOD_ALIASES = {
    "all": None, "any": None, "argmax": None, "argmin": None, "argpartition": None,
    "argsort": None, "choose": None, "clip": None, "conj": None, "put": None,
    "conjugate": None, "cumprod": None, "cumsum": None, "diagonal": None, "dot": None,
    "max": None, "mean": None, "min": None, "nonzero": None,
    "prod": None, "repeat": None, "round": None, "searchsorted": None,
    "squeeze": None, "std": None, "sum": None, "swapaxes": None, "take": None,
    "trace": None, "var": None,
}
for _name, _np_name in METHOD_ALIASES.items():
    setattr(LazyArray, _name, _method(_name, _np_name))
