"""Convolution: XLA's convolution, or patches and one matmul where XLA's CPU kernel loses.

XLA:CPU's convolution is far slower than PyTorch's for the deep layers of a ResNet
(few output pixels, many channels): measured on ResNet-18's shapes (batch 8, one
thread) a 3x3 512->512 convolution over a 2x2 map took ~700 ms forward in XLA against
16 ms in PyTorch. The same convolution written as a patch extraction (k*k strided
slices of the padded input, stacked) and one ``dot_general`` over (channels, offsets)
ran in ~13 ms forward and backward together, and its gradients (slices transpose to
pads, the matmul to two matmuls) stay fast. Which formulation runs is decided per
convolution from its shape (``_patches_win``); both are ordinary core ops, so the step
stays one XLA program and the backward is the core's ``vjp`` of whichever ran.
docs/performance.md (*Convolutions on CPU*) has the measurements.
"""

from __future__ import annotations

import itertools
import math

import lazycore as lc

from .common import num, ops
from .nn import _tname
from .registry import lower


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


#: the largest output map (pixels per image) that takes patches + matmul (measured)
PATCHES_MAX_PIXELS = 64


def _patches_win(x_shape, w_shape, out_spatial) -> bool:
    """Where XLA:CPU's convolution measured slower than patches + matmul: a kernel with
    a contraction of at least 64 channel-offsets over a small output map (the deep
    layers of a ResNet). Larger maps keep XLA's kernel (there it is on par with
    PyTorch's; patches would cost k*k copies of the input)."""
    contraction = w_shape[1] * math.prod(w_shape[2:])
    return contraction >= 64 and math.prod(out_spatial) <= PATCHES_MAX_PIXELS


def _patches_conv(x, w, stride, padding, dilation):
    """conv(x, w) as stacked strided slices of the padded input and one matmul."""
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    nd = len(k)
    out = tuple(_out_size(x.shape[2 + i], k[i], stride[i], padding[i], dilation[i])
                for i in range(nd))
    if any(padding):
        zero = lc.numeric.zeros((), x.dtype)
        x = ops.pad(x, zero, padding_config=((0, 0, 0), (0, 0, 0))
                    + tuple((p, p, 0) for p in padding))
    cols = []
    for offset in itertools.product(*[range(kk) for kk in k]):
        start = tuple(offset[i] * dilation[i] for i in range(nd))
        limit = tuple(start[i] + stride[i] * (out[i] - 1) + 1 for i in range(nd))
        col = ops.slice(x, start_indices=(0, 0) + start, limit_indices=(n, c) + limit,
                        strides=(1, 1) + tuple(stride))
        cols.append(ops.reshape(col, new_sizes=(n, c, 1) + out))
    patches = cols[0] if len(cols) == 1 else ops.concatenate(*cols, dimension=2)
    kernel = ops.reshape(w, new_sizes=(o, c, len(cols)))
    y = ops.dot_general(patches, kernel, contracting=((1, 2), (1, 2)), batch=((), ()))
    return ops.transpose(y, permutation=(0, nd + 1) + tuple(range(1, nd + 1)))


def _conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    batched = x.ndim == w.ndim
    if not batched:
        x = ops.reshape(x, new_sizes=(1,) + x.shape)
    nd = x.ndim - 2
    if not transposed and x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {x.shape[1]} channels instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"Input type ({_tname(x.dtype)}) and weight type ({_tname(w.dtype)}) "
                           "should be the same")
    stride, padding, dilation = tuple(stride), tuple(padding), tuple(dilation)
    out_spatial = None
    if not transposed and groups == 1:
        out_spatial = tuple(_out_size(x.shape[2 + i], w.shape[2 + i], stride[i], padding[i],
                                      dilation[i]) for i in range(nd))
    if out_spatial is not None and min(out_spatial) > 0 \
            and _patches_win(x.shape, w.shape, out_spatial):
        out = _patches_conv(x, w, stride, padding, dilation)
    else:
        out = num.conv(x, w, stride=stride, padding=tuple((p, p) for p in padding),
                       dilation=dilation, groups=groups, transposed=transposed,
                       output_padding=tuple(output_padding))
    if bias is not None:
        shape = (1, out.shape[1]) + (1,) * nd
        out = ops.add(out, num.broadcast_to(ops.reshape(bias, new_sizes=shape), out.shape))
    if not batched:
        out = ops.reshape(out, new_sizes=out.shape[1:])
    return out


@lower("convolution.default")
def convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    return _conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)


@lower("convolution_backward.default")
def convolution_backward(grad, x, w, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    out = _conv(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    gx, gw = lc.grad([out], [x, w], [grad])
    gb = None
    if output_mask[2]:
        axes = tuple(i for i in range(grad.ndim) if i != 1)
        gb = ops.reduce_sum(grad, axes=axes)
    return (gx if output_mask[0] else None, gw if output_mask[1] else None, gb)
