"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

Operands must already agree in shape and dtype: broadcasting and promotion are the
callers' business (``lazycore.numeric`` does both, per framework policy).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..dtypes import canonical, is_complex, is_floating
from ..errors import DTypeError
from ..ir import Aval
from .complex_c99 import lowering as c99  # complex operands: C99 special values
from .registry import defop
from .rules import check_dtype, nary_rule, same_dtypes, same_shapes, unary_rule

FAMILY = "elementwise"


def _unary(name, cls, lower, out="same"):
    return defop(name, FAMILY, unary_rule(name, cls, out), lower)


def _nary(name, cls, lower, out="same"):
    return defop(name, FAMILY, nary_rule(name, cls, out), lower)


def _on_floats(lower, jvp):
    """``lower`` with derivative ``jvp(primals, tangents)`` on real floats: TF's one-sided
    derivatives at kinks (JAX splits a max/min tie evenly and has abs'(0) = 1)."""
    custom = jax.custom_jvp(lower)
    custom.defjvp(lambda p, t: (lower(*p), jvp(p, t)))
    return lambda *a: custom(*a) if jnp.issubdtype(a[0].dtype, jnp.floating) else lower(*a)


def _first_on_tie(pick):  # all of the derivative to the operand the result equals, x on a tie
    return _on_floats(pick, lambda p, t: lax.select(lax.eq(pick(*p), p[0]), *t))


# -- unary ----------------------------------------------------------------------------
neg = _unary("neg", "numeric", lax.neg)
abs = _unary("abs", "numeric", _on_floats(lax.abs, lambda p, t: lax.sign(p[0]) * t[0]),  # noqa: A001
             out="real")  # abs'(0) = 0
sign = _unary("sign", "numeric", lax.sign)
exp = _unary("exp", "inexact", lax.exp)
exp2 = _unary("exp2", "inexact", lax.exp2)
log = _unary("log", "inexact", lax.log)
log1p = _unary("log1p", "inexact", lax.log1p)
expm1 = _unary("expm1", "inexact", c99("expm1", lax.expm1))
sqrt = _unary("sqrt", "inexact", c99("sqrt", lax.sqrt))
rsqrt = _unary("rsqrt", "inexact", lax.rsqrt)
cbrt = _unary("cbrt", "float", lax.cbrt)
sin = _unary("sin", "inexact", c99("sin", lax.sin))
cos = _unary("cos", "inexact", c99("cos", lax.cos))
tan = _unary("tan", "inexact", c99("tan", lax.tan))
asin = _unary("asin", "inexact", c99("asin", lax.asin))
acos = _unary("acos", "inexact", c99("acos", lax.acos))
atan = _unary("atan", "inexact", c99("atan", lax.atan))
sinh = _unary("sinh", "inexact", c99("sinh", lax.sinh))
cosh = _unary("cosh", "inexact", c99("cosh", lax.cosh))
tanh = _unary("tanh", "inexact", c99("tanh", lax.tanh))
asinh = _unary("asinh", "inexact", c99("asinh", lax.asinh))
acosh = _unary("acosh", "inexact", c99("acosh", lax.acosh))
atanh = _unary("atanh", "inexact", c99("atanh", lax.atanh))
logistic = _unary("logistic", "inexact", lax.logistic)
erf = _unary("erf", "float", lax.erf)
erfc = _unary("erfc", "float", lax.erfc)
erf_inv = _unary("erf_inv", "float", lax.erf_inv)
lgamma = _unary("lgamma", "float", lax.lgamma)
digamma = _unary("digamma", "float", lax.digamma)
bessel_i0e = _unary("bessel_i0e", "float", lax.bessel_i0e)
bessel_i1e = _unary("bessel_i1e", "float", lax.bessel_i1e)
floor = _unary("floor", "float", lax.floor)
ceil = _unary("ceil", "float", lax.ceil)
round_half_even = _unary(
    "round_half_even", "float", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))
round_half_away = _unary(
    "round_half_away", "float", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO))
is_finite = _unary("is_finite", "float", lax.is_finite, out="bool")
real = _unary("real", "any", lambda x: lax.real(x) if jnp.iscomplexobj(x) else x, out="real")
imag = _unary("imag", "any",
              lambda x: lax.imag(x) if jnp.iscomplexobj(x) else jnp.zeros_like(x), out="real")
conj = _unary("conj", "any", lambda x: lax.conj(x) if jnp.iscomplexobj(x) else x)
bitwise_not = _unary("not", "int_or_bool", lax.bitwise_not)
population_count = _unary("population_count", "integer", lax.population_count)
clz = _unary("clz", "integer", lax.clz)
# identity whose derivative is zero: cuts autodiff (tf.stop_gradient, tensor.detach)
stop_gradient = _unary("stop_gradient", "any", lax.stop_gradient)



def _integer_pow_rule(x: Aval, *, y: int) -> Aval:
    check_dtype("integer_pow", "numeric", x)
    if y < 0 and not (is_floating(x.dtype) or is_complex(x.dtype)):
        raise DTypeError(f"integers to negative integer powers are not allowed (y={y})")
    return x


# x ** n for a static Python int n: repeated squaring, fused; no exponent parameter
integer_pow = defop("integer_pow", FAMILY, _integer_pow_rule,
                    lambda x, *, y: lax.integer_pow(x, y))

# -- binary -----------------------------------------------------------------------------


def _pow(x, y):
    if np.issubdtype(x.dtype, np.integer):
        # lax.pow wants a float base; integer powers by repeated squaring keep exactness
        return _int_pow(x, y)
    if np.issubdtype(x.dtype, np.complexfloating):  # XLA: 0 ** z is nan; C, NumPy: 0 (Re z > 0)
        return jnp.where((x == 0) & (jnp.real(y) > 0), jnp.zeros_like(x), lax.pow(x, y))
    return lax.pow(x, y)


def _int_pow(x, y):
    zero, one = jnp.zeros_like(x), jnp.ones_like(x)
    neg_exp = y < 0
    e = jnp.where(neg_exp, zero, y)
    result, base = one, x
    for _ in range(x.dtype.itemsize * 8):
        result = jnp.where((e & 1) == 1, result * base, result)
        base = base * base
        e = lax.shift_right_logical(e, jnp.ones_like(e))
    # x ** negative: 1 for x == 1, +-1 for x == -1, 0 otherwise (C semantics)
    neg_result = jnp.where(x == 1, one, jnp.where(x == -1, jnp.where((y & 1) == 1, -one, one), zero))
    return jnp.where(neg_exp, neg_result, result)


add = _nary("add", "any", lambda x, y: lax.bitwise_or(x, y) if x.dtype == bool else lax.add(x, y))
sub = _nary("sub", "numeric", lax.sub)
mul = _nary("mul", "any", lambda x, y: lax.bitwise_and(x, y) if x.dtype == bool else lax.mul(x, y))
div = _nary("div", "numeric", lax.div)  # integers: rounds toward zero (C semantics)
rem = _nary("rem", "ordered", lax.rem)  # sign of the dividend (C fmod)
pow = _nary("pow", "numeric", _pow)  # noqa: A001 - op name
max = _nary("max", "any", _first_on_tie(lax.max))  # noqa: A001 - op name
min = _nary("min", "any", _first_on_tie(lax.min))  # noqa: A001 - op name
atan2 = _nary("atan2", "float", lax.atan2)
nextafter = _nary("nextafter", "float", lax.nextafter)
bitwise_and = _nary("and", "int_or_bool", lax.bitwise_and)
bitwise_or = _nary("or", "int_or_bool", lax.bitwise_or)
bitwise_xor = _nary("xor", "int_or_bool", lax.bitwise_xor)
shift_left = _nary("shift_left", "integer", lax.shift_left)
shift_right_arithmetic = _nary("shift_right_arithmetic", "integer", lax.shift_right_arithmetic)
shift_right_logical = _nary("shift_right_logical", "integer", lax.shift_right_logical)
igamma = _nary("igamma", "float", lax.igamma)
igammac = _nary("igammac", "float", lax.igammac)
complex_ = defop("complex", FAMILY,
                 lambda x, y: Aval(same_shapes("complex", [x, y]),
                                   np.dtype(np.complex128 if same_dtypes("complex", [x, y])
                                            == np.float64 else np.complex64)),
                 lax.complex)

# -- comparisons --------------------------------------------------------------------------
eq = _nary("eq", "any", lax.eq, out="bool")
ne = _nary("ne", "any", lax.ne, out="bool")
lt = _nary("lt", "ordered", lax.lt, out="bool")
le = _nary("le", "ordered", lax.le, out="bool")
gt = _nary("gt", "ordered", lax.gt, out="bool")
ge = _nary("ge", "ordered", lax.ge, out="bool")


# -- select, clamp, casts -------------------------------------------------------------------
def _select_rule(pred: Aval, on_true: Aval, on_false: Aval) -> Aval:
    if pred.dtype != np.bool_:
        raise DTypeError(f"predicate must be bool, got {pred.dtype}")
    same_shapes("select", [pred, on_true, on_false])
    return Aval(on_true.shape, same_dtypes("select", [on_true, on_false]))


select = defop("select", FAMILY, _select_rule, lambda p, t, f: lax.select(p, t, f))


def _clamp_rule(lo: Aval, x: Aval, hi: Aval) -> Aval:
    same_dtypes("clamp", [lo, x, hi])
    same_shapes("clamp", [lo, x, hi])
    check_dtype("clamp", "ordered", x)
    return x


clamp = defop("clamp", FAMILY, _clamp_rule, lax.clamp)


def _convert_rule(x: Aval, *, dtype) -> Aval:
    return Aval(x.shape, canonical(dtype))


def _convert(x, *, dtype):
    dtype = canonical(dtype)
    if dtype == np.bool_ and x.dtype != np.bool_:  # complex: true if either part is nonzero
        return x != jnp.zeros((), x.dtype)
    if is_complex(x.dtype) and not is_complex(dtype):
        x = lax.real(x)  # numpy/torch drop the imaginary part
    return lax.convert_element_type(x, dtype)


convert = defop("convert", FAMILY, _convert_rule, _convert)


def _bitcast_rule(x: Aval, *, dtype) -> Aval:
    dtype = canonical(dtype)
    if dtype.itemsize != x.dtype.itemsize:
        raise DTypeError(f"bitcast needs equal widths, {x.dtype} -> {dtype}")
    return Aval(x.shape, dtype)


bitcast_convert = defop("bitcast_convert", FAMILY, _bitcast_rule,
                        lambda x, *, dtype: lax.bitcast_convert_type(x, canonical(dtype)))
