"""Elementwise kernels with NumPy's semantics, one per ufunc.

Each kernel receives core Tensors already cast to the ufunc loop's input dtypes (as
resolved by NumPy itself) and broadcast to one shape, and returns the loop's
output(s). Most are one core op or a core composite with NumPy's flags (floor
division and remainder: ``lazycore.numeric.floor_divmod`` with integer division by
zero giving 0; ``hypot``, ``copysign``, ``signbit``, ``trunc``, ``logaddexp``, ``sign``,
``reciprocal``, ``isnan``/``isinf``/``isfinite``, NaN-propagating ``maximum``/``minimum``,
``absolute``, ``exp``, ``log`` (its base and ``log1p`` as flags), ``rint``,
complex order in ``ordered``, ``heaviside``, ``spacing``, ``modf``); the rest are short
compositions only NumPy needs (NaN handling in ``fmax``, mixed-sign comparisons).
"""

from __future__ import annotations

import functools
import math

import numpy as np

import lazycore as lc

ops = lc.ops
_full = lc.numeric.full
# NumPy's division loops: integer x // 0 and x % 0 are 0 (with a RuntimeWarning),
# floats follow CPython's divmod, a zero remainder takes the divisor's sign.
_DIVISION = {"int_div_by_zero": "zero", "float_floor": "divmod", "zero_remainder": "divisor"}
_and, _or, _not = ops.get("and"), ops.get("or"), ops.get("not")


def like(t, value):
    return _full(t.shape, value, t.dtype)


def _kind(t) -> str:
    d = t.dtype
    if d == lc.dtypes.bfloat16:
        return "f"
    return d.kind


def _is_int(t) -> bool:
    return _kind(t) in "iu"


def _isnan(x):
    return ops.ne(x, x)


def _unary_float(op_name):
    """Float-only core op; integer/bool loops never reach it (NumPy resolves to float)."""
    op = ops.get(op_name)
    return lambda x: op(x)


# -- arithmetic ---------------------------------------------------------------------------

def floor_divide(a, b):
    if _kind(a) == "b":
        a, b = lc.numeric.cast(a, np.int8), lc.numeric.cast(b, np.int8)
    if _kind(a) == "c":
        raise TypeError("ufunc 'floor_divide' not supported for complex inputs")
    return lc.numeric.floor_divide(a, b, **_DIVISION)


def remainder(a, b):
    return lc.numeric.floor_mod(a, b, **_DIVISION)


def divmod_(a, b):
    return lc.numeric.floor_divmod(a, b, **_DIVISION)


def fmod(a, b):
    return lc.numeric.fmod(a, b, int_div_by_zero="zero")


def true_divide(a, b):
    return ops.div(a, b)


def power(a, b):
    return lc.numeric.checked_power(a, b, ValueError,
                                    "Integers to negative integer powers are not allowed.", op="power")


def square(x):
    return ops.mul(x, x)


def positive(x):
    return x


def _scale(factor):
    return lambda x: ops.mul(x, like(x, factor))


def ldexp(x, e):
    return ops.mul(x, ops.exp2(lc.numeric.cast(e, x.dtype)))


def fmax(a, b):
    return _fminmax(a, b, ops.max)


def fmin(a, b):
    return _fminmax(a, b, ops.min)


def _fminmax(a, b, op):
    if _kind(a) in "iub":
        return op(a, b)
    return ops.select(_isnan(b), a, ops.select(_isnan(a), b, op(a, b)))


def right_shift(a, b):
    if _kind(a) == "u":
        return ops.shift_right_logical(a, b)
    return ops.shift_right_arithmetic(a, b)


def left_shift(a, b):
    return ops.shift_left(a, b)


def invert(x):
    return _not(x)


def _truth(x):
    return x if _kind(x) == "b" else ops.ne(x, like(x, 0))


def logical_and(a, b):
    return _and(_truth(a), _truth(b))


def logical_or(a, b):
    return _or(_truth(a), _truth(b))


def logical_xor(a, b):
    return ops.ne(_truth(a), _truth(b))


def logical_not(x):
    return _not(_truth(x))


def _ordered(op_name):
    """Comparisons; complex numbers compare lexicographically (real, then imag) in NumPy."""
    return lambda a, b: lc.numeric.ordered(op_name, a, b)


def _comparison(op_name, kernel):
    """``kernel`` for one-dtype loops; NumPy 2 also has exact uint64-vs-int64 loops."""
    def compare(a, b):
        if a.dtype == b.dtype:
            return kernel(a, b)
        return lc.numeric.mixed_sign_compare(op_name, a, b)
    return compare


def bitwise_count(x):
    if _kind(x) == "i":  # NumPy counts the bits of the absolute value
        x = ops.abs(x)
    return ops.population_count(x)


def matmul(a, b):
    if _kind(a) == "b":
        out = lc.numeric.matmul(lc.numeric.cast(a, np.int32), lc.numeric.cast(b, np.int32))
        return ops.ne(out, like(out, 0))
    return lc.numeric.matmul(a, b)


def vecdot(a, b):
    a, b = lc.numeric.broadcast_arrays(a, b)
    prod = ops.mul(ops.conj(a) if _kind(a) == "c" else a, b)
    return lc.numeric.reduce("reduce_sum", prod, -1, dtype=prod.dtype)


def matvec(a, v):
    return lc.numeric.einsum("...ij,...j->...i", a, v)


def vecmat(v, a):
    vv = ops.conj(v) if _kind(v) == "c" else v
    return lc.numeric.einsum("...j,...ji->...i", vv, a)


def _floor_ceil(op_name):
    op = ops.get(op_name)
    return lambda x: x if _kind(x) in "iub" else op(x)


def _op(name):
    op = ops.get(name)
    kernel = lambda *xs: op(*xs)  # noqa: E731
    kernel.core_op = op  # one core op: the operator plans call it directly
    return kernel


# ufunc name -> kernel. Loop dtypes come from ``ufunc.resolve_dtypes``.
KERNELS = {
    "add": _op("add"), "subtract": _op("sub"), "multiply": _op("mul"),
    "divide": true_divide, "true_divide": true_divide, "floor_divide": floor_divide,
    "remainder": remainder, "mod": remainder, "fmod": fmod, "divmod": divmod_,
    "power": power, "pow": power, "float_power": power, "negative": _op("neg"),
    "positive": positive, "absolute": lc.numeric.absolute, "abs": lc.numeric.absolute,
    "fabs": lc.numeric.absolute,
    "sign": lc.numeric.sign, "rint": lc.numeric.rint, "trunc": lc.numeric.trunc,
    "floor": _floor_ceil("floor"), "ceil": _floor_ceil("ceil"),
    "conjugate": _op("conj"), "conj": _op("conj"),
    "exp": lc.numeric.exp, "exp2": _unary_float("exp2"), "expm1": _unary_float("expm1"),
    "log": lc.numeric.log, "log1p": functools.partial(lc.numeric.log, plus_one=True),
    "log2": functools.partial(lc.numeric.log, base=2.0),
    "log10": functools.partial(lc.numeric.log, base=10.0),
    "sqrt": _unary_float("sqrt"), "cbrt": _unary_float("cbrt"), "square": square,
    "reciprocal": lc.numeric.reciprocal,
    "sin": _unary_float("sin"), "cos": _unary_float("cos"), "tan": _unary_float("tan"),
    "arcsin": _unary_float("asin"), "arccos": _unary_float("acos"),
    "arctan": _unary_float("atan"), "asin": _unary_float("asin"),
    "acos": _unary_float("acos"), "atan": _unary_float("atan"),
    "sinh": _unary_float("sinh"), "cosh": _unary_float("cosh"), "tanh": _unary_float("tanh"),
    "arcsinh": _unary_float("asinh"), "arccosh": _unary_float("acosh"),
    "arctanh": _unary_float("atanh"), "asinh": _unary_float("asinh"),
    "acosh": _unary_float("acosh"), "atanh": _unary_float("atanh"),
    "arctan2": _op("atan2"), "atan2": _op("atan2"), "hypot": lc.numeric.hypot,
    "deg2rad": _scale(math.pi / 180), "radians": _scale(math.pi / 180),
    "rad2deg": _scale(180 / math.pi), "degrees": _scale(180 / math.pi),
    "logaddexp": lc.numeric.logaddexp, "logaddexp2": lc.numeric.logaddexp2,
    "heaviside": lc.numeric.heaviside, "copysign": lc.numeric.copysign, "signbit": lc.numeric.signbit, "nextafter": _op("nextafter"),
    "spacing": lc.numeric.spacing, "modf": lc.numeric.modf, "ldexp": ldexp,
    "isnan": lc.numeric.isnan, "isinf": lc.numeric.isinf, "isfinite": lc.numeric.isfinite,
    "bitwise_and": _op("and"), "bitwise_or": _op("or"), "bitwise_xor": _op("xor"),
    "invert": invert, "bitwise_not": invert, "bitwise_invert": invert,
    "left_shift": left_shift, "bitwise_left_shift": left_shift,
    "right_shift": right_shift, "bitwise_right_shift": right_shift,
    "bitwise_count": bitwise_count,
    "equal": _comparison("eq", _op("eq")), "not_equal": _comparison("ne", _op("ne")),
    "less": _comparison("lt", _ordered("lt")), "less_equal": _comparison("le", _ordered("le")),
    "greater": _comparison("gt", _ordered("gt")),
    "greater_equal": _comparison("ge", _ordered("ge")),
    "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "logical_not": logical_not,
    "maximum": lc.numeric.maximum, "minimum": lc.numeric.minimum, "fmax": fmax, "fmin": fmin,
    "matmul": matmul, "vecdot": vecdot, "matvec": matvec, "vecmat": vecmat,
}

# kernels that must see float16 as float16 (NumPy computes other half loops in float32)
HALF_NATIVE = frozenset({"nextafter", "spacing", "signbit", "copysign", "isnan", "isinf",
                         "isfinite", "negative", "positive", "absolute", "fabs", "abs"})
# kernels whose inputs are computed in the output dtype (bool/int loops of true_divide)
IN_OUTPUT_DTYPE = frozenset({"true_divide", "divide"})

# generalized ufuncs: operands are not broadcast elementwise
GUFUNCS = frozenset({"matmul", "vecdot", "matvec", "vecmat"})
