"""Complex elementwise lowerings with C99 Annex G's special values (what NumPy gives).

XLA's complex ``sqrt``, ``expm1``, trigonometric and hyperbolic functions (and their
inverses) agree with C99 for ordinary finite inputs but not at infinities, NaNs and
signed zeros (``sinh(inf j)``, ``sqrt(1 - 0j)``), where the interpreter tier (NumPy's
kernels) does: one program would give two answers depending on the tier. Each function
here is evaluated on real parts: explicit formulas where they are short (``sinh``,
``cosh``, ``expm1``), and for the rest XLA's value on the first quadrant, patched by
C99's table of special cases and mapped back by the function's symmetries. Functions
C99 defines through another (``sin(z) = -i sinh(iz)``, ...) are defined the same way.
Only complex operands come here; real ones keep XLA's kernels.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

_where = jnp.where


def _parts(z):
    return jnp.real(z), jnp.imag(z)


def _neg_if(v, flag):
    return _where(flag, -v, v)


def _fin(v):
    return jnp.isfinite(v)


def _half_exp_times(x, v):
    """exp(|x|)/2 * v without overflowing where exp(|x|) does but the product does not
    (|x| up to twice the overflow threshold): (exp(|x|/2) * v / 2) * exp(|x|/2)."""
    h = jnp.exp(jnp.abs(x) / 2)
    return (0.5 * h * v) * h


_LARGE = 20.0  # past it sinh(x) and cosh(x) are exp(|x|)/2 to the last bit


def sinh(z):
    x, y = _parts(z)
    large = jnp.abs(x) > _LARGE
    re = _where(large, _neg_if(_half_exp_times(x, jnp.cos(y)), x < 0),
                jnp.sinh(x) * jnp.cos(y))
    im = _where(large, _half_exp_times(x, jnp.sin(y)), jnp.cosh(x) * jnp.sin(y))
    keep_x = ((x == 0) | jnp.isinf(x)) & ~_fin(y)  # sinh(+-0 + inf j) = +-0 + nan j
    re = _where(y == 0, jnp.sinh(x), _where(keep_x, _where(x == 0, x, jnp.inf), re))
    im = _where(y == 0, y, _where(keep_x, jnp.nan, im))
    return lax.complex(re, im)


def cosh(z):
    x, y = _parts(z)
    large = jnp.abs(x) > _LARGE
    re = _where(large, _half_exp_times(x, jnp.cos(y)), jnp.cosh(x) * jnp.cos(y))
    im = _where(large, _neg_if(_half_exp_times(x, jnp.sin(y)), x < 0),
                jnp.sinh(x) * jnp.sin(y))
    zero_im = _neg_if(jnp.zeros_like(x), jnp.signbit(x) != jnp.signbit(y))
    re = _where(y == 0, jnp.cosh(x), _where(jnp.isinf(x) & ~_fin(y), jnp.inf, re))
    im = _where(y == 0, _where(jnp.isnan(x), y, zero_im), im)
    im = _where((x == 0) & ~_fin(y), 0.0, im)
    return lax.complex(re, im)


def expm1(z):
    """NumPy's own complex expm1 (not C99: it has none): expm1(x) cos(y) - 2 sin(y/2)^2
    + i exp(x) sin(y)."""
    x, y = _parts(z)
    half = jnp.sin(y / 2)
    re = jnp.expm1(x) * jnp.cos(y) - 2 * half * half
    return lax.complex(re, jnp.exp(x) * jnp.sin(y))


def tanh(z):
    x, y = _parts(z)
    re, im = _parts(lax.tanh(lax.complex(x, y)))
    big = jnp.abs(x) > 22  # tanh(x) is +-1 to the last bit; the imaginary part underflows
    tiny = 4 * jnp.sin(y) * jnp.cos(y) * jnp.exp(-2 * jnp.abs(x))
    re = _where(big, jnp.copysign(jnp.ones_like(x), x), re)
    im = _where(big, _where(jnp.isinf(y) | jnp.isnan(y), jnp.zeros_like(y), tiny), im)
    im = _where(jnp.isinf(x) & jnp.isinf(y), jnp.copysign(jnp.zeros_like(y), y), im)
    re = _where(y == 0, jnp.tanh(x), _where(x == 0, x, re))
    im = _where(y == 0, y, _where((x == 0) & _fin(y), jnp.tan(y), im))
    bad = ~_fin(y) & _fin(x) & (x != 0)
    im = _where((x == 0) & ~_fin(y), jnp.nan, im)
    return lax.complex(_where(bad, jnp.nan, re), _where(bad, jnp.nan, im))


def sqrt(z):
    x, y = _parts(z)
    ay = jnp.abs(y)
    re, im = _parts(lax.sqrt(lax.complex(x, ay)))
    zero = jnp.zeros_like(x)
    re = _where((x == 0) & (ay == 0), zero, re)
    im = _where((x == 0) & (ay == 0), zero, im)
    re = _where(jnp.isposinf(x) & ~jnp.isinf(ay), jnp.inf, re)
    im = _where(jnp.isposinf(x) & _fin(ay), zero, im)
    im = _where(jnp.isposinf(x) & jnp.isnan(ay), jnp.nan, im)
    re = _where(jnp.isneginf(x) & _fin(ay), zero, _where(jnp.isneginf(x) & jnp.isnan(ay),
                                                         jnp.nan, re))
    im = _where(jnp.isneginf(x) & ~jnp.isinf(ay), jnp.inf, im)
    re = _where(jnp.isinf(ay), jnp.inf, re)
    im = _where(jnp.isinf(ay), jnp.inf, im)
    both_finite = _fin(x) & _fin(ay)
    nan = jnp.isnan(x) & ~jnp.isinf(ay) | jnp.isnan(ay) & both_finite | jnp.isnan(ay) & _fin(x)
    re, im = _where(nan, jnp.nan, re), _where(nan, jnp.nan, im)
    return lax.complex(re, _neg_if(im, jnp.signbit(y)))


def _odd(first_quadrant):
    """An odd function with f(conj z) = conj f(z): computed at (|x|, |y|), signs put back."""
    def fn(z):
        x, y = _parts(z)
        re, im = first_quadrant(jnp.abs(x), jnp.abs(y), z)
        return lax.complex(_neg_if(re, jnp.signbit(x)), _neg_if(im, jnp.signbit(y)))
    return fn


def _asinh_q1(x, y, z):
    re, im = _parts(lax.asinh(lax.complex(x, y)))
    pi2, pi4 = math.pi / 2, math.pi / 4
    re = _where((x == 0) & (y == 0), 0.0, re)
    im = _where((x == 0) & (y == 0), 0.0, im)
    re = _where(_fin(x) & jnp.isinf(y), jnp.inf, re)
    im = _where(_fin(x) & jnp.isinf(y), pi2, im)
    re = _where(jnp.isinf(x), jnp.inf, re)
    im = _where(jnp.isinf(x) & _fin(y), 0.0, _where(jnp.isinf(x) & jnp.isinf(y), pi4, im))
    im = _where(jnp.isinf(x) & jnp.isnan(y), jnp.nan, im)
    nan_x = jnp.isnan(x)
    re = _where(nan_x & jnp.isinf(y), jnp.inf, _where(nan_x, jnp.nan, re))
    im = _where(nan_x & (y == 0), 0.0, _where(nan_x, jnp.nan, im))
    fin_nan = _fin(x) & jnp.isnan(y)
    return _where(fin_nan, jnp.nan, re), _where(fin_nan, jnp.nan, im)


def _atanh_q1(x, y, z):
    re, im = _parts(lax.atanh(lax.complex(x, y)))
    pi2 = math.pi / 2
    re = _where((x == 0) & (y == 0), 0.0, re)
    im = _where((x == 0) & (y == 0), 0.0, im)
    re = _where((x == 1) & (y == 0), jnp.inf, re)
    im = _where((y == 0) & ~jnp.isnan(x), _where(x <= 1, im, pi2), im)
    im = _where((x == 1) & (y == 0), 0.0, im)
    inf_any = jnp.isinf(x) | jnp.isinf(y)
    re = _where(inf_any, 0.0, re)
    im = _where(inf_any, _where(jnp.isnan(x) | jnp.isnan(y), jnp.nan, pi2), im)
    im = _where(jnp.isnan(x) & jnp.isinf(y), pi2, im)
    re = _where(jnp.isnan(x) & ~jnp.isinf(y), jnp.nan, re)
    im = _where(jnp.isnan(x) & ~jnp.isinf(y), jnp.nan, im)
    re = _where((x == 0) & jnp.isnan(y), 0.0, _where(_fin(x) & jnp.isnan(y), jnp.nan, re))
    im = _where(_fin(x) & jnp.isnan(y), jnp.nan, im)
    return re, im


asinh = _odd(_asinh_q1)
atanh = _odd(_atanh_q1)


def _rotated(g):
    """C99's f(z) = -i g(iz) (sin from sinh, asin from asinh, ...)."""
    def fn(z):
        x, y = _parts(z)
        a, b = _parts(g(lax.complex(-y, x)))
        return lax.complex(b, -a)
    return fn


tan, asin, atan = _rotated(tanh), _rotated(asinh), _rotated(atanh)


def sin(z):
    """-i sinh(iz), except sin(z) = nan + inf j (NumPy's sign) where both parts are
    infinite or NaN and the imaginary one is infinite."""
    x, y = _parts(z)
    re, im = _parts(_rotated(sinh)(z))
    return lax.complex(re, _where(~_fin(x) & jnp.isinf(y), jnp.inf, im))


def cos(z):
    x, y = _parts(z)
    return cosh(lax.complex(-y, x))


def acos(z):
    """C99's cacos: pi/2 - asin(z) with its own special cases; acos(-z) = pi - acos(z)."""
    x, y = _parts(z)
    ax, ay = jnp.abs(x), jnp.abs(y)
    u, v = _parts(lax.acos(lax.complex(ax, ay)))
    pi2, pi4 = math.pi / 2, math.pi / 4
    u = _where(ax == 0, _where(_fin(ay) | jnp.isnan(ay) | jnp.isinf(ay), pi2, u), u)
    v = _where((ax == 0) & (ay == 0), -0.0, v)
    v = _where(jnp.isinf(ay), -jnp.inf, v)
    u = _where(_fin(ax) & jnp.isinf(ay), pi2, u)
    u = _where(jnp.isinf(ax) & _fin(ay), 0.0, _where(jnp.isinf(ax) & jnp.isinf(ay), pi4, u))
    v = _where(jnp.isinf(ax), -jnp.inf, v)
    u = _where(jnp.isinf(ax) & jnp.isnan(ay), jnp.nan, u)
    nan_xy = (jnp.isnan(ax) & ~jnp.isinf(ay)) | ((ax != 0) & _fin(ax) & jnp.isnan(ay))
    u = _where(jnp.isnan(ax), jnp.nan, _where(nan_xy, jnp.nan, u))
    v = _where(nan_xy, jnp.nan, v)
    v = _where((ax == 0) & jnp.isnan(ay), jnp.nan, v)
    u = _where(jnp.signbit(x) & ~jnp.isnan(x), math.pi - u, u)
    return lax.complex(u, _neg_if(v, jnp.signbit(y)))


def acosh(z):
    """C99's cacosh: +-i acos(z), the sign that makes the real part non-negative."""
    x, y = _parts(z)
    u, v = _parts(acos(z))
    neg = jnp.signbit(y)
    re = _where(neg, v, -v)
    im = _where(neg, -u, u)
    re = _where(jnp.isnan(re), re, jnp.abs(re))
    return lax.complex(re, im)


#: op name -> complex lowering (real operands keep XLA's kernel)
LOWERINGS = {"sinh": sinh, "cosh": cosh, "tanh": tanh, "expm1": expm1, "sqrt": sqrt,
             "asinh": asinh, "atanh": atanh, "acos": acos, "acosh": acosh, "sin": sin,
             "cos": cos, "tan": tan, "asin": asin, "atan": atan}


def lowering(name, real_lowering):
    """``real_lowering`` for real operands, this module's function for complex ones."""
    complex_fn = LOWERINGS[name]

    def lower(x):
        return complex_fn(x) if jnp.iscomplexobj(x) else real_lowering(x)
    lower.__name__ = name
    return lower
