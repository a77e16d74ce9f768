"""tf.math: elementwise (unary/binary), reductions, cumulative ops."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import tensorflow as tf

import lazycore as lc

from ._convert import broadcast, np_dtype, same_dtype, static, to_core
from ._table import (
    BOOL,
    FLOAT,
    INEXACT,
    INT,
    NUMERIC,
    REAL,
    _operands,
    api,
    binary,
    op_kernel,
    require,
    unary,
)

ops, num = lc.ops, lc.numeric


def full_like(t, value):
    return num.full(t.shape, value, t.dtype)


# -- unary: one core op each ---------------------------------------------------------
for _tf, _op, _ok in [
    ("math.abs", "abs", NUMERIC), ("math.negative", "neg", NUMERIC), ("math.sign", "sign", NUMERIC),
    ("math.exp", "exp", INEXACT), ("math.expm1", "expm1", INEXACT), ("math.log", "log", INEXACT),
    ("math.log1p", "log1p", INEXACT), ("math.sqrt", "sqrt", INEXACT), ("math.rsqrt", "rsqrt", INEXACT),
    ("math.sin", "sin", INEXACT), ("math.cos", "cos", INEXACT), ("math.tan", "tan", INEXACT),
    ("math.asin", "asin", INEXACT), ("math.acos", "acos", INEXACT), ("math.atan", "atan", INEXACT),
    ("math.sinh", "sinh", INEXACT), ("math.cosh", "cosh", INEXACT), ("math.tanh", "tanh", INEXACT),
    ("math.asinh", "asinh", INEXACT), ("math.acosh", "acosh", INEXACT),
    ("math.atanh", "atanh", INEXACT), ("math.sigmoid", "logistic", INEXACT),
    ("math.erf", "erf", FLOAT), ("math.erfc", "erfc", FLOAT), ("math.erfinv", "erf_inv", FLOAT),
    ("math.lgamma", "lgamma", FLOAT), ("math.digamma", "digamma", FLOAT),
    ("math.bessel_i0e", "bessel_i0e", FLOAT), ("math.bessel_i1e", "bessel_i1e", FLOAT),
    ("math.floor", "floor", FLOAT), ("math.ceil", "ceil", FLOAT),
    ("math.rint", "round_half_even", FLOAT), ("math.is_finite", "is_finite", FLOAT),
    ("math.real", "real", None), ("math.imag", "imag", None), ("math.conj", "conj", None),
    ("math.logical_not", "not", BOOL), ("bitwise.invert", "not", INT),
]:
    unary(_tf, _op, dtypes=_ok)


def composite(fn, dtypes, api: str):
    """The unary API ``api`` computed by ``fn`` on its one operand, after TF's dtype check."""
    pick = _operands(api, 1)

    def impl(*args, **kwargs):
        (x,) = pick(args, kwargs)
        return fn(require(to_core(x), dtypes, api.split(".")[-1]))
    return impl


# -- unary: composites of core ops ---------------------------------------------------
for _tf, _ok, _fn, _lowers in [
    ("math.square", NUMERIC, lambda t: ops.mul(t, t), "mul"),
    ("math.reciprocal", NUMERIC, lambda t: ops.div(full_like(t, 1), t), "div"),
    ("math.reciprocal_no_nan", INEXACT, lambda t: num.divide_no_nan(full_like(t, 1), t),
     "divide_no_nan (composite)"),
    ("math.is_nan", FLOAT, lambda t: ops.ne(t, t), "ne"),
    ("math.is_inf", FLOAT, lambda t: ops.eq(ops.abs(t), full_like(t, np.inf)), "abs, eq"),
    ("math.softplus", FLOAT, num.softplus, "softplus (composite)"),
    ("math.log_sigmoid", FLOAT, lambda t: ops.neg(num.softplus(ops.neg(t))),
     "softplus (composite)"),
    ("math.ndtri", FLOAT, num.ndtri, "ndtri (composite)"),
]:
    unary(_tf, lowers_to=_lowers)(composite(_fn, _ok, _tf))


@unary("math.round", lowers_to="round_half_even")
def _round(x, name=None):
    t = to_core(x)
    return t if lc.dtypes.is_integer(t.dtype) else ops.round_half_even(require(t, FLOAT, "round"))


@unary("cast", lowers_to="convert")
def _cast(x, dtype, name=None):
    return num.cast(to_core(x), np_dtype(dtype))


@unary("dtypes.saturate_cast", lowers_to="clamp, convert")
def _saturate_cast(value, dtype, name=None):
    t, target = to_core(value), np_dtype(dtype)
    if lc.dtypes.is_integer(target) and not lc.dtypes.is_complex(t.dtype):
        info = np.iinfo(target)
        lo = max(info.min, -np.inf if lc.dtypes.is_floating(t.dtype) else np.iinfo(t.dtype).min)
        hi = min(info.max, np.inf if lc.dtypes.is_floating(t.dtype) else np.iinfo(t.dtype).max)
        t = ops.clamp(full_like(t, lo), t, full_like(t, hi))
    return num.cast(t, target)


@unary("clip_by_value", lowers_to="min, max")
def _clip_by_value(t, clip_value_min, clip_value_max, name=None):
    x, lo, hi = same_dtype(t, clip_value_min, clip_value_max)
    shape = num.broadcast_shapes(x.shape, lo.shape, hi.shape)
    x, lo, hi = (num.broadcast_to(v, shape) for v in (x, lo, hi))
    return ops.max(ops.min(x, hi), lo)


@unary("zeros_like", lowers_to="broadcast_in_dim")
def _zeros_like(input, dtype=None, name=None, layout=None):  # noqa: A002 - TF's parameter name
    t = to_core(input)
    return num.zeros(t.shape, np_dtype(dtype) or t.dtype)


@unary("ones_like", lowers_to="broadcast_in_dim")
def _ones_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    t = to_core(input)
    return num.ones(t.shape, np_dtype(dtype) or t.dtype)


# -- binary: one core op each ---------------------------------------------------------
for _tf, _op, _ok in [
    ("math.add", "add", NUMERIC), ("math.subtract", "sub", NUMERIC),
    ("math.multiply", "mul", NUMERIC), ("math.maximum", "max", REAL),
    ("math.minimum", "min", REAL), ("math.atan2", "atan2", FLOAT),
    ("math.equal", "eq", None), ("math.not_equal", "ne", None), ("math.less", "lt", REAL),
    ("math.less_equal", "le", REAL), ("math.greater", "gt", REAL),
    ("math.greater_equal", "ge", REAL), ("math.logical_and", "and", BOOL),
    ("math.logical_or", "or", BOOL), ("bitwise.bitwise_and", "and", INT),
    ("bitwise.bitwise_or", "or", INT), ("bitwise.bitwise_xor", "xor", INT),
    ("bitwise.left_shift", "shift_left", INT), ("realdiv", "div", INEXACT),
    ("math.nextafter", "nextafter", FLOAT), ("math.igamma", "igamma", FLOAT),
    ("math.igammac", "igammac", FLOAT),
]:
    binary(_tf, _op, dtypes=_ok)


@binary("bitwise.right_shift", lowers_to="shift_right_arithmetic / shift_right_logical", kernel=True)
def _right_shift(a, b):
    require(a, INT, "right_shift")
    op = ops.shift_right_logical if lc.dtypes.is_unsigned(a.dtype) else ops.shift_right_arithmetic
    return op(a, b)


@binary("math.pow", lowers_to="pow (+ a check for integers)", kernel=True)
def _pow(a, b):
    signed = require(a, lambda d: NUMERIC(d) and not lc.dtypes.is_unsigned(d), "pow")  # TF's Pow list
    return num.checked_power(signed, b, _tf_error(tf.errors.InvalidArgumentError),
                             "Integers to negative integer powers are not allowed", op="pow",
                             c_zero_base=True)


_TRUEDIV = {1: np.float32, 2: np.float32, 4: np.float64, 8: np.float64}


def truediv_core(a, b):
    """TF's ``/``: integers divide in float32 (8/16-bit) or float64 (32/64-bit)."""
    if lc.dtypes.is_integer(a.dtype):
        target = _TRUEDIV[a.dtype.itemsize]
        a, b = num.cast(a, target), num.cast(b, target)
    return ops.div(require(a, NUMERIC, "truediv"), b)


binary("math.truediv", lowers_to="div (+convert for integers)", kernel=True)(truediv_core)
binary("math.divide", lowers_to="div (+convert for integers)", kernel=True)(truediv_core)


def _tf_error(error_class):
    return lambda message: error_class(None, None, message)


# TF's kernels: integer division by zero is an error (InvalidArgumentError from
# FloorDiv/FloorMod, InternalError from TruncateDiv/TruncateMod; at the call for a
# host divisor, else at the next barrier), float floordiv is floor(a / b), a zero
# remainder keeps fmod's (the dividend's) sign.
_DIVISION = {"int_div_by_zero": "raise", "float_floor": "floor", "zero_remainder": "dividend",
             "error_type": _tf_error(tf.errors.InvalidArgumentError),
             "error_message": "Integer division by zero"}
_TRUNCATED = {"int_div_by_zero": "raise", "error_type": _tf_error(tf.errors.InternalError),
              "error_message": "Integer division by zero"}


@binary("div", lowers_to="floor_divide / div", kernel=True)
def _div_v1(a, b):
    if lc.dtypes.is_integer(a.dtype):
        return num.floor_divide(a, b, **_DIVISION)
    return ops.div(a, b)


def _truncatemod_dtype(dtype) -> bool:
    """TruncateMod's kernels: int32, int64 and floats (no 8/16-bit or unsigned ints)."""
    return lc.dtypes.is_floating(dtype) or dtype in (np.int32, np.int64)


def _zero_where(cond_zero, value, t):
    return ops.select(cond_zero, full_like(t, 0), value)


def _checked(fn, dtypes, what: str):
    """A binary kernel: ``fn`` on the two broadcast operands, after TF's dtype check."""
    def kernel(a, b):
        return fn(require(a, dtypes, what), b)
    return kernel


# -- binary: composites on the broadcast operands ---------------------------------------
for _tf, _fn, _ok, _lowers in [
    ("math.logical_xor", ops.xor, BOOL, "xor"),
    ("dtypes.complex", ops.complex, FLOAT, "complex"),
    ("math.squared_difference", num.squared_difference, NUMERIC, "squared_difference (composite)"),
    ("math.divide_no_nan", num.divide_no_nan, INEXACT, "divide_no_nan (composite)"),
    ("math.floordiv", partial(num.floor_divide, **_DIVISION), REAL, "floor_divide (composite)"),
    ("floor_div", partial(num.floor_divide, **_DIVISION), REAL, "floor_divide (composite)"),
    ("math.floormod", partial(num.floor_mod, **_DIVISION), REAL, "floor_mod (composite)"),
    ("truncatediv", partial(num.trunc_divide, **_TRUNCATED), NUMERIC, "trunc_divide (composite)"),
    ("truncatemod", partial(num.fmod, **_TRUNCATED), _truncatemod_dtype, "fmod (composite)"),
    ("math.xlogy", partial(num.xlogy, zero_x_masks_nan=True), INEXACT, "xlogy (composite)"),
    ("math.xlog1py", partial(num.xlog1py, zero_x_masks_nan=True), INEXACT, "xlog1py (composite)"),
]:
    binary(_tf, lowers_to=_lowers, kernel=True)(_checked(_fn, _ok, _tf.split(".")[-1]))


@binary("math.multiply_no_nan", lowers_to="mul, select", kernel=True)
def _multiply_no_nan(a, b):
    require(a, INEXACT, "multiply_no_nan")
    return _zero_where(ops.eq(b, full_like(b, 0)), ops.mul(a, b), a)


@binary("math.xdivy", lowers_to="div, select", kernel=True)
def _xdivy(a, b):
    require(a, INEXACT, "xdivy")
    return _zero_where(ops.eq(a, full_like(a, 0)), ops.div(a, b), a)


@binary("math.scalar_mul", lowers_to="mul")
def _scalar_mul(scalar, x, name=None):
    a, b = broadcast(x, scalar)
    return ops.mul(b, a)


@binary("nn.sigmoid_cross_entropy_with_logits", lowers_to="sigmoid_cross_entropy (composite)")
def _sigmoid_xent(labels=None, logits=None, name=None):
    z, x = broadcast(labels, logits)
    if z.shape != to_core(logits).shape:
        raise lc.ShapeError("logits and labels must have the same shape")
    return num.sigmoid_cross_entropy(x, z)


# -- reductions ----------------------------------------------------------------------
def _axes(axis, ndim):
    return num.normalize_axes(static(axis), ndim, scalar_axes=())


def _reducer(name, core, check):
    def impl(input_tensor, axis=None, keepdims=False, name=None):
        t = require(to_core(input_tensor), check, name)
        return num.reduce(core, t, _axes(axis, t.ndim), bool(keepdims), dtype=t.dtype)
    return impl


for _tf, _core, _ok in [
    ("math.reduce_sum", "reduce_sum", NUMERIC), ("math.reduce_prod", "reduce_prod", NUMERIC),
    ("math.reduce_max", "reduce_max", REAL), ("math.reduce_min", "reduce_min", REAL),
    ("math.reduce_all", "reduce_and", BOOL), ("math.reduce_any", "reduce_or", BOOL),
]:
    api(_tf, _core, tensors=("input_tensor",))(_reducer(_tf, _core, _ok))


@api("math.reduce_mean", "reduce_sum, div", tensors=("input_tensor",))
def _reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    t = require(to_core(input_tensor), NUMERIC, "reduce_mean")
    axes = _axes(axis, t.ndim)
    total = num.reduce("reduce_sum", t, axes, bool(keepdims), dtype=t.dtype)
    n = math.prod([t.shape[a] for a in axes])
    return ops.div(total, full_like(total, n))  # integers: truncating, as TF


@api("math.reduce_variance", "var (composite)", tensors=("input_tensor",))
def _reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    t = require(to_core(input_tensor), INEXACT, "reduce_variance")
    return num.var(t, _axes(axis, t.ndim), bool(keepdims), dtype=t.dtype)


@api("math.reduce_std", "std (composite)", tensors=("input_tensor",))
def _reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    t = require(to_core(input_tensor), INEXACT, "reduce_std")
    return num.std(t, _axes(axis, t.ndim), bool(keepdims), dtype=t.dtype)


@api("math.reduce_logsumexp", "logsumexp (composite)", tensors=("input_tensor",))
def _reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    t = require(to_core(input_tensor), FLOAT, "reduce_logsumexp")
    return num.logsumexp(t, _axes(axis, t.ndim), bool(keepdims))


@api("math.reduce_euclidean_norm", "mul, reduce_sum, sqrt", tensors=("input_tensor",))
def _reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    t = require(to_core(input_tensor), NUMERIC, "reduce_euclidean_norm")
    if lc.dtypes.is_floating(t.dtype):
        return num.vector_norm(t, 2, _axes(axis, t.ndim), bool(keepdims))
    s = num.reduce("reduce_sum", ops.mul(t, t), _axes(axis, t.ndim), bool(keepdims), dtype=t.dtype)
    # integers: the root in float64, cast back (TF's kernel); complex: sqrt(sum(x*x))
    return num.cast(ops.sqrt(num.cast(s, np.float64) if lc.dtypes.is_integer(t.dtype) else s),
                    t.dtype)


@api("math.count_nonzero", "ne, reduce_sum", tensors=("input",))
def _count_nonzero(input, axis=None, keepdims=None, dtype="int64", name=None):  # noqa: A002
    t = to_core(input)
    nz = ops.ne(t, full_like(t, 0))
    return num.reduce("reduce_sum", num.cast(nz, np_dtype(dtype)), _axes(axis, t.ndim),
                      bool(keepdims), dtype=np_dtype(dtype))


def _arg(core):
    def impl(input, axis=None, output_type="int64", name=None):  # noqa: A002
        t = require(to_core(input), REAL, core)
        a = 0 if axis is None else static(axis)
        fn = num.argmax if core == "argmax" else num.argmin
        return fn(t, axis=a, index_dtype=np_dtype(output_type))
    return impl


api("math.argmax", "argmax", tensors=("input",))(_arg("argmax"))
api("math.argmin", "argmin", tensors=("input",))(_arg("argmin"))


def _cumulative(core, check):
    def impl(x, axis=0, exclusive=False, reverse=False, name=None):
        t = require(to_core(x), check, core)
        (a,) = num.normalize_axes(static(axis), t.ndim, scalar_axes=())
        out = num.cumulative(core, t, a, reverse=bool(reverse), dtype=t.dtype)
        if not exclusive:
            return out
        # exclusive: shift by one along the axis, filling with the identity
        ident = {"cumsum": 0, "cumprod": 1, "cumlogsumexp": -np.inf}[core]
        n = t.shape[a]
        lo, hi = [0] * t.ndim, list(t.shape)
        if reverse:
            lo[a] = 1
        else:
            hi[a] = n - 1
        kept = ops.slice(out, start_indices=tuple(lo), limit_indices=tuple(hi))
        pad = [(0, 0, 0)] * t.ndim
        pad[a] = (0, 1, 0) if reverse else (1, 0, 0)
        return ops.pad(kept, lc.scalar(ident, t.dtype), padding_config=tuple(pad))
    return impl


api("math.cumsum", "cumsum", tensors=("x",))(_cumulative("cumsum", NUMERIC))
api("math.cumprod", "cumprod", tensors=("x",))(_cumulative("cumprod", NUMERIC))
api("math.cumulative_logsumexp", "cumlogsumexp", tensors=("x",))(
    _cumulative("cumlogsumexp", FLOAT))


@api("math.add_n", "add", lists=("inputs",))
def _add_n(inputs, name=None):  # IndexedSlices are densified (lazily: a segment sum)
    ts = same_dtype(*[tf.convert_to_tensor(t) if isinstance(t, tf.IndexedSlices) else t
                      for t in inputs])
    if any(t.shape != ts[0].shape for t in ts):
        raise lc.ShapeError("add_n: all inputs must have the same shape")
    out = ts[0]
    for t in ts[1:]:
        out = ops.add(out, t)
    return out


api("__operators__.add", "add", tensors=("x", "y"), kernel=True)(op_kernel("add", NUMERIC))
