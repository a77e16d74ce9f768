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


def _result(x: Aval, out: str) -> Aval:
    """An elementwise op's output aval: the input's (``"same"``), or its shape with
    dtype ``bool`` or the input's real dtype (``"real"``)."""
    if out == "same":
        return x
    return Aval(x.shape, np.dtype(bool) if out == "bool" else real_dtype(x.dtype))


def unary_rule(name: str, cls: str, out: str = "same"):
    def rule(x: Aval) -> Aval:  # run once per aval: ``trace.call`` remembers results
        check_dtype(name, cls, x)
        return _result(x, out)
    return rule


def nary_rule(name: str, cls: str, out: str = "same"):
    def rule(*avals: Aval) -> Aval:
        same_shapes(name, avals)
        same_dtypes(name, avals)
        check_dtype(name, cls, avals[0])
        return _result(avals[0], out)
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
        return _from_struct(jax.eval_shape(lambda *xs: lower(*xs, **kwargs),
                                           *[to_struct(a) for a in avals]))

    def rule(*avals, **attrs):
        try:
            return cached(tuple(avals), tuple(sorted(attrs.items())))
        except TypeError as e:
            msg = str(e)
            if "dtype" in msg or "type" in msg.split(":")[0]:
                raise DTypeError(msg) from e
            raise ShapeError(msg) from e
    return rule
