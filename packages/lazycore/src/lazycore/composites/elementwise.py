"""Elementwise algorithms of several primitives, written once for every frontend.

Each function takes operands that already agree in shape and dtype (the frontend has
made its promotion decision) and reproduces the host frameworks' corner cases: signed
zeros, infinities, NaN, integer extremes, division by zero. Where the frameworks
disagree, a keyword flag names the behaviour -- never the framework.

Floor division and remainder round toward negative infinity (Python semantics: the
remainder takes the divisor's sign); the primitives ``div``/``rem`` truncate toward
zero (C semantics). Flags:

* ``int_div_by_zero``: ``"zero"`` -- quotient and remainder are 0 (NumPy, which warns);
  ``"raise"`` -- an error (PyTorch on CPU, TensorFlow): ``error_type(error_message)``
  at the call for a host-known divisor (a Python scalar, a constant), else a pending
  data check (``lazycore.checks``) raised at the next barrier, naming the op and the
  user's line -- no sync per division; values computed from the division fail too.
  No integer division by zero ever yields XLA's arbitrary value silently.
* ``float_floor``: ``"divmod"`` -- the quotient is derived from ``fmod`` and corrected
  (CPython's and NumPy's ``divmod``, PyTorch: ``1 // 0.1 == 9``, ``inf // 3`` is NaN);
  ``"floor"`` -- ``floor(x / y)`` (TensorFlow: ``1 // 0.1 == 10``, ``inf // 3 == inf``).
* ``zero_remainder``: the sign of a zero remainder: ``"divisor"`` (NumPy,
  ``0. % -3. == -0.``) or ``"dividend"`` (PyTorch, TensorFlow: ``fmod``'s sign).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import checks, ops
from ..dtypes import (
    finfo,
    is_bool,
    is_complex,
    is_floating,
    is_inexact,
    is_integer,
    is_unsigned,
)
from ..errors import DTypeError
from ..ir import host_value
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full_like, promote
from .reductions import any as any_

_INT_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}
_HOST_LEAVES = frozenset({"param", "const"})
_and, _or = ops.get("and"), ops.get("or")


def _is_nan(x: Tensor) -> Tensor:
    return ops.ne(x, x)


# -- sign and rounding --------------------------------------------------------------------

def signbit(x: Tensor) -> Tensor:
    """True where the sign bit is set: ``-0.0`` and negative NaNs included."""
    if is_bool(x.dtype) or is_unsigned(x.dtype):
        return ops.ne(x, x)  # all False, without a constant
    if is_integer(x.dtype):
        return ops.lt(x, full_like(x, 0))
    bits = ops.bitcast_convert(x, dtype=_INT_OF_WIDTH[x.dtype.itemsize])
    return ops.lt(bits, full_like(bits, 0))


def copysign(x: Tensor, y: Tensor) -> Tensor:
    """``|x|`` with ``y``'s sign bit (so ``copysign(1, -0.0) == -1``)."""
    mag = ops.abs(x)
    return ops.select(signbit(y), ops.neg(mag), mag)


def trunc(x: Tensor) -> Tensor:
    """Round toward zero; integers and booleans unchanged, ``-0.5 -> -0.0``."""
    if not is_floating(x.dtype):
        return x
    return ops.select(ops.lt(x, full_like(x, 0)), ops.ceil(x), ops.floor(x))


# -- magnitudes and logs ------------------------------------------------------------------

def round_decimals(x: Tensor, decimals: int = 0) -> Tensor:
    """Round half to even at ``decimals`` places by scaling: ``round(x * 10**d) / 10**d``
    (``x / 10**-d`` for negative ``d``) -- NumPy's and PyTorch's artefacts included."""
    if decimals == 0:
        return ops.round_half_even(x)
    if decimals > 0:
        scale = full_like(x, 10.0 ** decimals)
        return ops.div(ops.round_half_even(ops.mul(x, scale)), scale)
    scale = full_like(x, 10.0 ** -decimals)
    return ops.mul(ops.round_half_even(ops.div(x, scale)), scale)


def nan_to_num(x: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """NaN -> ``nan``, +-inf -> ``posinf``/``neginf`` (default: the dtype's extremes)."""
    info = finfo(x.dtype)
    inf = full_like(x, np.inf)
    x = ops.select(_is_nan(x), full_like(x, nan), x)
    x = ops.select(ops.eq(x, inf), full_like(x, float(info.max) if posinf is None else posinf), x)
    return ops.select(ops.eq(x, ops.neg(inf)),
                      full_like(x, float(info.min) if neginf is None else neginf), x)


def angle(x: Tensor, deg: bool = False) -> Tensor:
    """``atan2(imag, real)`` (a real ``x`` has imaginary part +0: ``angle(-0.) == pi``,
    NumPy's), in degrees with ``deg``."""
    if is_complex(x.dtype):
        r = ops.atan2(ops.imag(x), ops.real(x))
    else:
        r = ops.atan2(full_like(x, 0), x)
    return ops.mul(r, full_like(r, 180 / np.pi)) if deg else r


def with_part(z: Tensor, value: Tensor, *, imaginary: bool = False) -> Tensor:
    """Complex ``z`` with its real part (``imaginary``: its imaginary part) replaced by
    ``value`` converted to the part's float dtype (a complex ``value`` gives its real
    part): a write through ``z.real`` or ``z.imag``."""
    re, im = ops.real(z), ops.imag(z)
    value = cast(value, re.dtype)
    return ops.complex(re, value) if imaginary else ops.complex(value, im)


def fmax(x: Tensor, y: Tensor) -> Tensor:
    """The larger operand, ignoring NaN (NaN only where both are); equal operands give
    the first (``fmax(-0., 0.)`` is -0., as PyTorch's kernels)."""
    return _pick(ops.lt(x, y), x, y)


def fmin(x: Tensor, y: Tensor) -> Tensor:
    """The smaller operand, ignoring NaN; equal operands give the first."""
    return _pick(ops.lt(y, x), x, y)


def _pick(take_y, x, y):
    if is_floating(x.dtype):
        take_y = ops.bitwise_or(take_y, _is_nan(x))
    return ops.select(take_y, y, x)


def clamp(x: Tensor, lo: Tensor | None = None, hi: Tensor | None = None) -> Tensor:
    """``min(max(x, lo), hi)`` with bounds of ``x``'s shape and dtype; a NaN bound gives
    NaN (PyTorch's ``clamp``), a NaN ``x`` stays NaN."""
    out = x
    for bound, op in ((lo, ops.max), (hi, ops.min)):
        if bound is not None:
            out = op(out, bound)
            if is_floating(x.dtype) or is_complex(x.dtype):
                out = ops.select(_is_nan(bound), bound, out)
    return out


def lerp(a: Tensor, b: Tensor, weight) -> Tensor:
    """``a + w * (b - a)`` for ``|w| < 0.5``, else ``b - (b - a) * (1 - w)`` (exact at
    both ends, as PyTorch's kernels). A Python ``weight`` picks the branch while tracing,
    ``1 - w`` rounded in the operands' dtype; a tensor ``weight`` has ``a``'s shape."""
    diff = ops.sub(b, a)
    if not isinstance(weight, Tensor):
        if abs(weight) < 0.5:
            return ops.add(a, ops.mul(full_like(a, weight), diff))
        one_minus = np.asarray(1, a.dtype) - np.asarray(weight, a.dtype)
        return ops.sub(b, ops.mul(diff, full_like(a, one_minus.item())))
    low = ops.add(a, ops.mul(weight, diff))
    high = ops.sub(b, ops.mul(diff, ops.sub(full_like(weight, 1), weight)))
    return ops.select(ops.lt(ops.abs(weight), full_like(weight, 0.5)), low, high)


def addcmul(x: Tensor, t1: Tensor, t2: Tensor, value=1) -> Tensor:
    """``x + value * t1 * t2``, evaluated left to right as PyTorch's kernels do."""
    return ops.add(x, ops.mul(t1 if value == 1 else ops.mul(full_like(t1, value), t1), t2))


def addcdiv(x: Tensor, t1: Tensor, t2: Tensor, value=1) -> Tensor:
    """``x + value * t1 / t2``, evaluated left to right (``(value * t1) / t2``)."""
    return ops.add(x, ops.div(t1 if value == 1 else ops.mul(full_like(t1, value), t1), t2))


def divide_no_nan(x: Tensor, y: Tensor, zero_where_x: bool = False) -> Tensor:
    """``x / y``, but 0 where ``y == 0`` (even for NaN or infinite ``x``; TF's
    ``divide_no_nan``) or, with ``zero_where_x``, where ``x == 0`` (TF's ``xdivy``). The
    divisor is 1 there, so the unselected quotient's derivative is 0, not NaN."""
    zero = ops.eq(*((x, full_like(x, 0)) if zero_where_x else (y, full_like(y, 0))))
    return ops.select(zero, full_like(x, 0), ops.div(x, ops.select(zero, full_like(y, 1), y)))


def ndtri(p: Tensor) -> Tensor:
    """The standard normal quantile: ``sqrt(2) * erfinv(2p - 1)``."""
    return ops.mul(full_like(p, math.sqrt(2.0)),
                   ops.erf_inv(ops.sub(ops.add(p, p), full_like(p, 1))))


def hypot(x: Tensor, y: Tensor) -> Tensor:
    """``sqrt(x*x + y*y)`` without overflow or underflow: ``max * sqrt(1 + (min/max)^2)``
    (``hypot(3e30, 4e30) == 5e30`` in float32); an infinite operand wins over NaN."""
    a, b = ops.abs(x), ops.abs(y)
    hi, lo = ops.max(a, b), ops.min(a, b)
    zero = ops.eq(hi, full_like(hi, 0))
    r = ops.div(lo, ops.select(zero, full_like(hi, 1), hi))
    out = ops.mul(hi, ops.sqrt(ops.add(full_like(r, 1), ops.mul(r, r))))
    out = ops.select(zero, full_like(out, 0), out)
    inf = _or(ops.eq(a, full_like(a, np.inf)), ops.eq(b, full_like(b, np.inf)))
    return ops.select(inf, full_like(out, np.inf), out)


def logaddexp(x: Tensor, y: Tensor) -> Tensor:
    """``log(exp(x) + exp(y))`` without overflow; equal infinities give themselves."""
    return _logaddexp(x, y, ops.exp, ops.log1p, math.log(2.0))


def logaddexp2(x: Tensor, y: Tensor) -> Tensor:
    """``log2(2**x + 2**y)`` without overflow."""
    inv_ln2 = 1.0 / math.log(2.0)
    return _logaddexp(x, y, ops.exp2, lambda t: ops.mul(ops.log1p(t), full_like(t, inv_ln2)), 1.0)


def xlogy(x: Tensor, y: Tensor, *, zero_x_masks_nan: bool = False) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0`` (so ``xlogy(0, 0) == 0``). A NaN ``y`` gives NaN
    even where ``x == 0`` unless ``zero_x_masks_nan`` (TensorFlow: 0 there)."""
    return _x_times(x, y, ops.log, zero_x_masks_nan)


def xlog1py(x: Tensor, y: Tensor, *, zero_x_masks_nan: bool = False) -> Tensor:
    """``x * log1p(y)``, 0 where ``x == 0``; NaN ``y`` as in ``xlogy``."""
    return _x_times(x, y, ops.log1p, zero_x_masks_nan)


def _x_times(x, y, log, zero_x_masks_nan):
    zero = ops.eq(x, full_like(x, 0))  # log(1) there: no NaN in a zero-x derivative
    out = ops.select(zero, full_like(x, 0), ops.mul(x, log(ops.select(zero, full_like(y, 1), y))))
    return out if zero_x_masks_nan else ops.select(_is_nan(y), y, out)


def _logaddexp(x, y, exp, log1p, same_term):
    diff = ops.sub(x, y)
    big = ops.select(ops.gt(diff, full_like(diff, 0)), x, y)
    out = ops.add(big, log1p(exp(ops.neg(ops.abs(diff)))))
    out = ops.select(ops.eq(x, y), ops.add(x, full_like(x, same_term)), out)  # inf, inf
    return ops.select(_or(_is_nan(x), _is_nan(y)), ops.add(x, y), out)


# -- floor division and remainder -----------------------------------------------------------

_INT_DIV_BY_ZERO = ("zero", "raise")
_FLOAT_FLOOR = ("divmod", "floor")
_ZERO_REMAINDER = ("divisor", "dividend")


def floor_divmod(x: Tensor, y: Tensor, *, int_div_by_zero: str = "zero",
                 float_floor: str = "divmod", zero_remainder: str = "divisor",
                 error_type=ZeroDivisionError, error_message: str = "integer division by zero"):
    """``(x // y, x % y)`` rounding toward negative infinity (flags: module docstring)."""
    _check_flags(int_div_by_zero, float_floor, zero_remainder, x)
    if is_floating(x.dtype):
        return (_float_floor_divide(x, y, float_floor),
                _float_floor_mod(x, y, zero_remainder))
    return _int_division(lambda a, b: (_int_floor_divide(a, b), _int_floor_mod(a, b)),
                         x, y, int_div_by_zero, error_type, error_message, "floor_divmod")


def floor_divide(x: Tensor, y: Tensor, *, int_div_by_zero: str = "zero",
                 float_floor: str = "divmod", zero_remainder: str = "divisor",
                 error_type=ZeroDivisionError,
                 error_message: str = "integer division by zero") -> Tensor:
    """``x // y`` (flags: module docstring; ``zero_remainder`` is accepted for symmetry)."""
    _check_flags(int_div_by_zero, float_floor, zero_remainder, x)
    if is_floating(x.dtype):
        return _float_floor_divide(x, y, float_floor)
    return _int_division(lambda a, b: (_int_floor_divide(a, b),), x, y, int_div_by_zero,
                         error_type, error_message, "floor_divide")[0]


def floor_mod(x: Tensor, y: Tensor, *, int_div_by_zero: str = "zero",
              float_floor: str = "divmod", zero_remainder: str = "divisor",
              error_type=ZeroDivisionError,
              error_message: str = "integer division by zero") -> Tensor:
    """``x % y`` with the divisor's sign (flags: module docstring)."""
    _check_flags(int_div_by_zero, float_floor, zero_remainder, x)
    if is_floating(x.dtype):
        return _float_floor_mod(x, y, zero_remainder)
    return _int_division(lambda a, b: (_int_floor_mod(a, b),), x, y, int_div_by_zero,
                         error_type, error_message, "floor_mod")[0]


def _check_flags(int_div_by_zero, float_floor, zero_remainder, x: Tensor) -> None:
    if is_complex(x.dtype):
        raise DTypeError(f"division rounding is not defined for complex operands ({x.dtype})")
    for value, allowed, name in ((int_div_by_zero, _INT_DIV_BY_ZERO, "int_div_by_zero"),
                                 (float_floor, _FLOAT_FLOOR, "float_floor"),
                                 (zero_remainder, _ZERO_REMAINDER, "zero_remainder")):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _int_division(compute, x: Tensor, y: Tensor, int_div_by_zero: str, error_type,
                  error_message: str, op: str) -> tuple:
    """``compute(x, divisor)`` with zero divisors replaced by 1 (XLA's value for them is
    arbitrary), then per ``int_div_by_zero``: 0 there, or the error."""
    if int_div_by_zero == "raise" and y.node.op in _HOST_LEAVES:
        if np.any(host_value(y.node) == 0):
            raise error_type(error_message)
        return compute(x, y)
    is_zero = ops.eq(y, full_like(y, 0))
    results = compute(x, ops.select(is_zero, full_like(y, 1), y))
    if int_div_by_zero == "raise":
        checks.require(any_(is_zero), error_type, error_message, op=op, guards=results)
        return results
    return tuple(ops.select(is_zero, full_like(r, 0), r) for r in results)


def _int_floor_divide(x: Tensor, y: Tensor) -> Tensor:
    q = ops.div(x, y)  # truncates toward zero; XLA: INT_MIN / -1 == INT_MIN
    if is_unsigned(x.dtype) or is_bool(x.dtype):
        return q
    r = ops.rem(x, y)
    fix = _and(ops.ne(r, full_like(r, 0)),
               ops.ne(ops.lt(r, full_like(r, 0)), ops.lt(y, full_like(y, 0))))
    return ops.select(fix, ops.sub(q, full_like(q, 1)), q)


def _int_floor_mod(x: Tensor, y: Tensor) -> Tensor:
    r = ops.rem(x, y)
    if is_unsigned(x.dtype) or is_bool(x.dtype):
        return r
    fix = _and(ops.ne(r, full_like(r, 0)),
               ops.ne(ops.lt(r, full_like(r, 0)), ops.lt(y, full_like(y, 0))))
    return ops.select(fix, ops.add(r, y), r)


def _float_floor_divide(x: Tensor, y: Tensor, float_floor: str) -> Tensor:
    if float_floor == "floor":
        return ops.floor(ops.div(x, y))
    # CPython's float divmod: (x - fmod(x, y)) / y, corrected toward -inf and rounded
    zero = full_like(x, 0)
    mod = ops.rem(x, y)
    div = ops.div(ops.sub(x, mod), y)
    fix = _and(ops.ne(mod, zero), ops.ne(ops.lt(y, zero), ops.lt(mod, zero)))
    div = ops.select(fix, ops.sub(div, full_like(div, 1)), div)
    q = ops.floor(div)
    q = ops.select(ops.gt(ops.sub(div, q), full_like(div, 0.5)), ops.add(q, full_like(div, 1)), q)
    q = ops.select(ops.eq(div, zero), copysign(zero, ops.div(x, y)), q)
    return ops.select(ops.eq(y, zero), ops.div(x, y), q)  # x // 0 is x / 0


def _float_floor_mod(x: Tensor, y: Tensor, zero_remainder: str) -> Tensor:
    zero = full_like(x, 0)
    mod = ops.rem(x, y)  # fmod: NaN for y == 0 or infinite x
    fix = _and(ops.ne(mod, zero), ops.ne(ops.lt(y, zero), ops.lt(mod, zero)))
    mod = ops.select(fix, ops.add(mod, y), mod)
    if zero_remainder == "divisor":
        mod = ops.select(ops.eq(mod, zero), copysign(zero, y), mod)
    return mod


# -- truncating division -------------------------------------------------------------------

def trunc_divide(x: Tensor, y: Tensor, *, int_div_by_zero: str = "zero",
                 error_type=ZeroDivisionError,
                 error_message: str = "integer division by zero") -> Tensor:
    """``x / y`` rounded toward zero (C's integer division); floats: ``trunc(x / y)``."""
    _check_flags(int_div_by_zero, "divmod", "divisor", x)
    if is_floating(x.dtype):
        return trunc(ops.div(x, y))
    return _int_division(lambda a, b: (ops.div(a, b),), x, y, int_div_by_zero, error_type,
                         error_message, "trunc_divide")[0]


def fmod(x: Tensor, y: Tensor, *, int_div_by_zero: str = "zero",
         error_type=ZeroDivisionError, error_message: str = "integer division by zero") -> Tensor:
    """C's ``fmod``: the remainder takes the dividend's sign (``rem``), integer division
    by zero per ``int_div_by_zero``."""
    _check_flags(int_div_by_zero, "divmod", "divisor", x)
    if is_floating(x.dtype):
        return ops.rem(x, y)
    return _int_division(lambda a, b: (ops.rem(a, b),), x, y, int_div_by_zero, error_type,
                         error_message, "fmod")[0]


# -- special-value tests, sign, min/max: NaN and complex rules ----------------------------

def isnan(x: Tensor) -> Tensor:
    """NaN test; a complex number is NaN when either part is; integers never are."""
    if is_complex(x.dtype):
        return _or(_is_nan(ops.real(x)), _is_nan(ops.imag(x)))
    return _is_nan(x)


def isinf(x: Tensor) -> Tensor:
    """Infinity test; a complex number is infinite when either part is (even beside NaN)."""
    if is_complex(x.dtype):
        return _or(isinf(ops.real(x)), isinf(ops.imag(x)))
    if not is_floating(x.dtype):
        return ops.ne(x, x)  # all False, without a constant
    return ops.eq(ops.abs(x), full_like(x, np.inf))


def isfinite(x: Tensor) -> Tensor:
    """Finiteness test; a complex number is finite when both parts are; integers always."""
    if is_complex(x.dtype):
        return _and(ops.is_finite(ops.real(x)), ops.is_finite(ops.imag(x)))
    return ops.eq(x, x) if not is_floating(x.dtype) else ops.is_finite(x)


def ordered(op_name: str, x: Tensor, y: Tensor) -> Tensor:
    """``x op y`` for ``op_name`` in lt/le/gt/ge; complex numbers compare
    lexicographically (real part, then imaginary part: NumPy's order)."""
    op = ops.get(op_name)
    if not is_complex(x.dtype):
        return op(x, y)
    rx, ry, ix, iy = ops.real(x), ops.real(y), ops.imag(x), ops.imag(y)
    strict = ops.get("lt" if op_name in ("lt", "le") else "gt")(rx, ry)
    # a NaN imaginary part voids the real parts' strict order (NumPy's CLT/CGT)
    strict = _and(strict, ops.get("not")(_or(_is_nan(ix), _is_nan(iy))))
    return _or(strict, _and(ops.eq(rx, ry), op(ix, iy)))


def maximum(x: Tensor, y: Tensor) -> Tensor:
    """The larger operand, NaN propagating (the first NaN operand is returned); equal
    operands give the second (``maximum(0., -0.)`` is -0.); complex operands in
    lexicographic order."""
    return _nan_propagating(x, y, "ge", ops.max)


def minimum(x: Tensor, y: Tensor) -> Tensor:
    """The smaller operand, NaN propagating; equal operands give the second; complex
    operands in lexicographic order."""
    return _nan_propagating(x, y, "le", ops.min)


def _nan_propagating(x, y, order, op):
    if is_complex(x.dtype):
        out = ops.select(ordered(order, x, y), x, y)
    elif is_floating(x.dtype):  # a strict comparison: a tie gives the second operand
        out = ops.select(ops.get(order[0] + "t")(x, y), x, y)
    else:
        return op(x, y)
    return ops.select(isnan(x), x, ops.select(isnan(y), y, out))


def sign(x: Tensor, *, nan_gives_zero: bool = False) -> Tensor:
    """-1, 0 or 1; ``sign(-0.0)`` is +0.0 and NaN stays NaN (``nan_gives_zero``: NaN
    gives +0.0, as ``(0 < x) - (x < 0)`` does); a complex ``z`` gives ``z / |z|`` (+0 for
    0, the unit along an infinite part, NaN where both are)."""
    if is_bool(x.dtype):
        return x
    if is_unsigned(x.dtype):
        return cast(ops.ne(x, full_like(x, 0)), x.dtype)
    if is_complex(x.dtype):
        return _complex_sign(x)
    if is_floating(x.dtype):  # XLA's sign keeps the zero's sign
        zero = full_like(x, 0)
        is_zero = ops.eq(x, zero)
        if nan_gives_zero:
            is_zero = _or(is_zero, ops.ne(x, x))
        return ops.select(is_zero, zero, ops.sign(x))
    return ops.sign(x)


def power(x, y, *, dtype, c_zero_base: bool = False) -> Tensor:
    """``x ** y`` computed in ``dtype`` (the frontend's promotion). A host-number exponent
    of a tensor takes the shortcuts eager kernels take, which are exact where ``pow`` is
    not: ``2`` -> ``x * x``, ``1`` -> ``x``, ``0.5`` -> ``sqrt`` (inexact ``x``), a small
    integer -> repeated squaring (``integer_pow``); otherwise ``pow`` on both operands
    (``c_zero_base``: a complex zero base as C's ``cpow``, see ``_cpow_zero_base``)."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        if y == 2 and not is_bool(x.dtype):
            a = cast(x, dtype)
            return ops.mul(a, a)
        if y == 1:
            return cast(x, dtype)
        if y == 0.5 and is_inexact(x.dtype):
            return ops.sqrt(cast(x, dtype))
        if type(y) is int and abs(y) <= 64 and not is_bool(dtype):
            return ops.integer_pow(cast(x, dtype), y=y)
    out = ops.pow(*promote([x, y], dtype=dtype))
    return _cpow_zero_base(out, x, y) if c_zero_base and is_complex(dtype) else out


def _cpow_zero_base(out: Tensor, x, y) -> Tensor:
    """C's ``cpow(0, y) = exp(y * log 0)`` (PyTorch's and TF's complex ``pow``): inf+nan j
    where ``Re y < 0``, nan where ``Re y == 0``; XLA's ``pow`` gives NumPy's nan and 1."""
    x, y = (broadcast_to(t, out.shape) for t in promote([x, y], dtype=out.dtype))
    re = ops.real(y)
    below = ops.select(ops.lt(re, full_like(re, 0)), full_like(out, complex(np.inf, np.nan)),
                       full_like(out, complex(np.nan, np.nan)))
    return ops.select(_and(ops.eq(x, full_like(x, 0)), ops.le(re, full_like(re, 0))), below, out)


def checked_power(x: Tensor, y: Tensor, error_type, message: str, *, op: str,
                  c_zero_base: bool = False) -> Tensor:
    """``pow`` where an integer ``x ** y`` with a negative ``y`` is an error, as NumPy's and
    TF's kernels make it (XLA returns a value): at the call for a host exponent, else at
    the next barrier."""
    result = ops.pow(x, y)
    if c_zero_base and is_complex(result.dtype):
        return _cpow_zero_base(result, x, y)
    if is_integer(y.dtype) and not is_unsigned(y.dtype):
        if y.node.op not in _HOST_LEAVES:
            checks.require(any_(ops.lt(y, full_like(y, 0))), error_type, message, op=op,
                           guards=(result,))
        elif np.any(host_value(y.node) < 0):
            raise error_type(message)
    return result


def _complex_sign(x):
    re, im = ops.real(x), ops.imag(x)
    mag = ops.abs(x)
    zero, nan = full_like(re, 0), full_like(re, np.nan)
    is_zero = ops.eq(mag, zero)
    safe = ops.select(is_zero, full_like(re, 1), mag)
    re_inf, im_inf = isinf(re), isinf(im)
    both = _and(re_inf, im_inf)

    def part(value, own_inf, other_inf):
        out = ops.select(own_inf, ops.sign(value),
                         ops.select(other_inf, zero, ops.div(value, safe)))
        return ops.select(is_zero, zero, ops.select(both, nan, out))
    return ops.complex(part(re, re_inf, im_inf), part(im, im_inf, re_inf))


def reciprocal(x: Tensor) -> Tensor:
    """``1 / x``; integers truncate and ``1 / 0`` is 0 (no trap); complex by Smith's
    division of 1 by ``x``, so signed zeros and infinities are C's."""
    if is_integer(x.dtype):
        is_zero = ops.eq(x, full_like(x, 0))
        q = ops.div(full_like(x, 1), ops.select(is_zero, full_like(x, 1), x))
        return ops.select(is_zero, full_like(x, 0), q)
    return _complex_reciprocal(x) if is_complex(x.dtype) else ops.div(full_like(x, 1), x)


def _complex_reciprocal(x):
    re, im = ops.real(x), ops.imag(x)
    one = full_like(re, 1)
    by_re = ops.le(ops.abs(im), ops.abs(re))
    r1 = ops.div(im, re)
    d1 = ops.add(re, ops.mul(im, r1))
    r2 = ops.div(re, im)
    d2 = ops.add(ops.mul(re, r2), im)
    # r * (1/d), not r / d: XLA rewrites (a/b)/d as a/(b*d), which overflows past 1e154
    s1, s2 = ops.div(one, d1), ops.div(one, d2)
    out_re = ops.select(by_re, s1, ops.mul(r2, s2))
    return ops.complex(out_re, ops.select(by_re, ops.neg(ops.mul(r1, s1)), ops.neg(s2)))


def heaviside(x: Tensor, h: Tensor) -> Tensor:
    """0 for ``x < 0``, 1 for ``x > 0``, ``h`` where ``x == 0``, NaN for NaN ``x``."""
    zero = full_like(x, 0)
    out = ops.select(ops.lt(x, zero), zero, ops.select(ops.gt(x, zero), full_like(x, 1), h))
    return ops.select(_is_nan(x), x, out)


def spacing(x: Tensor) -> Tensor:
    """The gap from ``x`` to the next float away from zero (negative for negative ``x``;
    ``spacing(-0.0)`` is the smallest positive subnormal, as for ``+0.0``)."""
    zero = full_like(x, 0)
    towards = ops.select(ops.lt(x, zero), full_like(x, -np.inf), full_like(x, np.inf))
    step = ops.nextafter(x, towards)
    # at zero the gap is the subnormal itself: XLA on CPU flushes ``step - 0`` to 0
    return ops.select(ops.eq(x, zero), step, ops.sub(step, x))


def modf(x: Tensor) -> tuple[Tensor, Tensor]:
    """``(fraction, whole)`` with ``x``'s sign on both (``modf(-1.0)`` is ``(-0.0, -1.0)``);
    an infinite ``x`` has fraction ``+-0.0``."""
    whole = trunc(x)
    inf = ops.eq(ops.abs(x), full_like(x, np.inf))
    return copysign(ops.select(inf, full_like(x, 0), ops.sub(x, whole)), x), whole


# -- C99's complex special values: abs, exp, log, rint ------------------------------------

def absolute(x: Tensor) -> Tensor:
    """``|x|``; booleans and unsigned unchanged; a complex ``|z|`` is inf when a part is,
    even beside a NaN (hypot's rule, which XLA's complex abs does not keep)."""
    if is_bool(x.dtype) or is_unsigned(x.dtype):
        return x
    r = ops.abs(x)
    return r if not is_complex(x.dtype) else ops.select(isinf(x), full_like(r, np.inf), r)


def exp(x: Tensor) -> Tensor:
    """``e**x``; complex: C99's ``cexp`` -- ``exp(re) * cis(im)`` with an exactly zero
    imaginary part kept (its sign too), and its rules for infinite or NaN ``im``."""
    if not is_complex(x.dtype):
        return ops.exp(x)
    re, im = ops.real(x), ops.imag(x)
    e = ops.exp(re)
    out_re, out_im = ops.mul(e, ops.cos(im)), ops.mul(e, ops.sin(im))
    zero, inf, nan = full_like(re, 0), full_like(re, np.inf), full_like(re, np.nan)
    re_pinf, re_ninf = ops.eq(re, inf), ops.eq(re, ops.neg(inf))
    im_bad = ops.get("not")(ops.is_finite(im))
    bad_re = ops.select(re_pinf, inf, ops.select(re_ninf, zero, nan))
    signed_zero = ops.select(ops.lt(im, zero), ops.neg(zero), zero)
    bad_im = ops.select(re_pinf, nan, ops.select(re_ninf, signed_zero, nan))
    out_re = ops.select(im_bad, bad_re, out_re)
    out_im = ops.select(im_bad, bad_im, out_im)
    im_zero = ops.eq(im, zero)
    return ops.complex(ops.select(im_zero, e, out_re), ops.select(im_zero, im, out_im))


def log(x: Tensor, *, base: float | None = None, plus_one: bool = False) -> Tensor:
    """``log(x)`` (``log1p`` with ``plus_one``; complex: NumPy's ``log|1 + x| + i arg(1 + x)``,
    which rounds ``1 + re`` first), in ``base`` when given; complex: C99's
    ``inf + nan j`` where a part is infinite and the other NaN (XLA gives NaN), and each
    part scaled on its own (``(-inf) * 0`` in a complex product would be NaN)."""
    if plus_one and is_complex(x.dtype):  # NumPy's: log|1 + z| + i arg(1 + z)
        re1, im = ops.add(ops.real(x), full_like(ops.real(x), 1)), ops.imag(x)
        out = ops.complex(ops.log(hypot(re1, im)), ops.atan2(im, re1))
    else:
        out = (ops.log1p if plus_one else ops.log)(x)
    if is_complex(x.dtype):
        re = ops.real(out)
        special = ops.complex(full_like(re, np.inf), full_like(re, np.nan))
        out = ops.select(_and(isinf(x), isnan(x)), special, out)
    if base is None:
        return out
    scale = 1.0 / math.log(base)
    if not is_complex(x.dtype):
        return ops.mul(out, full_like(out, scale))
    re, im = ops.real(out), ops.imag(out)
    return ops.complex(ops.mul(re, full_like(re, scale)), ops.mul(im, full_like(im, scale)))


def rint(x: Tensor) -> Tensor:
    """Round half to even; integers and booleans unchanged; complex part by part."""
    if is_complex(x.dtype):
        return ops.complex(ops.round_half_even(ops.real(x)), ops.round_half_even(ops.imag(x)))
    return x if not is_floating(x.dtype) else ops.round_half_even(x)



def mixed_sign_compare(op_name: str, x: Tensor, y: Tensor) -> Tensor:
    """``x op y`` for one signed and one unsigned integer operand, exactly: both compared
    as uint64, and where the signed one is negative the answer is fixed (``-1 < 2**63``)."""
    signed = x if np.dtype(x.dtype).kind == "i" else y
    negative = ops.lt(signed, full_like(signed, 0))
    out = ops.get(op_name)(cast(x, np.uint64), cast(y, np.uint64))
    pair = (-1, 0) if signed is x else (0, -1)  # the fixed answer, as for -1 against 0
    return ops.select(negative, full_like(out, getattr(operator, op_name)(*pair)), out)
