"""Convolution: the core's ``conv`` with its small-map patches path (XLA:CPU's
convolution is slow for the deep layers of a ResNet; ``lazycore.composites.conv`` has
the measurements and the rule); here only PyTorch's checks, unbatched inputs and the
backward's bias gradient."""

from __future__ import annotations

import lazycore as lc

from .common import OPMATH, D, num, ops
from .nn import _tname
from .registry import lower


@lower("convolution.default")
def convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    batched = x.ndim == w.ndim
    if not batched:
        x = ops.reshape(x, new_sizes=(1,) + x.shape)
    if not transposed and x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {x.shape[1]} channels instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"Input type ({_tname(x.dtype)}) and weight type ({_tname(w.dtype)}) "
                           "should be the same")
    dtype = x.dtype
    if dtype in OPMATH:  # eager accumulates in float32, adds the bias, rounds once
        x, w, bias = (t if t is None else num.cast(t, D.float32) for t in (x, w, bias))
    out = num.conv(x, w, stride=tuple(stride), padding=tuple((p, p) for p in padding),
                   dilation=tuple(dilation), groups=groups, transposed=transposed,
                   output_padding=tuple(output_padding), bias=bias, small_map_patches=True)
    if not batched:
        out = ops.reshape(out, new_sizes=out.shape[1:])
    return num.cast(out, dtype)


@lower("convolution_backward.default")
def convolution_backward(grad, x, w, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    out = convolution(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    gx, gw = lc.grad([out], [x, w], [grad])
    gb = ops.reduce_sum(grad, axes=tuple(i for i in range(grad.ndim) if i != 1)) \
        if output_mask[2] else None
    return (gx if output_mask[0] else None, gw if output_mask[1] else None, gb)


@lower("_weight_norm_interface_backward.default")
def weight_norm_backward(grad, v, g, norms, dim):
    """``nn.utils.weight_norm``'s ``w = g * v / ||v||`` (norm over every axis but ``dim``):
    the lazy VJP of that product (Wav2Vec2's positional convolution; it fell back)."""
    norm = num.vector_norm(v, 2, tuple(i for i in range(v.ndim) if i != dim), keepdims=True)
    return tuple(lc.grad([ops.mul(v, num.broadcast_to(ops.div(g, norm), v.shape))], [v, g], [grad]))
