"""lazy_numpy: NumPy programs traced, fused and compiled by lazycore.

Wrap the inputs once; the rest of an ordinary NumPy program (``np.*`` functions,
operators, methods, indexing) records into one graph that compiles on first use:

>>> import numpy as np, lazy_numpy as lnp
>>> a = lnp.asarray(np.arange(4.0))
>>> b = np.exp(-a) * np.sin(a) + a.mean()    # NumPy's own functions, traced
>>> float(b[b > 1.6].sum().round(6))         # observing a value syncs
3.634221
"""

from __future__ import annotations

import os as _os

import numpy as _np

import lazycore as _lc

from . import (
    _array,
    _fallback,
    _indexing,
    _linalg,
    _operators,
    _reductions,
    _registry,
    _shape,
    _ufuncs,
)
from ._array import LazyArray
from ._convert import cast_like_c as _cast_like_c
from ._convert import numpy_errors as _numpy_errors
from ._creation import (
    arange,
    array,
    asanyarray,
    asarray,
    ascontiguousarray,
    empty,
    empty_like,
    eye,
    fromfunction,
    full,
    full_like,
    geomspace,
    identity,
    indices,
    linspace,
    logspace,
    ones,
    ones_like,
    tri,
    zeros,
    zeros_like,
)

metrics = _lc.metrics
ndarray = LazyArray
newaxis = None
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan


def sync(*arrays, wait: bool = False) -> None:
    """Compute pending values: the given LazyArrays, or every live one (the step barrier)."""
    if arrays:
        _lc.sync([a._t for a in arrays if isinstance(a, LazyArray)], wait=wait)
    else:
        _lc.sync(wait=wait)


def _astype(a, dtype, casting="unsafe", copy=True):
    dt = _np.dtype(dtype)
    if not _np.can_cast(a.dtype, dt, casting):
        raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dt!r} according to the "
                        f"rule '{casting}'")
    if dt.kind not in "biufc":  # strings, objects, dates: NumPy's host array (counted)
        return _fallback.run("ndarray.astype", lambda host: host.astype(dt), (a,), {})
    return a if not copy and dt == a.dtype else LazyArray(_cast_like_c(a._t, dt))


_array._dispatch.update(
    ufunc=_operators.ufunc_call,
    function=_registry.array_function,
    getitem=_indexing.getitem,
    setitem=_indexing.setitem,
    set_element=_indexing.set_element,
    astype=_numpy_errors(_astype),
)
_operators.install()  # planned Python operators over the mixin's ufunc calls

_lc.register_internal_path(_os.path.dirname(_os.path.abspath(__file__)))
_lc.register_internal_path(_os.path.dirname(_np.__file__))  # the mixin's operators: not user code

from . import random  # noqa: E402  (needs the dispatch wiring above)


@_numpy_errors
def mark_sharding(a: LazyArray, mesh: _lc.Mesh, spec) -> LazyArray:
    """Split ``a`` over a ``lazycore.Mesh``: one spec entry per dimension, a mesh axis
    name or index, a tuple of them, or None. In place; returns ``a``. See
    ``lazycore.mark_sharding`` and docs/scaling.md."""
    if not isinstance(a, LazyArray):
        raise TypeError(f"mark_sharding expects a LazyArray, got {type(a).__name__}")
    _lc.mark_sharding(a._t, mesh, spec)
    return a


FUNCTIONS = _registry.FUNCTIONS
__all__ = [
    "FUNCTIONS", "LazyArray", "arange", "array", "asanyarray", "asarray",
    "ascontiguousarray", "empty",
    "empty_like", "eye", "fromfunction", "full", "full_like", "geomspace", "identity",
    "indices", "linspace", "logspace", "metrics", "ndarray", "newaxis", "ones", "ones_like",
    "random", "sync", "tri", "zeros", "zeros_like",
]
__all__ += ["mark_sharding"]

from . import debug  # noqa: E402  (IR / HLO of pending values)
from ._interop import from_lazy  # noqa: E402  (one trace across frontends)
from ._loader import DeviceLoader  # noqa: E402  (batches copied to the device ahead)

__all__ += ["DeviceLoader", "__version__", "debug"]
__version__ = "0.1.0"  # the release; pyproject.toml pins lazycore to the same


def __getattr__(name: str):
    """``import lazy_numpy as np``: what lazy_numpy does not define is NumPy's own
    (``np.sum``, ``np.linalg``, ``np.float32``), whose functions dispatch LazyArrays here
    (defined last: ``from . import random`` above must find the submodule)."""
    return getattr(_np, name)
