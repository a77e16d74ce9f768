"""Moving between user values and core tensors, and NumPy's exception types.

Everything that turns a user argument into an ``lc.Tensor`` (or back into a
``LazyArray``) goes through here, so the promotion keys handed to NumPy's type
resolution and the leaves given to the core agree in one place.
"""

from __future__ import annotations

import functools

import numpy as np

import lazycore as lc

from ._array import LazyArray

PY_SCALARS = (bool, int, float, complex)


def is_lazy(x) -> bool:
    return isinstance(x, LazyArray)


def wrap(t):
    """Core results (a Tensor, or a tuple/list of them) -> LazyArrays."""
    if isinstance(t, lc.Tensor):
        return LazyArray(t)
    if isinstance(t, tuple | list):
        return type(t)(wrap(v) for v in t)
    return t


def promotion_key(x):
    """What NumPy's type resolution sees: a dtype, or ``int``/``float``/``complex``
    for a weak Python scalar (NEP 50)."""
    if isinstance(x, LazyArray):
        return x._t.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    if type(x) in (int, float, complex):
        return type(x)
    if isinstance(x, np.ndarray | np.generic):
        return x.dtype
    return np.asarray(x).dtype


def tensor(x, dtype=None) -> lc.Tensor:
    """Any array-like -> a core Tensor (cast to ``dtype`` when given).

    Python scalars become program parameters (values never recompile); NumPy data
    becomes device data. Out-of-range Python ints raise ``OverflowError`` as in NumPy.
    """
    if isinstance(x, LazyArray):
        t = x._t
        return t if dtype is None else lc.numeric.cast(t, dtype)
    if isinstance(x, lc.Tensor):
        return x if dtype is None else lc.numeric.cast(x, dtype)
    if isinstance(x, PY_SCALARS) or (isinstance(x, np.generic) and x.dtype.kind in "biufc"):
        dt = np.dtype(dtype) if dtype is not None else promotion_dtype(x)
        if isinstance(x, complex) and dt.kind != "c":
            raise TypeError(f"cannot cast complex scalar {x!r} to {dt}")
        return lc.scalar(x, dt)
    if isinstance(x, list | tuple) and any(_contains_lazy(v) for v in x):
        from . import _shape

        return _shape.stack_nested(x, dtype)
    arr = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    check_dtype(arr.dtype)
    return lc.asarray(arr)


def promotion_dtype(x) -> np.dtype:
    """The dtype a value gets on its own (Python int -> int64, float -> float64)."""
    key = promotion_key(x)
    if isinstance(key, type):
        return {int: np.dtype(np.int64), float: np.dtype(np.float64),
                complex: np.dtype(np.complex128)}[key]
    return key


def cast_like_c(t: lc.Tensor, dt) -> lc.Tensor:
    """``t`` in ``dt`` as NumPy's C casts: a float goes to a narrower integer through int64,
    so it wraps (300.0 -> uint8 44, -1.0 -> uint32 4294967295) where XLA saturates."""
    if t.dtype.kind == "f" and dt.kind in "iu" and dt.itemsize < 8 and dt != np.int32:
        t = lc.numeric.cast(t, np.int64)
    return lc.numeric.cast(t, dt)


class HostOnlyDtype(TypeError):
    """A dtype no LazyArray holds (strings, objects, dates, records, long double): array
    creation gives NumPy's own array instead (``_creation.numpys_for_host_dtypes``)."""


def check_dtype(dt) -> None:
    dt = np.dtype(dt)
    if dt.kind not in "biufc" or dt.itemsize > (16 if dt.kind == "c" else 8):
        raise HostOnlyDtype(f"lazy_numpy arrays cannot hold dtype {dt}")


def _contains_lazy(v) -> bool:
    if isinstance(v, LazyArray):
        return True
    if isinstance(v, list | tuple):
        return any(_contains_lazy(u) for u in v)
    return False


def unwrap_host(x):
    """For calls into real NumPy: LazyArrays (also nested) -> ndarrays."""
    if isinstance(x, LazyArray):
        return x.__array__()
    if isinstance(x, list):
        return [unwrap_host(v) for v in x]
    if isinstance(x, tuple):
        return tuple(unwrap_host(v) for v in x)
    if isinstance(x, dict):
        return {k: unwrap_host(v) for k, v in x.items()}
    return x


def normalize_dtype(dtype):
    if dtype is None:
        return None
    dt = np.dtype(dtype)
    check_dtype(dt)
    return dt


def numpy_errors(fn):
    """Translate core errors into the exception types NumPy raises."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except lc.AxisError as e:
            raise np.exceptions.AxisError(_message(e)) from None
        except lc.ShapeError as e:
            raise ValueError(_message(e)) from None
        except lc.DTypeError as e:
            raise TypeError(_message(e)) from None
        except lc.errors.IndexOutOfRange as e:
            raise IndexError(_message(e)) from None
    return wrapper


def _message(e) -> str:
    return str(e.args[0]) if e.args else str(e)
