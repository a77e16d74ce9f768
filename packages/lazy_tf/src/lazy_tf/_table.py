"""THE table: TensorFlow API name -> lazy implementation (core op or composite).

Every supported TF API is one ``Entry``. The family modules (``_api_*.py``) declare
entries; ``_dispatch`` installs TensorFlow dispatchers from this table and the docs'
supported-API list is generated from it. An implementation receives the TF call's
own arguments (same parameter names and defaults) and returns core handles.

* ``unary`` / ``binary``: elementwise APIs reached through TF's unary/binary
  elementwise dispatchers; ``target`` names the core op when it is one op.
* ``api``: everything else, through ``tf.experimental.dispatch_for_api``; ``tensors``
  names the parameters that may hold a lazy tensor, ``lists`` those holding lists.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import tensorflow as tf

import lazycore as lc


@dataclass(frozen=True)
class Entry:
    name: str             # canonical TF name without "tf.", e.g. "math.reduce_sum"
    kind: str             # "unary" | "binary" | "api"
    impl: Callable
    lowers_to: str        # core op(s) / composite(s), for the docs
    tensors: tuple = ()
    lists: tuple = ()


API: dict[str, Entry] = {}


def _add(entry: Entry) -> Entry:
    if entry.name in API:
        raise ValueError(f"TF API {entry.name!r} is already in the table")
    API[entry.name] = entry
    return entry


def resolve(name: str):
    """``"math.add"`` -> ``tf.math.add`` (or the tf.compat.v1 symbol)."""
    for root in (tf, tf.compat.v1):
        obj = root
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    return None


def unary(name: str, op: str | None = None, *, dtypes: Callable | None = None,
          lowers_to: str | None = None):
    """Declare a unary elementwise API: a core op name, or decorate a composite."""
    def register(fn: Callable | None = None):
        impl = fn if fn is not None else _unary_op(name, op, dtypes)
        _add(Entry(name, "unary", impl, lowers_to or op or fn.__name__.strip("_")))
        return fn
    if op is not None:
        register()
        return None
    return register


def binary(name: str, op: str | None = None, *, dtypes: Callable | None = None,
           lowers_to: str | None = None):
    def register(fn: Callable | None = None):
        impl = fn if fn is not None else _binary_op(name, op, dtypes)
        _add(Entry(name, "binary", impl, lowers_to or op or fn.__name__.strip("_")))
        return fn
    if op is not None:
        register()
        return None
    return register


def api(name: str, lowers_to: str, tensors=(), lists=()):
    def register(fn: Callable):
        _add(Entry(name, "api", fn, lowers_to, tuple(tensors), tuple(lists)))
        return fn
    return register


def require(t: lc.Tensor, check: Callable | None, what: str = "") -> lc.Tensor:
    """TF's per-op dtype lists (``Value for attr 'T' ... not in the list``)."""
    if check is not None and not check(t.dtype):
        raise lc.DTypeError(f"{what} does not accept dtype {t.dtype}")
    return t


def _operands(name: str, n: int):
    """Pick the ``n`` operands out of a call, by position or by TF's parameter names."""
    sig = []

    def pick(args, kwargs):
        if len(args) == n and not kwargs:
            return args
        if not sig:
            sig.append(inspect.signature(resolve(name)))
        bound = sig[0].bind(*args, **kwargs).arguments
        return tuple(bound[p] for p in list(sig[0].parameters)[:n])
    return pick


def _unary_op(name: str, op: str, dtypes):
    from ._convert import to_core

    core, pick = lc.ops.get(op), _operands(name, 1)

    def impl(*args, **kwargs):
        (x,) = pick(args, kwargs)
        return core(require(to_core(x), dtypes, op))
    return impl


def _binary_op(name: str, op: str, dtypes):
    from ._convert import broadcast

    core, pick = lc.ops.get(op), _operands(name, 2)

    def impl(*args, **kwargs):
        a, b = broadcast(*pick(args, kwargs))
        return core(require(a, dtypes, op), b)
    return impl


# dtype classes as TensorFlow's kernels register them
FLOAT = lc.dtypes.is_floating
INEXACT = lc.dtypes.is_inexact
INT = lc.dtypes.is_integer
BOOL = lc.dtypes.is_bool
NUMERIC = lambda d: not lc.dtypes.is_bool(d)
REAL = lambda d: not lc.dtypes.is_bool(d) and not lc.dtypes.is_complex(d)
