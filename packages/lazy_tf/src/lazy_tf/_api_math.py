"""tf.math: elementwise (unary/binary), reductions, cumulative ops."""

from __future__ import annotations

import functools
import math
from functools import partial

import numpy as np
import tensorflow as tf

import lazycore as lc

from ._convert import broadcast, np_dtype, same_dtype, static, static_int, to_core
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
    in_range,
    op_kernel,
    patch,
    require,
    unary,
)
from ._tensor import is_lazy_class

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
    ("math.round", None, lambda t: t if lc.dtypes.is_integer(t.dtype) else
     ops.round_half_even(require(t, FLOAT, "round")), "round_half_even"),
]:
    unary(_tf, lowers_to=_lowers)(composite(_fn, _ok, _tf))


@unary("cast", lowers_to="convert")
def _cast(x, dtype, name=None):  # complex -> bool: TF tests the real part only
    t, target = to_core(x), np_dtype(dtype)
    return num.cast(ops.real(t) if lc.dtypes.is_complex(t.dtype) and target == np.bool_ else t, target)


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
    x, lo, hi = broadcast(t, clip_value_min, clip_value_max)
    return ops.max(ops.min(x, hi), lo)


def _filled_like(value):
    def impl(input, dtype=None, name=None, layout=None):  # noqa: A002 - TF's parameter name
        t = to_core(input)
        return num.full(t.shape, value, np_dtype(dtype) or t.dtype)
    return impl


unary("zeros_like", lowers_to="broadcast_in_dim")(_filled_like(0))
unary("ones_like", lowers_to="broadcast_in_dim")(_filled_like(1))


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
    return (ops.shift_right_logical if lc.dtypes.is_unsigned(a.dtype) else
            ops.shift_right_arithmetic)(a, b)


@binary("math.pow", lowers_to="pow (+ a check for integers)", kernel=True)
def _pow(a, b):
    return num.checked_power(require(  # TF's Pow list
        a, lambda d: NUMERIC(d) and not lc.dtypes.is_unsigned(d), "pow"), b, _tf_error(tf.errors.InvalidArgumentError),
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
    ("truncatemod", partial(num.fmod, **_TRUNCATED),  # TruncateMod: no 8/16-bit or unsigned ints
     lambda d: lc.dtypes.is_floating(d) or d in (np.int32, np.int64), "fmod (composite)"),
    ("math.xlogy", partial(num.xlogy, zero_x_masks_nan=True), INEXACT, "xlogy (composite)"),
    ("math.xlog1py", partial(num.xlog1py, zero_x_masks_nan=True), INEXACT, "xlog1py (composite)"),
    ("math.multiply_no_nan", lambda a, b: _zero_where(ops.eq(b, full_like(b, 0)), ops.mul(a, b), a),
     INEXACT, "mul, select"),
    ("math.xdivy", partial(num.divide_no_nan, zero_where_x=True), INEXACT,
     "divide_no_nan (composite)"),
    ("div", lambda a, b: num.floor_divide(a, b, **_DIVISION) if lc.dtypes.is_integer(a.dtype)
     else ops.div(a, b), None, "floor_divide / div"),
]:
    binary(_tf, lowers_to=_lowers, kernel=True)(_checked(_fn, _ok, _tf.split(".")[-1]))


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


def _mean(t, axes, keepdims):
    total = num.reduce("reduce_sum", t, axes, keepdims, dtype=t.dtype)
    return ops.div(total, full_like(total, math.prod([t.shape[a] for a in axes])))  # ints truncate, as TF


def _reducer(name, reduce, check):
    def impl(input_tensor, axis=None, keepdims=False, name=None):
        t = require(to_core(input_tensor), check, name)
        return reduce(t, _axes(axis, t.ndim), bool(keepdims))
    return impl


def _core_reduce(op: str):
    return lambda t, axes, keepdims: num.reduce(op, t, axes, keepdims, dtype=t.dtype)


for _tf, _lowers, _ok, _fn in [
    ("math.reduce_sum", "reduce_sum", NUMERIC, _core_reduce("reduce_sum")),
    ("math.reduce_prod", "reduce_prod", NUMERIC, _core_reduce("reduce_prod")),
    ("math.reduce_max", "reduce_max", REAL, _core_reduce("reduce_max")),
    ("math.reduce_min", "reduce_min", REAL, _core_reduce("reduce_min")),
    ("math.reduce_all", "reduce_and", BOOL, _core_reduce("reduce_and")),
    ("math.reduce_any", "reduce_or", BOOL, _core_reduce("reduce_or")),
    ("math.reduce_mean", "reduce_sum, div", NUMERIC, _mean),
    ("math.reduce_variance", "var (composite)", INEXACT,
     lambda t, axes, keepdims: num.var(t, axes, keepdims, dtype=t.dtype)),
    ("math.reduce_std", "std (composite)", INEXACT,
     lambda t, axes, keepdims: num.std(t, axes, keepdims, dtype=t.dtype)),
    ("math.reduce_logsumexp", "logsumexp (composite)", FLOAT, num.logsumexp),
]:
    api(_tf, _lowers, tensors=("input_tensor",))(_reducer(_tf.split(".")[-1], _fn, _ok))


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
    return num.reduce("reduce_sum", num.cast(ops.ne(t, full_like(t, 0)), np_dtype(dtype)), _axes(axis, t.ndim),
                      bool(keepdims), dtype=np_dtype(dtype))


def _arg(fn):
    def impl(input, axis=None, output_type="int64", name=None):  # noqa: A002
        return fn(require(to_core(input), REAL, fn.__name__),
                  axis=0 if axis is None else static(axis), index_dtype=np_dtype(output_type))
    return impl


api("math.argmax", "argmax", tensors=("input",))(_arg(num.argmax))
api("math.argmin", "argmin", tensors=("input",))(_arg(num.argmin))


def _cumulative(core, check, identity):
    def impl(x, axis=0, exclusive=False, reverse=False, name=None):
        t = require(to_core(x), check, core)
        (a,) = num.normalize_axes(static(axis), t.ndim, scalar_axes=())
        out = num.cumulative(core, t, a, reverse=bool(reverse), dtype=t.dtype)
        if not exclusive:
            return out
        # exclusive: shift by one along the axis, filling with the identity
        kept = num.getitem(out, (slice(None),) * a + (slice(1, None) if reverse else slice(None, -1),))
        pad = [(0, 0, 0)] * t.ndim
        pad[a] = (0, 1, 0) if reverse else (1, 0, 0)
        return ops.pad(kept, lc.scalar(identity, t.dtype), padding_config=tuple(pad))
    return impl


api("math.cumsum", "cumsum", tensors=("x",))(_cumulative("cumsum", NUMERIC, 0))
api("math.cumprod", "cumprod", tensors=("x",))(_cumulative("cumprod", NUMERIC, 1))
api("math.cumulative_logsumexp", "cumlogsumexp", tensors=("x",))(
    _cumulative("cumlogsumexp", FLOAT, -np.inf))


@api("math.add_n", "add", lists=("inputs",))
def _add_n(inputs, name=None):  # IndexedSlices are densified (lazily: a segment sum)
    ts = same_dtype(*[tf.convert_to_tensor(t) if isinstance(t, tf.IndexedSlices) else t
                      for t in inputs])
    if any(t.shape != ts[0].shape for t in ts):
        raise lc.ShapeError("add_n: all inputs must have the same shape")
    return functools.reduce(ops.add, ts)


api("__operators__.add", "add", tensors=("x", "y"), kernel=True)(op_kernel("add", NUMERIC))


# -- segments: rows of ``data`` scattered into ``num_segments`` rows; a negative id drops
# its row, an id >= num_segments raises as TF's CPU kernels do --------------------------
def _scatter_rows(kind: str, x, ids, n: int):
    rest = x.shape[ids.ndim:]
    if kind in ("max", "min"):  # an empty segment: the dtype's lowest / highest value
        info = np.finfo(x.dtype) if lc.dtypes.is_floating(x.dtype) else np.iinfo(x.dtype)
        start = num.full((n,) + rest, info.min if kind == "max" else info.max, x.dtype)
    else:
        start = num.zeros((n,) + rest, x.dtype) if kind == "add" else num.ones((n,) + rest, x.dtype)
    return ops.get(f"scatter_{kind}")(
        start, num.reshape(ids, (ids.size, 1)), num.reshape(x, (ids.size,) + rest),
        update_window_dims=tuple(range(1, 1 + len(rest))), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,), mode="fill")


def _segment_mean(x, ids, n: int, root: bool):
    """TF's unsorted_segment_mean / _sqrt_n: the sum over max(count, 1) (or its root)."""
    count = _scatter_rows("add", num.ones(ids.shape, x.dtype), ids, n)
    count = num.clamp(count, full_like(count, 1))
    count = num.reshape(ops.sqrt(count) if root else count, (n,) + (1,) * (x.ndim - ids.ndim))
    total = _scatter_rows("add", x, ids, n)
    return ops.div(total, num.broadcast_to(count, total.shape))


def _unsorted_segment(kind: str, dtypes):
    def impl(data, segment_ids, num_segments, name=None):
        x, ids = require(to_core(data), dtypes, "data"), require(to_core(segment_ids), INT, "ids")
        n = static_int(num_segments)
        if x.shape[:ids.ndim] != ids.shape:
            raise ValueError(f"segment_ids {ids.shape} are not a prefix of data {x.shape}")
        out = _segment_mean(x, ids, n, kind == "sqrt_n") if kind in ("mean", "sqrt_n") else \
            _scatter_rows(kind, x, ids, n)
        return in_range(num.clamp(ids, full_like(ids, 0)), n, out, f"UnsortedSegment{kind.title()}",
                        f"segment_ids are not in [0, {n})")
    return impl


for _kind, _core, _ok in [("sum", "add", NUMERIC), ("prod", "mul", NUMERIC), ("max", "max", REAL),
                          ("min", "min", REAL), ("mean", "mean", FLOAT), ("sqrt_n", "sqrt_n", FLOAT)]:
    api(f"math.unsorted_segment_{_kind}", "scatter_add, div" if _kind in ("mean", "sqrt_n") else f"scatter_{_core}",
        tensors=("data", "segment_ids"))(_unsorted_segment(_core, _ok))


def _higher_scores(p, t):
    """How many classes score strictly higher than each row's target class."""
    return num.sum(ops.gt(p, num.broadcast_to(num.take_along_axis(p, num.expand_dims(t, 1), 1),
                                              p.shape)), 1, dtype=np.int64)


@patch("raw_ops.Bucketize", "lt, not, reduce_sum (static boundaries)")
def _bucketize(*, input, boundaries, name=None):  # noqa: A002 - TF's name
    """Keras's Discretization (``digitize``): TF's kernel, C++'s ``upper_bound`` on the
    float32 boundaries (sorted, else TF's error); x compared as float64 if it is, else as
    float32 (integers converted as C++ converts them). int32 buckets."""
    t, b = require(to_core(input), lambda d: d in (np.int32, np.int64, np.float32, np.float64),
                   "Bucketize"), np.asarray(static(boundaries), np.float32)
    if b.ndim != 1 or np.any(b[1:] < b[:-1]):
        raise ValueError("Expected sorted boundaries")
    at = np.float64 if t.dtype == np.float64 else np.float32
    return num.cast(num.searchsorted(lc.constant(b.astype(at)), num.cast(t, at), right=True),
                    np.int32)


@api("math.in_top_k", "take_along_axis, gt, reduce_sum", tensors=("targets", "predictions"))
def _in_top_k(targets, predictions, k, name=None):
    """TF's InTopKV2: fewer than ``k`` classes score strictly higher than the target; a
    target out of range or a row with a non-finite score is False."""
    p = require(to_core(predictions), lambda d: d == np.float32, "in_top_k predictions")
    t = require(to_core(targets), INT, "in_top_k targets")
    if p.ndim != 2 or t.shape != p.shape[:1]:
        raise ValueError(f"in_top_k: targets {t.shape} do not match predictions {p.shape}")
    above = _higher_scores(p, t)
    return num.all(num.stack([  # a known class, finite scores, fewer than k above
        ops.eq(num.clamp(t, full_like(t, 0), full_like(t, p.shape[1] - 1)), t), num.all(num.isfinite(p), 1),
                              ops.lt(above, full_like(above, static_int(k)))], 0), 0)


def _host_bounds(v):
    """(min, max) of a value the host knows (eager, or a lazy integer constant), else None."""
    if not is_lazy_class(v.__class__):
        values = np.asarray(v)
        return (values.min(), values.max()) if values.size else None
    t = to_core(v)
    return lc.checks.known_range(t) if INT(t.dtype) else None


@api("debugging.assert_greater", "(checked on the host)", tensors=("x", "y"))
def _assert_greater(x, y, message=None, summarize=None, name=None):
    """Decided at the call when the host knows both values and every ``x`` is above
    every ``y`` (Keras's ``max`` asserts a static size > 0); else TF's own op, eagerly."""
    num.broadcast_shapes(to_core(x).shape, to_core(y).shape)
    a, b = _host_bounds(x), _host_bounds(y)
    if a is None or b is None or a[0] <= b[1]:
        raise NotImplementedError("assert_greater on values the host does not know")
