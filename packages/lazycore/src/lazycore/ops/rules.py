"""Shape-rule helpers shared by the op families."""

from __future__ import annotations

import functools

import jax
import numpy as np

from ..dtypes import is_bool, is_complex, is_floating, is_integer, real_dtype
from ..errors import DTypeError, ShapeError
from ..ir import Aval

DTYPE_CLASSES = {
    "any": lambda d: True,
    "numeric": lambda d: not is_bool(d),
    "inexact": lambda d: is_floating(d) or is_complex(d),
    "float": is_floating,
    "integer": is_integer,
    "int_or_bool": lambda d: is_integer(d) or is_bool(d),
    "ordered": lambda d: not is_complex(d),
}


def check_dtype(name: str, cls: str, aval: Aval) -> None:
    if not DTYPE_CLASSES[cls](aval.dtype):
        raise DTypeError(f"{name} does not accept dtype {aval.dtype} (needs {cls})",
                         op=name, shapes=[aval])


def same_shapes(name: str, avals) -> tuple[int, ...]:
    shape = avals[0].shape
    for a in avals[1:]:
        if a.shape != shape:
            raise ShapeError("operands must have equal shapes (broadcast first), got "
                             + ", ".join(str(x) for x in avals), op=name, shapes=avals)
    return shape


def same_dtypes(name: str, avals) -> np.dtype:
    dtype = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dtype:
            raise DTypeError("operands must have equal dtypes (promote first), got "
                             + ", ".join(str(x) for x in avals), op=name, shapes=avals)
    return dtype


def _out_aval(out: str):
    """``Aval -> Aval`` of an elementwise op whose output dtype is ``"bool"`` or the
    input's real dtype (``"real"``), memoized per input aval."""
    cache: dict = {}

    def make(a: Aval) -> Aval:
        r = cache.get(a)
        if r is None:
            dtype = np.dtype(bool) if out == "bool" else real_dtype(a.dtype)
            r = cache[a] = Aval(a.shape, dtype)
        return r
    return make


def unary_rule(name: str, cls: str, out: str = "same"):
    accepted: dict = {}  # dtype -> accepted by ``cls`` (memoized: hot path)
    result = None if out == "same" else _out_aval(out)

    def rule(x: Aval) -> Aval:
        ok = accepted.get(x.dtype)
        if ok is None:
            ok = accepted[x.dtype] = bool(DTYPE_CLASSES[cls](x.dtype))
        if not ok:
            check_dtype(name, cls, x)
        return x if result is None else result(x)
    return rule


def nary_rule(name: str, cls: str, out: str = "same"):
    accepted: dict = {}  # as in ``unary_rule``
    result = None if out == "same" else _out_aval(out)

    def rule(*avals: Aval) -> Aval:
        first = avals[0]
        for a in avals[1:]:
            if a is not first and a != first:
                same_shapes(name, avals)
                same_dtypes(name, avals)
        ok = accepted.get(first.dtype)
        if ok is None:
            ok = accepted[first.dtype] = bool(DTYPE_CLASSES[cls](first.dtype))
        if not ok:
            check_dtype(name, cls, first)
        return first if result is None else result(first)
    return rule


def to_struct(aval: Aval):
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)


def _from_struct(out):
    if isinstance(out, tuple | list):
        return tuple(_from_struct(o) for o in out)
    return Aval(tuple(int(d) for d in out.shape), np.dtype(out.dtype))


def jax_rule(lower):
    """Derive a shape rule from the lowering by abstract evaluation (memoized).

    Used for ops whose shape logic JAX already checks carefully (gather, scatter,
    conv, windows, linalg, fft): the rule and the lowering cannot disagree."""

    @functools.lru_cache(maxsize=8192)
    def cached(avals, attrs):
        kwargs = dict(attrs)
        out = jax.eval_shape(lambda *xs: lower(*xs, **kwargs), *[to_struct(a) for a in avals])
        return _from_struct(out)

    def rule(*avals, **attrs):
        try:
            return cached(tuple(avals), tuple(sorted(attrs.items())))
        except TypeError as e:
            msg = str(e)
            if "dtype" in msg or "type" in msg.split(":")[0]:
                raise DTypeError(msg) from e
            raise ShapeError(msg) from e
    return rule
