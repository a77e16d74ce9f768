"""Table-driven conformance: each supported TF API on eager tf.Tensors and on lazy
tensors; values, dtypes, shapes and exception types must agree, and supported calls
must not fall back to eager TF."""

import numpy as np
import pytest
import tensorflow as tf
from tf_helpers import assert_same, lazy

import lazy_tf as ltf
import lazycore as lc

rng = np.random.default_rng(0)


def F(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def P(*shape):  # positive floats
    return F(*shape, lo=0.5, hi=2.0)


def U(*shape):  # in (-1, 1)
    return F(*shape, lo=-0.9, hi=0.9)


def I(*shape, lo=-5, hi=6, dtype=np.int32):  # noqa: E743
    return rng.integers(lo, hi, shape).astype(dtype)


def B(*shape):
    return rng.integers(0, 2, shape).astype(bool)


def SPD(n):
    a = F(n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


C = []  # (id, fn, inputs, rtol)


def case(name, fn, *inputs, rtol=1e-5):
    C.append(pytest.param(fn, inputs, rtol, id=name))


# -- unary elementwise ------------------------------------------------------------------
for api, make in [
    ("math.abs", F), ("math.negative", F), ("math.sign", F), ("math.exp", F), ("math.expm1", F),
    ("math.log", P), ("math.log1p", P), ("math.sqrt", P), ("math.rsqrt", P), ("math.sin", F),
    ("math.cos", F), ("math.tan", U), ("math.asin", U), ("math.acos", U), ("math.atan", F),
    ("math.sinh", F), ("math.cosh", F), ("math.tanh", F), ("math.asinh", F), ("math.acosh", P),
    ("math.atanh", U), ("math.sigmoid", F), ("math.erf", F), ("math.erfc", F),
    ("math.erfinv", U), ("math.lgamma", P), ("math.digamma", P), ("math.bessel_i0e", F),
    ("math.bessel_i1e", F), ("math.floor", F), ("math.ceil", F), ("math.rint", F),
    ("math.round", F), ("math.is_finite", F), ("math.is_nan", F), ("math.is_inf", F),
    ("math.square", F), ("math.reciprocal", P), ("math.reciprocal_no_nan", F),
    ("math.softplus", F), ("math.log_sigmoid", F), ("math.ndtri", P), ("nn.relu", F),
    ("nn.relu6", F), ("nn.elu", F), ("nn.selu", F), ("nn.silu", F), ("nn.softsign", F),
    ("nn.gelu", F), ("nn.log_softmax", F), ("nn.softmax", F), ("zeros_like", F),
    ("ones_like", F), ("identity", F), ("stop_gradient", F), ("math.real", F),
]:
    fn = eval("tf." + api)  # noqa: S307 - names from the list above
    arg = make(3, 4) if api != "math.ndtri" else F(3, 4, lo=0.05, hi=0.95)
    case(api, fn, arg, rtol=1e-4)

case("math.abs-int", tf.math.abs, I(5))
case("math.negative-int64", tf.math.negative, I(5, dtype=np.int64))
case("math.round-int", tf.math.round, I(5))
case("math.round-half", tf.math.round, np.array([0.5, 1.5, 2.5, -0.5], np.float32))
case("math.square-int", tf.math.square, I(4))
case("logical_not", tf.math.logical_not, B(5))
case("bitwise.invert", tf.bitwise.invert, I(5))
case("cast-f2i", lambda x: tf.cast(x, tf.int32), F(6) * 3)
case("cast-i2f", lambda x: tf.cast(x, tf.float64), I(6))
case("cast-b2f", lambda x: tf.cast(x, tf.float32), B(6))
case("cast-f2b", lambda x: tf.cast(x, tf.bool), np.array([0.0, 1.0, -2.0], np.float32))
case("saturate_cast", lambda x: tf.dtypes.saturate_cast(x, tf.uint8), F(6) * 300)
case("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.5), F(3, 4))
case("clip_by_value-tensor", lambda x, lo: tf.clip_by_value(x, lo, 1.0), F(3, 4), F(4) - 1)
case("leaky_relu", lambda x: tf.nn.leaky_relu(x, alpha=0.1), F(3, 4))
case("gelu-approx", lambda x: tf.nn.gelu(x, approximate=True), F(3, 4))
case("silu-beta", lambda x: tf.nn.silu(x, beta=2.0), F(3, 4))
case("log_softmax-axis0", lambda x: tf.nn.log_softmax(x, axis=0), F(3, 4))
case("softmax-axis0", lambda x: tf.nn.softmax(x, axis=0), F(3, 4))
case("zeros_like-dtype", lambda x: tf.zeros_like(x, dtype=tf.int64), F(3))
case("float64-exp", tf.math.exp, F(4, dtype=np.float64))

# -- binary elementwise ----------------------------------------------------------------
for api, a, b in [
    ("math.add", F(3, 4), F(3, 4)), ("math.subtract", F(3, 4), F(4)),
    ("math.multiply", F(3, 1), F(1, 4)), ("math.maximum", F(3, 4), F(3, 4)),
    ("math.minimum", F(3, 4), F(3, 4)), ("math.pow", P(3, 4), F(3, 4)),
    ("math.atan2", F(3, 4), F(3, 4)), ("math.equal", I(6, lo=0, hi=3), I(6, lo=0, hi=3)),
    ("math.not_equal", I(6, lo=0, hi=3), I(6, lo=0, hi=3)), ("math.less", F(5), F(5)),
    ("math.less_equal", F(5), F(5)), ("math.greater", F(5), F(5)),
    ("math.greater_equal", F(5), F(5)), ("math.logical_and", B(6), B(6)),
    ("math.logical_or", B(6), B(6)), ("math.logical_xor", B(6), B(6)),
    ("bitwise.bitwise_and", I(6), I(6)), ("bitwise.bitwise_or", I(6), I(6)),
    ("bitwise.bitwise_xor", I(6), I(6)), ("bitwise.left_shift", I(6), I(6, lo=0, hi=4)),
    ("bitwise.right_shift", I(6), I(6, lo=0, hi=4)), ("math.truediv", F(5), P(5)),
    ("math.divide", I(5), I(5, lo=1, hi=4)), ("math.floordiv", I(8), I(8, lo=1, hi=4) * -1),
    ("math.floordiv-float", F(6), P(6)), ("math.floormod", I(8), I(8, lo=1, hi=4)),
    ("math.floormod-float", F(6), -P(6)), ("math.squared_difference", F(5), F(5)),
    ("math.divide_no_nan", F(5), np.array([0, 1, 2, 0, 3], np.float32)),
    ("math.multiply_no_nan", F(5), np.array([0, 1, 2, 0, 3], np.float32)),
    ("math.xdivy", np.array([0, 1, 2], np.float32), P(3)),
    ("math.xlogy", np.array([0, 1, 2], np.float32), P(3)),
    ("math.xlog1py", np.array([0, 1, 2], np.float32), P(3)),
    ("truncatediv", I(6), I(6, lo=1, hi=4)), ("truncatemod", I(6), I(6, lo=1, hi=4)),
    ("nn.sigmoid_cross_entropy_with_logits", F(3, 4, lo=0, hi=1), F(3, 4)),
    ("dtypes.complex", F(3), F(3)),
]:
    name = api.split("-")[0]
    fn = eval("tf." + name)  # noqa: S307
    if name == "nn.sigmoid_cross_entropy_with_logits":
        fn = lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)  # noqa: E731
    case(api, fn, a, b)

case("truediv-int32", lambda x, y: x / y, I(5), I(5, lo=1, hi=4))
case("add-scalar", lambda x: tf.add(x, 2.5), F(3))
case("radd-scalar", lambda x: 2.5 + x, F(3))
case("rsub-scalar", lambda x: 1 - x, I(3))
case("mul-int-scalar", lambda x: x * 3, I(3))
case("pow-op", lambda x: x ** 2, F(3))
case("rpow-op", lambda x: 2.0 ** x, F(3))
case("mod-op", lambda x: x % 3, I(6))
case("floordiv-op", lambda x: x // 2, I(6))
case("matmul-op", lambda x, y: x @ y, F(2, 3), F(3, 4))
case("neg-op", lambda x: -x, F(3))
case("abs-op", lambda x: abs(x), F(3))
case("invert-bool-op", lambda x: ~x, B(4))
case("and-bool-op", lambda x, y: x & y, B(4), B(4))
case("or-int-op", lambda x, y: x | y, I(4), I(4))
case("lt-op", lambda x, y: x < y, F(4), F(4))
case("ge-op", lambda x: x >= 0.0, F(4))
case("eq-op", lambda x, y: x == y, I(4, lo=0, hi=2), I(4, lo=0, hi=2))
case("ne-op", lambda x: x != 1, I(4, lo=0, hi=2))
case("add-numpy", lambda x: tf.add(x, np.ones(3)), F(3))
case("add-list", lambda x: x + [1.0, 2.0, 3.0], F(3))
case("add-bool-scalar", lambda x: x + True, F(3))
case("operators-add-eager-lhs", lambda x: tf.constant([1.0, 2.0, 3.0]) + x, F(3))
case("operators-mul-eager-lhs", lambda x: tf.constant([1.0, 2.0, 3.0]) * x, F(3))
case("add_n", lambda x, y: tf.math.add_n([x, y, x]), F(3), F(3))

# -- reductions ------------------------------------------------------------------------
for api in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
            "reduce_logsumexp", "reduce_std", "reduce_variance", "reduce_euclidean_norm"]:
    fn = getattr(tf.math, api)
    case(api, fn, F(3, 4))
    case(api + "-axis", lambda x, fn=fn: fn(x, axis=1), F(3, 4))
    case(api + "-keepdims", lambda x, fn=fn: fn(x, axis=[0, 2], keepdims=True), F(2, 3, 4))
case("reduce_sum-int8-wraps", tf.reduce_sum, np.array([100, 100], np.int8))
case("reduce_mean-int", lambda x: tf.reduce_mean(x, axis=0), I(4, 3))
case("reduce_all", lambda x: tf.reduce_all(x, axis=1), B(3, 4))
case("reduce_any", tf.reduce_any, B(3, 4))
case("argmax", tf.argmax, F(4, 5))
case("argmax-axis1-int32", lambda x: tf.argmax(x, axis=1, output_type=tf.int32), F(4, 5))
case("argmin", lambda x: tf.argmin(x, axis=-1), F(4, 5))
case("cumsum", lambda x: tf.cumsum(x, axis=1), F(3, 4))
case("cumsum-exclusive-reverse", lambda x: tf.cumsum(x, axis=1, exclusive=True, reverse=True),
     F(3, 4))
case("cumsum-exclusive", lambda x: tf.cumsum(x, exclusive=True), I(5))
case("cumprod", lambda x: tf.math.cumprod(x, axis=0), F(3, 4))
case("cumulative_logsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1), F(3, 4))
case("count_nonzero", lambda x: tf.math.count_nonzero(x, axis=0), I(4, 3, lo=0, hi=2))

# -- shapes, slicing, gathering ----------------------------------------------------------
case("reshape", lambda x: tf.reshape(x, [4, -1]), F(2, 3, 4))
case("transpose", tf.transpose, F(2, 3, 4))
case("transpose-perm", lambda x: tf.transpose(x, perm=[1, 0, 2]), F(2, 3, 4))
case("matrix_transpose", tf.linalg.matrix_transpose, F(2, 3, 4))
case("concat", lambda x, y: tf.concat([x, y], axis=1), F(2, 3), F(2, 2))
case("concat-mixed-eager", lambda x: tf.concat([x, tf.ones([2, 1])], -1), F(2, 3))
case("stack", lambda x, y: tf.stack([x, y], axis=1), F(2, 3), F(2, 3))
case("unstack", lambda x: tf.unstack(x, axis=1), F(2, 3))
case("split-int", lambda x: tf.split(x, 2, axis=1), F(3, 4))
case("split-sizes", lambda x: tf.split(x, [1, -1], axis=0), F(3, 4))
case("squeeze", tf.squeeze, F(1, 3, 1))
case("squeeze-axis", lambda x: tf.squeeze(x, axis=[2]), F(1, 3, 1))
case("expand_dims", lambda x: tf.expand_dims(x, -1), F(2, 3))
case("tile", lambda x: tf.tile(x, [2, 3]), F(2, 3))
case("repeat-axis", lambda x: tf.repeat(x, 2, axis=1), F(2, 3, 2))
case("repeat-flat", lambda x: tf.repeat(x, [3]), F(2, 3))
case("repeat-negative-axis", lambda x: tf.repeat(x, 2, axis=-2), F(2, 3, 2))
case("pad", lambda x: tf.pad(x, [[1, 0], [2, 1]], constant_values=3.0), F(2, 3))
case("reverse", lambda x: tf.reverse(x, axis=[1]), F(2, 3))
case("roll", lambda x: tf.roll(x, shift=1, axis=1), F(2, 3))
case("broadcast_to", lambda x: tf.broadcast_to(x, [2, 3, 4]), F(3, 1))
case("fill", lambda x: tf.fill([2, 3], x), np.float32(1.5))
case("where", lambda c, x, y: tf.where(c, x, y), B(3, 4), F(3, 4), F(4))
case("where-1arg", lambda c: tf.where(c), B(3, 4))
case("gather", lambda x, i: tf.gather(x, i), F(5, 3), I(4, lo=0, hi=5))
case("gather-axis", lambda x, i: tf.gather(x, i, axis=1), F(5, 3), I(2, 2, lo=0, hi=3))
case("gather_nd", lambda x, i: tf.gather_nd(x, i), F(4, 3), np.array([[0, 1], [3, 2]], np.int32))
case("gather_nd-rows", lambda x, i: tf.gather_nd(x, i), F(4, 3), np.array([[1], [3]], np.int32))
case("slice", lambda x: tf.slice(x, [1, 0], [2, -1]), F(4, 3))
case("strided_slice", lambda x: tf.strided_slice(x, [0, 2], [4, 0], [2, -1]), F(4, 3))
case("strided_slice-masks", lambda x: tf.strided_slice(x, [1, 0], [0, 2], begin_mask=0,
                                                       end_mask=1, shrink_axis_mask=2), F(4, 3))
case("getitem", lambda x: x[1:, ::-1], F(4, 3))
case("getitem-int", lambda x: x[2], F(4, 3))
case("getitem-newaxis-ellipsis", lambda x: x[None, ..., 0], F(4, 3))
case("getitem-tensor-index", lambda x: x[tf.constant(1)], F(4, 3))
case("one_hot", lambda i: tf.one_hot(i, 4), I(5, lo=0, hi=4))
case("one_hot-axis0", lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
     I(4, lo=0, hi=3))
case("shape", tf.shape, F(2, 3))
case("size", tf.size, F(2, 3))
case("rank", tf.rank, F(2, 3))
case("boolean_mask", tf.boolean_mask, F(5, 2), np.array([1, 0, 1, 1, 0], bool))
case("sort", lambda x: tf.sort(x, direction="DESCENDING"), F(3, 5))
case("argsort", lambda x: tf.argsort(x, axis=0), F(4, 3))
case("top_k", lambda x: tuple(tf.math.top_k(x, k=2)), F(3, 5))
case("tensor_scatter_nd_update", lambda x, u: tf.tensor_scatter_nd_update(
    x, [[0], [2]], u), F(4, 3), F(2, 3))
case("tensor_scatter_nd_add", lambda x, u: tf.tensor_scatter_nd_add(
    x, [[0, 1], [2, 2]], u), F(4, 3), F(2))

# -- linalg --------------------------------------------------------------------------------
case("matmul", tf.matmul, F(2, 3), F(3, 4))
case("matmul-transpose_b", lambda a, b: tf.matmul(a, b, transpose_b=True), F(2, 3), F(4, 3))
case("matmul-batch-broadcast", tf.matmul, F(2, 2, 3), F(3, 4))
case("matvec", tf.linalg.matvec, F(2, 3), F(3))
case("tensordot", lambda a, b: tf.tensordot(a, b, axes=1), F(2, 3), F(3, 4))
case("tensordot-pairs", lambda a, b: tf.tensordot(a, b, axes=[[0], [1]]), F(3, 2), F(4, 3))
case("inv", tf.linalg.inv, SPD(3), rtol=1e-4)
case("det", tf.linalg.det, SPD(3), rtol=1e-4)
case("cholesky", tf.linalg.cholesky, SPD(3), rtol=1e-4)
case("solve", tf.linalg.solve, SPD(3), F(3, 2), rtol=1e-4)
case("triangular_solve", lambda a, b: tf.linalg.triangular_solve(a, b),
     np.tril(SPD(3)), F(3, 2), rtol=1e-4)
case("trace", tf.linalg.trace, F(3, 3))
case("diag_part", tf.linalg.diag_part, F(2, 3, 3))
case("diag", tf.linalg.diag, F(2, 3))
case("band_part", lambda x: tf.linalg.band_part(x, 1, 0), F(4, 4))
case("norm", tf.norm, F(3, 4), rtol=1e-5)
case("norm-axis", lambda x: tf.norm(x, axis=1, keepdims=True), F(3, 4))
case("l2_normalize", lambda x: tf.math.l2_normalize(x, axis=1), F(3, 4))
case("eigh-values", lambda x: tf.linalg.eigh(x)[0], SPD(3), rtol=1e-4)

# -- nn -------------------------------------------------------------------------------------
case("sparse_softmax_xent",
     lambda y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x),
     I(4, lo=0, hi=5), F(4, 5))
case("softmax_xent", lambda y, x: tf.nn.softmax_cross_entropy_with_logits(y, x),
     np.eye(5, dtype=np.float32)[:4], F(4, 5))
case("weighted_xent", lambda y, x: tf.nn.weighted_cross_entropy_with_logits(y, x, 2.0),
     F(4, 5, lo=0, hi=1), F(4, 5))
case("l2_loss", tf.nn.l2_loss, F(3, 4))
case("bias_add", tf.nn.bias_add, F(2, 3, 4), F(4))
case("moments", lambda x: tf.nn.moments(x, axes=[0, 1]), F(2, 3, 4))
case("batch_normalization", lambda x, m, v: tf.nn.batch_normalization(
    x, m, v, offset=0.1, scale=2.0, variance_epsilon=1e-3), F(2, 4), F(4), P(4))
case("embedding_lookup", tf.nn.embedding_lookup, F(6, 3), I(2, 2, lo=0, hi=6))
case("conv2d-same", lambda x, w: tf.nn.conv2d(x, w, strides=1, padding="SAME"),
     F(2, 6, 6, 3), F(3, 3, 3, 4), rtol=1e-4)
case("conv2d-valid-stride2", lambda x, w: tf.nn.conv2d(x, w, strides=[1, 2, 2, 1],
                                                       padding="VALID"),
     F(2, 7, 7, 3), F(3, 3, 3, 4), rtol=1e-4)
case("conv2d-explicit-dilated", lambda x, w: tf.nn.conv2d(
    x, w, strides=1, padding=[[0, 0], [1, 1], [2, 0], [0, 0]], dilations=2),
    F(1, 6, 6, 2), F(2, 2, 2, 3), rtol=1e-4)
case("conv1d", lambda x, w: tf.nn.conv1d(x, w, stride=1, padding="SAME"), F(2, 8, 3),
     F(3, 3, 4), rtol=1e-4)
case("conv2d_transpose-same", lambda x, w: tf.nn.conv2d_transpose(x, w, [2, 8, 8, 2], 2, "SAME"),
     F(2, 4, 4, 3), F(3, 3, 2, 3), rtol=1e-4)
case("conv2d_transpose-valid-odd", lambda x, w: tf.nn.conv2d_transpose(
    x, w, [1, 10, 9, 2], [1, 2, 2, 1], "VALID"), F(1, 4, 4, 3), F(3, 2, 2, 3), rtol=1e-4)
case("conv2d_transpose-same-odd", lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 1], 2,
                                                                      "SAME"),
     F(1, 4, 4, 2), F(3, 3, 1, 2), rtol=1e-4)
case("conv_transpose-2d", lambda x, w: tf.nn.conv_transpose(x, w, [1, 9, 8, 2], 2, "SAME"),
     F(1, 5, 4, 3), F(3, 3, 2, 3), rtol=1e-4)
case("conv1d_transpose-valid", lambda x, w: tf.nn.conv1d_transpose(x, w, [2, 11, 2], 2, "VALID"),
     F(2, 5, 3), F(3, 2, 3), rtol=1e-4)
case("conv3d_transpose-same", lambda x, w: tf.nn.conv3d_transpose(x, w, [1, 6, 4, 6, 2], 2),
     F(1, 3, 2, 3, 3), F(3, 2, 3, 2, 3), rtol=1e-4)
case("separable_conv2d", lambda x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME"),
     F(2, 6, 6, 3), F(3, 3, 3, 2), F(1, 1, 6, 4), rtol=1e-4)
case("depthwise_conv2d", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
     F(2, 5, 5, 3), F(3, 3, 3, 2), rtol=1e-4)
case("max_pool2d", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), F(2, 6, 6, 3))
case("max_pool2d-same", lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), F(2, 7, 7, 3))
case("avg_pool2d", lambda x: tf.nn.avg_pool2d(x, 2, 2, "VALID"), F(2, 6, 6, 3))
case("avg_pool2d-same", lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), F(2, 7, 7, 3))
case("max_pool-generic", lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
     F(1, 4, 4, 2))
case("avg_pool1d", lambda x: tf.nn.avg_pool1d(x, 2, 1, "SAME"), F(2, 5, 3))


@pytest.mark.parametrize("fn,inputs,rtol", C)
def test_matches_eager(fn, inputs, rtol, metrics):
    eager = fn(*[tf.constant(a) for a in inputs])
    out = fn(*[lazy(a) for a in inputs])
    assert_same(out, eager, rtol=rtol)
    assert ltf.fallback_counts() == {}, "a supported API fell back to eager TF"


# -- exceptions: TF's own types, raised at the call ---------------------------------------
E = []


def error(name, fn, *inputs):
    E.append(pytest.param(fn, inputs, id=name))


error("add-dtype-mismatch", lambda x, y: x + y, F(3), F(3, dtype=np.float64))
error("add-int-float-scalar", lambda x: x + 1.5, I(3))
error("add-shape-mismatch", tf.add, F(2), F(3))
error("matmul-mismatch", tf.matmul, F(2, 3), F(2, 3))
error("matmul-dtype", tf.matmul, F(2, 3), F(3, 2, dtype=np.float64))
error("matmul-rank1", tf.matmul, F(3), F(3))
error("reshape-bad", lambda x: tf.reshape(x, [5]), F(2, 3))
error("reduce_sum-axis", lambda x: tf.reduce_sum(x, axis=3), F(2, 3))
error("concat-dtype", lambda x, y: tf.concat([x, y], 0), F(2), I(2))
error("concat-shape", lambda x, y: tf.concat([x, y], 0), F(2, 2), F(2, 3))
error("getitem-oob", lambda x: x[5], F(3))
error("getitem-list", lambda x: x[[0, 1]], F(3))
error("getitem-float", lambda x: x[1.5], F(3))
error("transpose-perm", lambda x: tf.transpose(x, [1]), F(2, 3))
error("exp-int", tf.exp, I(3))
error("relu-bool", tf.nn.relu, B(3))
error("softmax-int", tf.nn.softmax, I(3))
error("squeeze-non1", lambda x: tf.squeeze(x, 0), F(2, 3))
error("expand_dims-axis", lambda x: tf.expand_dims(x, 5), F(2, 3))
error("stack-mismatch", lambda x, y: tf.stack([x, y]), F(2), F(3))
error("logical_and-float", tf.math.logical_and, F(3), F(3))
error("sparse_xent-shape", lambda y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(y, x),
      I(3, lo=0, hi=2), F(4, 2))
error("split-indivisible", lambda x: tf.split(x, 3, axis=1), F(2, 4))
error("conv2d-depth", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), F(1, 4, 4, 3), F(3, 3, 2, 4))
error("where-dtype", lambda c, x, y: tf.where(c, x, y), B(3), F(3), I(3))
error("int-of-vector", lambda x: int(x), F(3))
error("bool-of-vector", lambda x: bool(x), F(3))
error("cast-to-string", lambda x: tf.cast(x, tf.string), F(3))
error("len-scalar", lambda x: len(x), np.float32(1.0))
error("eq-string", lambda x: x == "a", F(3))


@pytest.mark.parametrize("fn,inputs", E)
def test_raises_like_eager(fn, inputs):
    with pytest.raises(Exception) as eager_error:
        fn(*[tf.constant(a) for a in inputs])
    with pytest.raises(Exception) as lazy_error:
        fn(*[lazy(a) for a in inputs])
    assert type(lazy_error.value) is type(eager_error.value), (
        f"eager raised {type(eager_error.value).__name__}: {eager_error.value}; lazy raised "
        f"{type(lazy_error.value).__name__}: {lazy_error.value}")


def test_error_is_raised_at_the_call_not_at_sync(metrics):
    x = lazy(F(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.matmul(x, x)
    assert lc.metrics.counters()["syncs"] <= 1  # only the oracle's copy of x (already data)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "matmul", "lt", "le",
                                "gt", "ge", "eq", "ne", "floordiv", "mod", "and", "or", "xor"])
def test_operators_with_an_eager_tensor_on_either_side(op, metrics):
    import operator

    fn = getattr(operator, op + "_" if op in ("and", "or") else op)
    ints = op in ("floordiv", "mod", "and", "or", "xor")
    a, b = (I(2, 2), I(2, 2, lo=1, hi=4)) if ints else (P(2, 2), P(2, 2))
    eager = fn(tf.constant(a), tf.constant(b))
    assert_same(fn(tf.constant(a), lazy(b)), eager)
    assert_same(fn(lazy(a), tf.constant(b)), eager)
    assert ltf.fallback_counts() == {}


@pytest.mark.parametrize("exponent", [np.array([-1, 2]), -1])
@pytest.mark.parametrize("spelling", ["pow", "operator"])
def test_integer_to_negative_power_raises_like_tf(exponent, spelling):
    """TF's Pow kernel refuses a negative integer exponent; XLA would return 0 silently.
    A host exponent raises at the call, a lazy one at the next barrier."""
    base = np.array([2, 3])
    compute = (lambda x, y: tf.pow(x, y)) if spelling == "pow" else (lambda x, y: x ** y)
    with pytest.raises(tf.errors.InvalidArgumentError):
        compute(tf.constant(base), exponent)
    y = lazy(exponent) if isinstance(exponent, np.ndarray) else exponent
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        compute(lazy(base), y).numpy()
    assert_same(compute(lazy(base), lazy(np.array([0, 2]))), compute(tf.constant(base), [0, 2]))


@pytest.mark.parametrize("spelling", ["pow", "operator", "host exponent"])
def test_complex_zero_base_powers_like_tf(spelling):
    """TF's complex ``Pow`` is C's ``cpow``: ``0 ** z`` is 0 for ``Re z > 0``, inf+nan j
    for ``Re z < 0`` and nan for ``Re z == 0`` (``0 ** 0`` too); XLA's ``pow`` gives nan,
    nan and 1."""
    base = np.array([0j, 0j, 0j, 0j, 0j, 1 + 1j])
    exps = np.array([1 + 1j, 2, -1 + 1j, 1j, 0, 0.5 - 1j])
    compute = {"pow": tf.pow, "operator": lambda x, y: x ** y,
               "host exponent": lambda x, y: x ** 0}[spelling]
    assert_same(compute(lazy(base), lazy(exps)), compute(tf.constant(base), tf.constant(exps)))


RANGE_CHECKED = {
    "gather": lambda p, i: tf.gather(p, i),
    "gather axis 1": lambda p, i: tf.gather(p, i, axis=1),
    "gather_nd": lambda p, i: tf.gather_nd(p, i[:, None]),
    "embedding_lookup": lambda p, i: tf.nn.embedding_lookup(p, i),
    "tensor_scatter_nd_update": lambda p, i: tf.tensor_scatter_nd_update(
        p, i[:, None], tf.ones((2, 3), p.dtype)),
    "tensor_scatter_nd_add": lambda p, i: tf.tensor_scatter_nd_add(
        p, i[:, None], tf.ones((2, 3), p.dtype)),
    "sparse xent": lambda p, i: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=i, logits=tf.gather(p, [0, 1])),
}


@pytest.mark.parametrize("op", list(RANGE_CHECKED))
@pytest.mark.parametrize("indices", [[1, 3], [0, -1]])
def test_out_of_range_indices_raise_like_tf_cpu(op, indices):
    """TF's CPU kernels raise InvalidArgumentError for an index outside ``[0, size)``
    (XLA clamps or drops it): host indices at the call, computed ones at the next barrier;
    a value that does not depend on the op still reads."""
    params, fn = np.arange(9.0).reshape(3, 3), RANGE_CHECKED[op]
    good, bad = np.array([2, 0]), np.array(indices)
    assert_same(fn(lazy(params), lazy(good)), fn(tf.constant(params), tf.constant(good)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        fn(tf.constant(params), tf.constant(bad))
    with pytest.raises(tf.errors.InvalidArgumentError):
        fn(lazy(params), lazy(bad)).numpy()
    other = lazy(params) * 2.0
    computed = lazy(bad + 1) - 1  # values the host does not know: checked in the program
    out = fn(lazy(params), computed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="checked in the compiled program"):
        out.numpy()
    np.testing.assert_array_equal(other.numpy(), params * 2.0)


@pytest.mark.parametrize("api", ["scatter_update", "scatter_add"])
def test_variable_scatter_out_of_range_raises_like_tf_cpu(api):
    rows = tf.IndexedSlices(tf.constant([[9.0, 9.0]], tf.float64), tf.constant([3]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        getattr(tf.Variable(np.ones((3, 2))), api)(rows)
    v = ltf.Variable(np.ones((3, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        getattr(v, api)(tf.IndexedSlices(lazy(np.array([[9.0, 9.0]])), lazy(np.array([3]))))
