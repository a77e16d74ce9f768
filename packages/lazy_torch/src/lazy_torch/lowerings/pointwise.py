"""Elementwise ATen ops and prims: unary math, binary arithmetic, comparisons, where."""

from __future__ import annotations

import numpy as np

import lazycore as lc

from .common import (
    ALWAYS_BOOL,
    BOOL_TO_LONG,
    DEFAULT,
    INT_TO_FLOAT,
    D,
    as_tensor,
    compute_dtype,
    default_float,
    ew,
    full_like,
    in_opmath,
    num,
    opmath,
    ops,
    promote,
    to_np,
    wrap_int,
)
from .registry import lower

# -- unary: aten name -> (core op, promotion kind); prims of the same name share it --------
UNARY = {
    "neg": ("neg", DEFAULT), "exp": ("exp", INT_TO_FLOAT), "exp2": ("exp2", INT_TO_FLOAT),
    "log": ("log", INT_TO_FLOAT), "log1p": ("log1p", INT_TO_FLOAT),
    "expm1": ("expm1", INT_TO_FLOAT), "sqrt": ("sqrt", INT_TO_FLOAT),
    "rsqrt": ("rsqrt", INT_TO_FLOAT), "sin": ("sin", INT_TO_FLOAT),
    "cos": ("cos", INT_TO_FLOAT), "tan": ("tan", INT_TO_FLOAT), "asin": ("asin", INT_TO_FLOAT),
    "acos": ("acos", INT_TO_FLOAT), "atan": ("atan", INT_TO_FLOAT),
    "sinh": ("sinh", INT_TO_FLOAT), "cosh": ("cosh", INT_TO_FLOAT),
    "tanh": ("tanh", INT_TO_FLOAT), "asinh": ("asinh", INT_TO_FLOAT),
    "acosh": ("acosh", INT_TO_FLOAT), "atanh": ("atanh", INT_TO_FLOAT),
    "sigmoid": ("logistic", INT_TO_FLOAT), "erf": ("erf", INT_TO_FLOAT),
    "erfc": ("erfc", INT_TO_FLOAT), "erfinv": ("erf_inv", INT_TO_FLOAT),
    "erf_inv": ("erf_inv", INT_TO_FLOAT), "lgamma": ("lgamma", INT_TO_FLOAT),
    "digamma": ("digamma", INT_TO_FLOAT), "cbrt": ("cbrt", INT_TO_FLOAT),
    "bessel_i0e": ("bessel_i0e", INT_TO_FLOAT), "bessel_i1e": ("bessel_i1e", INT_TO_FLOAT),
    "special_i0e": ("bessel_i0e", INT_TO_FLOAT), "special_i1e": ("bessel_i1e", INT_TO_FLOAT),
    "conj_physical": ("conj", DEFAULT), "_conj_physical": ("conj", DEFAULT),
}


def _unary(core, kind):
    def fn(x):
        if kind == INT_TO_FLOAT and not D.is_inexact(x.dtype):
            x = num.cast(x, default_float())
        return in_opmath(ops.get(core), x)
    return fn


for _name, (_core, _kind) in UNARY.items():
    lower(f"{_name}.default", f"{_name}_.default", f"prims.{_name}.default")(_unary(_core, _kind))


@lower("abs.default", "abs_.default", "prims.abs.default")
def abs_(x):
    if D.is_bool(x.dtype) or x.dtype.kind == "u":  # XLA's abs rejects unsigned types
        return x
    return ops.abs(x)


@lower("sgn.default", "sgn_.default", "prims.sign.default")
def sgn(x):
    """Eager's real sign is ``(0 < x) - (x < 0)``: +0 for -0.0 and for NaN; complex
    ``sgn`` is x/|x| (+0 for 0)."""
    return num.sign(x, nan_gives_zero=True)


@lower("sign.default", "sign_.default")
def sign(x):
    if D.is_complex(x.dtype):
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support "
                                  "complex numbers. Please use torch.sgn instead.")
    return sgn(x)


def _rounding(core):
    def fn(x):
        return x if not D.is_inexact(x.dtype) else ops.get(core)(x)
    return fn


lower("floor.default", "floor_.default", "prims.floor.default")(_rounding("floor"))
lower("ceil.default", "ceil_.default", "prims.ceil.default")(_rounding("ceil"))
lower("round.default", "round_.default", "prims.round.default")(_rounding("round_half_even"))


@lower("trunc.default", "trunc_.default", "fix.default", "fix_.default", "prims.trunc.default")
def trunc(x):
    if D.is_complex(x.dtype):
        raise NotImplementedError("trunc is not supported for complex inputs")
    return num.trunc(x)


@lower("frac.default", "frac_.default")
def frac(x):
    return ops.sub(x, trunc(x))


@lower("reciprocal.default", "reciprocal_.default", "prims.reciprocal.default")
def reciprocal(x):
    if not D.is_inexact(x.dtype):
        x = num.cast(x, default_float())
    return ops.div(full_like(x, 1), x)


def _log_base(base):
    def fn(x):
        if not D.is_inexact(x.dtype):
            x = num.cast(x, default_float())
        return ops.div(ops.log(x), full_like(x, np.log(base)))
    return fn


lower("log2.default", "log2_.default", "prims.log2.default")(_log_base(2.0))
lower("log10.default", "log10_.default", "prims.log10.default")(_log_base(10.0))


@lower("relu.default", "relu_.default")
def relu(x):
    if D.is_bool(x.dtype):
        raise RuntimeError('"clamp_min_scalar_cpu" not implemented for \'Bool\'')
    return num.relu(x)


def _float_test(test, integers):
    """A test of float values; every integer or bool element answers ``integers``."""
    def fn(x):
        return test(x) if D.is_inexact(x.dtype) else num.full(x.shape, integers, D.bool_)
    return fn


lower("isfinite.default", "prims.isfinite.default")(_float_test(ops.is_finite, True))
lower("isnan.default")(_float_test(lambda x: ops.ne(x, x), False))
lower("isinf.default")(_float_test(lambda x: ops.eq(ops.abs(x), full_like(
    x, np.inf, D.real_dtype(x.dtype))), False))


@lower("bitwise_not.default", "bitwise_not_.default", "prims.bitwise_not.default")
def bitwise_not(x):
    if D.is_inexact(x.dtype):
        raise RuntimeError('"bitwise_not_cpu" not implemented for float tensors')
    return ops.get("not")(x)


@lower("logical_not.default", "logical_not_.default")
def logical_not(x):
    return ops.get("not")(num.cast(x, D.bool_))


@lower("signbit.default", "prims.signbit.default")
def signbit(x):
    if D.is_complex(x.dtype):
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return num.signbit(x)


# -- binary -----------------------------------------------------------------------------------

@lower("add.Tensor", "add_.Tensor", "add.Scalar", "add_.Scalar")
def add(x, y, *, alpha=1):
    if isinstance(alpha, float) and not D.is_inexact(compute_dtype([x, y])):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if alpha != 1 and isinstance(y, lc.Tensor):
        dt = compute_dtype([x, y])
        y = ops.mul(*num.promote([y, alpha], dtype=dt))
    elif alpha != 1:
        y = y * alpha
    return ew("add", x, y)


@lower("sub.Tensor", "sub_.Tensor", "sub.Scalar", "sub_.Scalar")
def sub(x, y, *, alpha=1):
    dt = compute_dtype([x, y])
    bools = [isinstance(v, bool) or (isinstance(v, lc.Tensor) and D.is_bool(v.dtype))
             for v in (x, y)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    if alpha != 1 and isinstance(y, lc.Tensor):
        y = ops.mul(*num.promote([y, alpha], dtype=dt))
    elif alpha != 1:
        y = y * alpha
    return ops.sub(*promote([x, y], dtype=dt))


lower("rsub.Tensor", "rsub.Scalar")(lambda x, y, *, alpha=1: sub(y, x, alpha=alpha))


@lower("div.Tensor_mode", "div_.Tensor_mode", "div.Scalar_mode", "div_.Scalar_mode")
def div_mode(x, y, *, rounding_mode=None):
    if rounding_mode is None:
        return ew("div", x, y, kind=INT_TO_FLOAT)
    dt = compute_dtype([x, y])
    a, b = promote([x, y], dtype=dt)  # a Python int wraps into an integer dtype, as in eager
    if rounding_mode == "trunc":
        if D.is_integer(dt):
            return _int_division(num.trunc_divide, a, b)
        return num.trunc(ops.div(a, b))
    if rounding_mode == "floor":
        return floor_divide(x, y)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


# PyTorch's CPU kernels: integer division by zero raises; a zero float remainder keeps
# fmod's (the dividend's) sign; float floor division is CPython's divmod.
_KERNEL_DTYPE_NAMES = {D.bool_: "Bool", D.uint8: "Byte", D.int8: "Char", D.int16: "Short",
                       D.int32: "Int", D.int64: "Long", D.complex64: "ComplexFloat",
                       D.complex128: "ComplexDouble"}


def _int_division(composite, a, b, **flags):
    """``composite`` with PyTorch's integer division by zero: ``RuntimeError`` (at the
    call for a Python divisor, else at the next barrier: a data check)."""
    return composite(a, b, int_div_by_zero="raise", error_type=RuntimeError,
                     error_message="ZeroDivisionError", **flags)


def _division_operands(x, y, kernel):
    dt = compute_dtype([x, y])
    if D.is_bool(dt):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return promote([x, y], dtype=dt)  # a Python int wraps into an integer dtype, as in eager


@lower("floor_divide.default", "floor_divide_.Tensor", "floor_divide.Scalar")
def floor_divide(x, y):
    a, b = _division_operands(x, y, "div_floor_cpu")
    return _int_division(num.floor_divide, a, b, float_floor="divmod",
                         zero_remainder="dividend")


@lower("remainder.Tensor", "remainder_.Tensor", "remainder.Scalar", "remainder_.Scalar",
       "remainder.Scalar_Tensor", "prims.remainder.default")
def remainder(x, y):
    a, b = _division_operands(x, y, "remainder_cpu")
    return _int_division(num.floor_mod, a, b, float_floor="divmod",
                         zero_remainder="dividend")


@lower("fmod.Tensor", "fmod_.Tensor", "fmod.Scalar", "fmod_.Scalar", "prims.fmod.default")
def fmod(x, y):
    a, b = _division_operands(x, y, "fmod_cpu")
    return _int_division(num.fmod, a, b)


@lower("pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Scalar", "pow_.Scalar", "pow.Scalar",
       "prims.pow.default")
def pow_(x, y):
    dt = compute_dtype([x, y], BOOL_TO_LONG)
    if D.is_integer(dt) and not isinstance(y, lc.Tensor) and y < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return num.power(x, y, dtype=dt, c_zero_base=True)


@lower("float_power.Tensor_Tensor", "float_power.Tensor_Scalar", "float_power.Scalar")
def float_power(x, y):
    return ops.pow(*num.promote([x, y], dtype=D.complex128 if D.is_complex(compute_dtype([x, y]))
                                else D.float64))


def _binary(core, kind=DEFAULT):
    def fn(x, y):
        return ew(core, x, y, kind=kind)
    return fn


for _names, _core, _kind in [
    (("mul.Tensor", "mul_.Tensor", "mul.Scalar", "mul_.Scalar"), "mul", DEFAULT),
    (("div.Tensor", "div_.Tensor", "div.Scalar", "div_.Scalar", "true_divide.Tensor"), "div",
     INT_TO_FLOAT),
    (("maximum.default", "prims.maximum.default"), "max", DEFAULT),
    (("minimum.default", "prims.minimum.default"), "min", DEFAULT),
    (("atan2.default", "atan2_.default", "prims.atan2.default", "arctan2.default"), "atan2",
     INT_TO_FLOAT),
    (("nextafter.default", "prims.nextafter.default"), "nextafter", DEFAULT),
    (("bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Scalar",
      "prims.bitwise_and.default"), "and", DEFAULT),
    (("bitwise_or.Tensor", "bitwise_or_.Tensor", "bitwise_or.Scalar",
      "prims.bitwise_or.default"), "or", DEFAULT),
    (("bitwise_xor.Tensor", "bitwise_xor_.Tensor", "bitwise_xor.Scalar",
      "prims.bitwise_xor.default"), "xor", DEFAULT),
    (("prims.add.default",), "add", DEFAULT), (("prims.sub.default",), "sub", DEFAULT),
    (("prims.mul.default",), "mul", DEFAULT), (("prims.div.default",), "div", DEFAULT),
    (("prims.shift_left.default",), "shift_left", DEFAULT),
    (("prims.shift_right_arithmetic.default",), "shift_right_arithmetic", DEFAULT),
    (("igamma.default", "special_gammainc.default", "prims.igamma.default"), "igamma",
     INT_TO_FLOAT),
    (("igammac.default", "special_gammaincc.default", "prims.igammac.default"), "igammac",
     INT_TO_FLOAT),
]:
    lower(*_names)(_binary(_core, _kind))


def _logical(core):
    def fn(x, y):
        a, b = num.promote([x, y], dtype=D.bool_)
        return ops.get(core)(a, b)
    return fn


lower("logical_and.default", "logical_and_.default")(_logical("and"))
lower("logical_or.default", "logical_or_.default")(_logical("or"))
lower("logical_xor.default", "logical_xor_.default")(_logical("xor"))


def _compare(core):
    def fn(x, y):
        return ops.get(core)(*promote([x, y], ALWAYS_BOOL))
    return fn


for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    lower(f"{_n}.Tensor", f"{_n}.Scalar", f"prims.{_n}.default")(_compare(_n))
for _alias, _n in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                   ("less_equal", "le"), ("not_equal", "ne")):
    lower(f"{_alias}.Tensor", f"{_alias}.Scalar")(_compare(_n))


@lower("isin.Tensor_Tensor", "isin.Tensor_Scalar", "isin.Scalar_Tensor")
def isin(x, test, *, assume_unique=False, invert=False):
    bad = [a.dtype for a in (x, test)  # PyTorch's kernel refuses these before promoting
           if isinstance(a, lc.Tensor) and (D.is_bool(a.dtype) or D.is_complex(a.dtype))]
    if bad:
        raise RuntimeError(f"Unsupported input type encountered for isin(): "
                           f"{_KERNEL_DTYPE_NAMES[bad[0]]}")
    dt = compute_dtype([x, test])  # eq's promotion; the shapes stay apart
    x, test = [num.cast(as_tensor(wrap_int(a, dt), dt), dt) for a in (x, test)]
    return lc.composites.sorting.isin(x, test, invert)


@lower("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar",
       "prims.where.default")
def where(cond, x, y):
    if cond.dtype != D.bool_ and cond.dtype != D.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {cond.dtype}")
    a, b = promote([x, y])
    shape = num.broadcast_shapes(cond.shape, a.shape)
    return ops.select(num.broadcast_to(num.cast(cond, D.bool_), shape),
                      num.broadcast_to(a, shape), num.broadcast_to(b, shape))


@lower("clamp.default", "clamp_.default", "clamp.Tensor", "clamp_.Tensor")
def clamp(x, min=None, max=None):  # noqa: A002 - ATen names
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = compute_dtype([a for a in (x, min, max) if a is not None])
    shape = num.broadcast_shapes(*[a.shape for a in (x, min, max) if isinstance(a, lc.Tensor)])
    bounds = [None if v is None else num.broadcast_to(num.cast(v, dt), shape)
              if isinstance(v, lc.Tensor) else num.full(shape, v, dt) for v in (min, max)]
    return num.clamp(num.broadcast_to(num.cast(x, dt), shape), *bounds)


lower("clamp_min.default", "clamp_min_.default", "clamp_min.Tensor", "clamp_min_.Tensor")(
    lambda x, bound: clamp(x, bound, None))
lower("clamp_max.default", "clamp_max_.default", "clamp_max.Tensor", "clamp_max_.Tensor")(
    lambda x, bound: clamp(x, None, bound))


@lower("lerp.Scalar", "lerp_.Scalar", "lerp.Tensor", "lerp_.Tensor")
def lerp(x, end, weight):
    if x.dtype != end.dtype:  # eager's kernels check this (no promotion)
        raise RuntimeError(f"expected dtype {x.dtype} for `end` but got dtype {end.dtype}")
    if not D.is_inexact(x.dtype):
        kernel = "lerp_kernel_tensor" if isinstance(weight, lc.Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype}\'')
    dt = compute_dtype([x, end])
    a, b = promote([x, end], dtype=opmath(dt))
    if isinstance(weight, float | int) and not D.is_complex(dt):
        return num.cast(num.lerp(a, b, weight), dt)
    w = num.cast(weight, a.dtype) if isinstance(weight, lc.Tensor) else num.full(a.shape, weight,
                                                                               a.dtype)
    shape = num.broadcast_shapes(w.shape, a.shape)
    a, b, w = (num.broadcast_to(t, shape) for t in (a, b, w))
    return num.cast(num.lerp(a, b, w), dt)


@lower("addcmul.default", "addcmul_.default")
def addcmul(x, t1, t2, *, value=1):
    dt = compute_dtype([x, t1, t2])
    return num.cast(num.addcmul(*promote([x, t1, t2], dtype=opmath(dt)), value), dt)


@lower("addcdiv.default", "addcdiv_.default")
def addcdiv(x, t1, t2, *, value=1):
    dt = compute_dtype([x, t1, t2])
    if not D.is_inexact(t1.dtype) and not D.is_inexact(t2.dtype):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2.")
    return num.cast(num.addcdiv(*promote([x, t1, t2], dtype=opmath(dt)), value), dt)


def _float_only(x, y, kernel):
    """Operands of a kernel PyTorch registers for floating dtypes only."""
    a, b = promote([x, y])
    if not D.is_floating(a.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_KERNEL_DTYPE_NAMES.get(a.dtype, a.dtype)}\'')
    return a, b


def _binary_composite(composite, float_kernel=None):
    """``lazycore.numeric.<composite>`` of the promoted operands: integers computed as
    floats, or refused as eager's ``float_kernel``, registered for floating dtypes only."""
    def fn(x, y):
        args = _float_only(x, y, float_kernel) if float_kernel else promote([x, y], INT_TO_FLOAT)
        return getattr(num, composite)(*args)
    return fn


for _names, _composite, _kernel in [
    (("hypot.default", "hypot_.default", "prims.hypot.default"), "hypot", "hypot_cpu"),
    (("copysign.Tensor", "copysign.Scalar"), "copysign", None),
    (("xlogy.Tensor", "xlogy.Scalar_Other", "xlogy.Scalar_Self", "special_xlogy.default"),
     "xlogy", None),
    (("special_xlog1py.default",), "xlog1py", None),
    (("logaddexp.default",), "logaddexp", "logaddexp_cpu"),
    (("logaddexp2.default",), "logaddexp2", "logaddexp2_cpu"),
]:
    lower(*_names)(_binary_composite(_composite, _kernel))
lower("gelu.default", "gelu_.default")(
    lambda x, *, approximate="none": in_opmath(num.gelu, x, approximate))
lower("silu.default", "silu_.default")(lambda x: in_opmath(num.silu, x))


@lower("prims.convert_element_type.default")
def convert_element_type(x, dtype):
    return num.cast(x, to_np(dtype))

