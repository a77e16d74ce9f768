"""Shape-rule helpers shared by the op families."""

from __future__ import annotations

import functools

import jax
import numpy as np

from ..dtypes import is_bool, is_complex, is_floating, is_integer, real_dtype
from ..errors import AxisError, DTypeError, ShapeError
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


def _dtype_gate(name: str, cls: str):
    """``check(aval)`` with the dtype-class answer memoized per dtype (hot path)."""
    accepted: dict = {}
    test = DTYPE_CLASSES[cls]

    def check(aval: Aval) -> None:
        ok = accepted.get(aval.dtype)
        if ok is None:
            ok = accepted[aval.dtype] = bool(test(aval.dtype))
        if not ok:
            check_dtype(name, cls, aval)
    return check


def _out_aval(out: str):
    if out == "same":
        return lambda a: a
    cache: dict = {}

    def make(a: Aval) -> Aval:
        r = cache.get(a)
        if r is None:
            dtype = np.dtype(bool) if out == "bool" else real_dtype(a.dtype)
            r = cache[a] = Aval(a.shape, dtype)
        return r
    return make


def unary_rule(name: str, cls: str, out: str = "same"):
    check, result = _dtype_gate(name, cls), _out_aval(out)

    def rule(x: Aval) -> Aval:
        check(x)
        return result(x)
    return rule


def nary_rule(name: str, cls: str, out: str = "same"):
    check, result = _dtype_gate(name, cls), _out_aval(out)

    def rule(*avals: Aval) -> Aval:
        first = avals[0]
        for a in avals[1:]:
            if a is not first and a != first:
                same_shapes(name, avals)
                same_dtypes(name, avals)
        check(first)
        return result(first)
    return rule


def normalize_axis(axis: int, ndim: int, name: str = "") -> int:
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}", op=name)
    return axis % ndim if ndim else 0


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
