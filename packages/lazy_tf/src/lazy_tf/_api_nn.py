"""tf.nn: activations, softmax, losses, conv, pooling, dropout, normalization helpers."""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._api_math import composite, full_like
from ._api_random import next_key
from ._convert import broadcast, same_dtype, static, to_core
from ._table import FLOAT, INT, NUMERIC, REAL, api, in_range, require, unary

ops, num = lc.ops, lc.numeric


def _axis(axis) -> int:
    return -1 if axis is None else int(static(axis))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

for _tf, _ok, _fn, _lowers in [
    ("nn.relu", REAL, num.relu, "max"),
    ("nn.relu6", REAL, lambda t: ops.clamp(full_like(t, 0), t, full_like(t, 6)), "clamp"),
    ("nn.elu", FLOAT, lambda t: num.elu(t, expm1=False), "elu (composite)"),
    ("nn.selu", FLOAT, lambda t: num.elu(t, _SELU_ALPHA, _SELU_SCALE, expm1=False),
     "elu (composite)"),
    ("nn.softsign", FLOAT, num.softsign, "softsign (composite)"),
]:
    unary(_tf, lowers_to=_lowers)(composite(_fn, _ok, _tf))


@unary("nn.leaky_relu", lowers_to="leaky_relu (composite)")
def _leaky_relu(features, alpha=0.2, name=None):
    t = require(to_core(features), NUMERIC, "leaky_relu")
    if lc.dtypes.is_integer(t.dtype):
        t = num.cast(t, np.float32)  # TF casts integer features to float32
    return num.leaky_relu(t, float(np.float32(alpha)))  # the op's alpha attr is a float32


@unary("nn.gelu", lowers_to="gelu (composite)")
def _gelu(features, approximate=False, name=None):
    return num.gelu(require(to_core(features), FLOAT, "gelu"), "tanh" if approximate else "none")


@unary("nn.silu", lowers_to="silu (composite)")
def _silu(features, beta=1.0, name=None):
    t = require(to_core(features), FLOAT, "silu")
    if isinstance(beta, int | float) and beta == 1.0:
        return num.silu(t)
    return num.silu(t, num.broadcast_to(to_core(beta, t.dtype), t.shape))


def _softmax_like(fn, what: str):
    def impl(logits, axis=None, name=None):
        t = require(to_core(logits), FLOAT, what)
        if t.ndim == 0:  # TF: logits must have at least one dimension
            raise lc.ShapeError(f"{what}: logits must have >= 1 dimension, got shape []")
        return fn(t, _axis(axis))
    return impl


unary("nn.log_softmax", lowers_to="log_softmax (composite)")(_softmax_like(num.log_softmax, "log_softmax"))
api("nn.softmax", "softmax (composite)", tensors=("logits",))(_softmax_like(num.softmax, "softmax"))


@api("nn.sparse_softmax_cross_entropy_with_logits", "cross_entropy (composite)",
     tensors=("labels", "logits"))
def _sparse_xent(labels, logits, name=None):
    x = require(to_core(logits), FLOAT, "sparse_softmax_cross_entropy_with_logits")
    y = require(to_core(labels), INT, "labels")
    if x.ndim == 0 or y.shape != x.shape[:-1]:
        raise ValueError(f"Shape mismatch: The shape of labels (received {y.shape}) should "
                         f"equal the shape of logits except for the last dimension "
                         f"(received {x.shape}).")
    if x.shape[-1] == 0:
        raise lc.ShapeError("sparse_softmax_cross_entropy_with_logits needs at least one class")
    return sparse_xent_core(x, y)


def sparse_xent_core(x, labels):
    """TF's fused SparseSoftmaxCrossEntropyWithLogits kernel, row by row (the logits'
    max shift is a constant for the gradient). A label outside ``[0, classes)`` raises
    as TF's CPU kernel does (its GPU kernel gives NaN, as the lazy value would)."""
    out = num.cross_entropy(x, labels, reduction="none", class_axis=-1, out_of_range_nan=True)
    return in_range(labels, x.shape[-1], out, "SparseSoftmaxCrossEntropyWithLogits",
                    f"Received a label value which is outside the valid range of [0, {x.shape[-1]})")


@api("nn.softmax_cross_entropy_with_logits", "cross_entropy (composite)",
     tensors=("labels", "logits"))
def _softmax_xent(labels, logits, axis=-1, name=None):
    z, x = broadcast(labels, logits)
    require(x, FLOAT, "softmax_cross_entropy_with_logits")
    return num.cross_entropy(x, z, reduction="none", class_axis=_axis(axis))


@api("nn.weighted_cross_entropy_with_logits", "sigmoid_cross_entropy (composite)",
     tensors=("labels", "logits"))
def _weighted_xent(labels, logits, pos_weight, name=None):
    z, x, q = broadcast(labels, logits, pos_weight)
    require(x, FLOAT, "weighted_cross_entropy_with_logits")
    return num.sigmoid_cross_entropy(x, z, pos_weight=q)


api("nn.l2_loss", "mul, reduce_sum", tensors=("t",))(composite(
    lambda x: ops.div(num.sum(ops.mul(x, x)), lc.scalar(2, x.dtype)), FLOAT, "nn.l2_loss"))


@api("nn.bias_add", "add", tensors=("value", "bias"))
def _bias_add(value, bias, data_format=None, name=None):
    x, b = same_dtype(value, bias)
    if b.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {b.ndim}")
    c = 1 if data_format is not None and str(data_format).startswith("NC") else x.ndim - 1
    if x.ndim < 2 or x.shape[c] != b.shape[0]:
        raise lc.ShapeError(f"bias of size {b.shape[0]} does not match dimension {c} of {x.shape}")
    return ops.add(x, num.broadcast_to(ops.reshape(b, new_sizes=tuple(
        s if i == c else 1 for i, s in enumerate(x.shape))), x.shape))


@api("nn.moments", "moments (composite)", tensors=("x",))
def _moments(x, axes, shift=None, keepdims=False, name=None):
    return num.moments(require(to_core(x), FLOAT, "moments"), static(axes),
                       keepdims=bool(keepdims))


@api("nn.batch_normalization", "batch_norm (composite)",
     tensors=("x", "mean", "variance", "offset", "scale"))
def _batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    t, m, v = broadcast(x, mean, variance)
    w, b = (None if p is None else to_core(p, t.dtype) for p in (scale, offset))
    return num.batch_norm(t, m, v, w, b, float(variance_epsilon), channel_axis=None)


@api("nn.embedding_lookup", "gather (+ a range check)", tensors=("params", "ids"))
def _embedding_lookup(params, ids, max_norm=None, name=None):
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup with max_norm runs eagerly")
    i, p = require(to_core(ids), INT, "ids"), to_core(params)  # rows: TF's sparse gradient
    return lc.autodiff.mark_rows(in_range(i, p.shape[0] if p.ndim else 1, num.take(p, i, 0),
                                          "GatherV2"), i, np.int32)


@api("nn.dropout", "dropout (composite)", tensors=("x",))
def _dropout(x, rate, noise_shape=None, seed=None, name=None):
    t = require(to_core(x), FLOAT, "dropout")
    rate = float(static(rate))
    if not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                         f"Received: rate={rate}")
    if rate == 0:
        return t
    return num.dropout(t, rate, next_key(seed), noise_shape=None if noise_shape is None else
                       tuple(int(s) for s in static(noise_shape)))


# -- convolution and pooling (channels last, TF's default layouts) ---------------------
def _spatial(v, nd: int, what: str) -> tuple:
    """TF accepts an int, N ints, or N+2 ints (with 1s for batch and channels)."""
    v = static(v)
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        return tuple(v) * nd
    if len(v) == nd:
        return tuple(v)
    if len(v) == nd + 2:
        return tuple(v[1:-1])
    raise ValueError(f"{what} should be of length 1, {nd} or {nd + 2}. Received: {what}={v}")


def _padding(padding, nd):
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit, got {padding!r}")
        return p
    pads = static(padding)
    if len(pads) != nd + 2:
        raise ValueError(f"explicit padding needs {nd + 2} [before, after] pairs")
    return tuple((int(lo), int(hi)) for lo, hi in pads[1:-1])


def _channels_last(data_format) -> None:
    if data_format is not None and str(data_format).startswith("NC"):
        raise NotImplementedError("channels-first layouts run eagerly")


def _conv(x, w, strides, padding, dilations, nd, data_format=None):
    _channels_last(data_format)
    t, k = same_dtype(x, w)
    require(t, FLOAT, "conv")
    if t.ndim != nd + 2 or k.ndim != nd + 2:
        raise ValueError(f"input and filters must be rank {nd + 2}")
    if t.shape[-1] % k.shape[-2]:
        raise lc.ShapeError(f"input depth {t.shape[-1]} is not a multiple of filter depth "
                            f"{k.shape[-2]}")
    return num.conv(t, k, stride=_spatial(strides, nd, "strides"), padding=_padding(padding, nd),
                    dilation=_spatial(1 if dilations is None else dilations, nd, "dilations"),
                    groups=t.shape[-1] // k.shape[-2], channels_last=True)


@api("nn.conv2d", "conv_general_dilated", tensors=("input", "filters"))
def _conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
            name=None):
    return _conv(input, filters, strides, padding, dilations, 2, data_format)


@api("nn.conv1d", "conv_general_dilated", tensors=("input", "filters"))
def _conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
            name=None):
    return _conv(input, filters, stride, padding, dilations, 1, data_format)


@api("nn.convolution", "conv_general_dilated", tensors=("input", "filters"))
def _convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                 dilations=None, name=None):
    return _conv(input, filters, 1 if strides is None else strides, padding, dilations,
                 to_core(input).ndim - 2, data_format)


def _pool(kind, x, ksize, strides, padding, data_format, nd=None):
    _channels_last(data_format)
    t = require(to_core(x), REAL, f"{kind}_pool")
    nd = t.ndim - 2 if nd is None else nd
    if t.ndim != nd + 2:
        raise ValueError(f"Input tensor must be of rank {nd + 2}")
    k, s = _spatial(ksize, nd, "ksize"), _spatial(strides, nd, "strides")
    pad = _padding(padding, nd)
    if kind == "max":
        return num.max_pool(t, k, s, pad, channels_last=True)
    require(t, FLOAT, "avg_pool")
    return num.avg_pool(t, k, s, pad, channels_last=True, count_include_pad=False)


for _kind in ("max", "avg"):
    for _nd, _fmt in ((None, None), (1, "NWC"), (2, "NHWC"), (3, "NDHWC")):
        _name = f"nn.{_kind}_pool" + ("" if _nd is None else f"{_nd}d")

        def _make(kind=_kind, nd=_nd, fmt=_fmt):
            def impl(input, ksize, strides, padding, data_format=fmt, name=None):  # noqa: A002
                return _pool(kind, input, ksize, strides, padding, data_format, nd)
            return impl

        api(_name, f"reduce_window_{'max' if _kind == 'max' else 'sum'}",
            tensors=("input",))(_make())


def _conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                    data_format=None, dilations=None, name=None):
    """The gradient of an N-d conv: filters are [*k, out, in]; ``output_shape`` fixes
    the size the forward conv would have started from."""
    _channels_last(data_format)
    t, k = same_dtype(input, filters)
    require(t, FLOAT, "conv_transpose")
    out, nd = [int(s) for s in static(output_shape)], t.ndim - 2
    if nd < 1 or k.ndim != t.ndim or len(out) != t.ndim or k.shape[-1] != t.shape[-1] \
            or out[-1] != k.shape[-2] or out[0] != t.shape[0]:
        raise ValueError(f"conv_transpose: input {t.shape}, filters {k.shape} and "
                         f"output_shape {out} do not agree")
    stride = _spatial(strides, nd, "strides")
    dil = _spatial(1 if dilations is None else dilations, nd, "dilations")
    pads, extra = [], []
    for i in range(nd):
        k_eff, size = (k.shape[i] - 1) * dil[i] + 1, out[1 + i]
        if isinstance(padding, str) and padding.upper() == "SAME":
            total = max((-(-size // stride[i]) - 1) * stride[i] + k_eff - size, 0)
            lo, hi = total // 2, total - total // 2
        elif isinstance(padding, str) and padding.upper() == "VALID":
            lo = hi = 0
        else:
            raise NotImplementedError("explicit conv_transpose padding runs eagerly")
        natural = (t.shape[1 + i] - 1) * stride[i] + k_eff - lo - hi
        if not 0 <= size - natural < stride[i]:
            raise ValueError(f"output_shape {out} does not fit input {t.shape}")
        pads.append((lo, hi))
        extra.append(size - natural)
    return num.conv(t, ops.transpose(k, permutation=(*range(nd), nd + 1, nd)),  # [*k, in, out]
                    stride=stride, padding=tuple(pads), dilation=dil, channels_last=True,
                    transposed=True, output_padding=tuple(extra))


for _name in ("nn.conv_transpose", "nn.conv1d_transpose", "nn.conv2d_transpose",
              "nn.conv3d_transpose"):
    api(_name, "conv_general_dilated (input-dilated)", tensors=("input", "filters"))(
        _conv_transpose)


@api("nn.depthwise_conv2d", "conv_general_dilated (feature groups)", tensors=("input", "filter"))
def _depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                      dilations=None, name=None):
    """filter [h, w, in, multiplier] = a grouped conv with one group per input channel."""
    t, k = same_dtype(input, filter)
    if k.ndim != 4 or t.ndim != 4 or k.shape[2] != t.shape[3]:
        raise ValueError(f"depthwise_conv2d: filter {k.shape} does not fit input {t.shape}")
    return _conv(t, ops.reshape(k, new_sizes=(k.shape[0], k.shape[1], 1, k.shape[2] * k.shape[3])),
                 strides, padding, dilations, 2, data_format)


@api("nn.separable_conv2d", "conv_general_dilated (feature groups, then 1x1)",
     tensors=("input", "depthwise_filter", "pointwise_filter"))
def _separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                      data_format=None, dilations=None, name=None):
    """A depthwise conv, then a 1x1 conv mixing its channels (TF's definition)."""
    return _conv(_depthwise_conv2d(input, depthwise_filter, strides, padding, data_format,
                                   dilations), pointwise_filter, 1, "VALID", None, 2)
