"""Convolution with channels-first (PyTorch) or channels-last (TF) layouts (pooling:
``pooling.py``), as XLA's convolution or, for small output maps, patches + one matmul.

XLA:CPU's convolution is far slower than PyTorch's for the deep layers of a ResNet
(few output pixels, many channels): measured on ResNet-18's shapes (batch 8, one
thread) a 3x3 512->512 convolution over a 2x2 map took ~700 ms forward in XLA against
16 ms in PyTorch. The same convolution written as a patch extraction (k*k strided
slices of the padded input, stacked) and one ``dot_general`` over (channels, offsets)
ran in ~13 ms forward and backward together, and its gradients (slices transpose to
pads, the matmul to two matmuls) stay fast. ``conv(small_map_patches=True)`` decides
per convolution from its shape (``patches_win``); both are ordinary core ops, so a step
stays one XLA program and a backward is the core's ``vjp`` of whichever ran.
docs/performance.md (*Convolutions on CPU*) has the measurements.
"""

from __future__ import annotations

import itertools
import math

from .. import ops
from ..tensor import Tensor
from .broadcasting import full

#: the largest output map (pixels per image) that takes patches + matmul (measured)
PATCHES_MAX_PIXELS = 64

_SPATIAL = "DHW"


def _dimension_numbers(nd: int, channels_last: bool):
    sp = _SPATIAL[-nd:]
    if channels_last:
        return ("N" + sp + "C", sp + "IO", "N" + sp + "C")
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def _tuple(v, n):
    return tuple(v) if isinstance(v, tuple | list) else (v,) * n


def patches_win(x_shape, w_shape, out_spatial) -> bool:
    """Where XLA:CPU's convolution measured slower than patches + matmul (channels-first
    shapes): a kernel with a contraction of at least 64 channel-offsets over a small
    output map (the deep layers of a ResNet). Larger maps keep XLA's kernel (there it is
    on par with PyTorch's; patches would cost k*k copies of the input)."""
    return w_shape[1] * math.prod(w_shape[2:]) >= 64 and math.prod(out_spatial) <= PATCHES_MAX_PIXELS


def _out_size(size, k, s, pad, d):
    return (size + pad[0] + pad[1] - d * (k - 1) - 1) // s + 1


def _patches_conv(x: Tensor, w: Tensor, stride, pad, dilation, out) -> Tensor:
    """Channels-first conv(x, w) as stacked strided slices of the padded input and one
    matmul over (channels, kernel offsets)."""
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    nd = len(k)
    if any(lo or hi for lo, hi in pad):
        x = ops.pad(x, full((), 0, x.dtype), padding_config=((0, 0, 0), (0, 0, 0))
                    + tuple((lo, hi, 0) for lo, hi in pad))
    cols = []
    for offset in itertools.product(*[range(kk) for kk in k]):
        start = tuple(offset[i] * dilation[i] for i in range(nd))
        limit = tuple(start[i] + stride[i] * (out[i] - 1) + 1 for i in range(nd))
        col = ops.slice(x, start_indices=(0, 0) + start, limit_indices=(n, c) + limit,
                        strides=(1, 1) + tuple(stride))
        cols.append(ops.reshape(col, new_sizes=(n, c, 1) + out))
    patches = cols[0] if len(cols) == 1 else ops.concatenate(*cols, dimension=2)
    kernel = ops.reshape(w, new_sizes=(o, c, len(cols)))
    return ops.transpose(ops.dot_general(patches, kernel, contracting=((1, 2), (1, 2)),
                                         batch=((), ())), permutation=(0, nd + 1) + tuple(range(1, nd + 1)))


def conv(x: Tensor, w: Tensor, stride=1, padding=0, dilation=1, groups: int = 1,
         channels_last: bool = False, transposed: bool = False, output_padding=0,
         bias: Tensor | None = None, small_map_patches: bool = False) -> Tensor:
    """N-d convolution. ``padding`` is an int/tuple of symmetric pads, pairs, or
    ``"SAME"``/``"VALID"``. Weights: ``(O, I/groups, *k)`` channels-first, ``(*k, I, O)`` last.
    ``bias``: one value per output channel, added. ``small_map_patches``: a channels-first,
    ungrouped, explicitly padded convolution takes patches + matmul where ``patches_win``
    (module docstring)."""
    y = _conv(x, w, stride, padding, dilation, groups, channels_last, transposed,
              output_padding, small_map_patches)
    if bias is None:
        return y
    return ops.add(y, ops.broadcast_in_dim(bias, shape=y.shape, broadcast_dimensions=(
        y.ndim - 1 if channels_last else 1,)))


def _conv(x, w, stride, padding, dilation, groups, channels_last, transposed, output_padding,
          small_map_patches):
    nd = x.ndim - 2
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    if isinstance(padding, str):
        pad = padding.upper()
    else:
        p = _tuple(padding, nd)
        pad = tuple(tuple(q) if isinstance(q, tuple | list) else (q, q) for q in p)
    if small_map_patches and not (channels_last or transposed or isinstance(pad, str)) \
            and groups == 1:
        out = tuple(_out_size(x.shape[2 + i], w.shape[2 + i], stride[i], pad[i], dilation[i])
                    for i in range(nd))
        if min(out) > 0 and patches_win(x.shape, w.shape, out):
            return _patches_conv(x, w, stride, pad, dilation, out)
    dn = _dimension_numbers(nd, channels_last)
    if not transposed:
        return ops.conv_general_dilated(
            x, w, window_strides=stride, padding=pad, rhs_dilation=dilation,
            dimension_numbers=dn, feature_group_count=groups)
    # transposed conv = dilated-input conv with the flipped, in/out-swapped kernel
    k = w.shape[2:] if not channels_last else w.shape[:nd]
    out_pad = _tuple(output_padding, nd)
    pads = tuple((d * (kk - 1) - lo, d * (kk - 1) - hi + op)
                 for kk, d, (lo, hi), op in zip(k, dilation, pad, out_pad, strict=True))
    spatial = tuple(range(2, 2 + nd)) if not channels_last else tuple(range(nd))
    w = ops.rev(w, dimensions=spatial)
    if not channels_last:  # (I, O/g, *k) -> (O, I/g, *k)
        i, og = w.shape[0], w.shape[1]
        w = ops.reshape(w, new_sizes=(groups, i // groups, og) + k)
        w = ops.transpose(w, permutation=(0, 2, 1) + tuple(range(3, 3 + nd)))
        w = ops.reshape(w, new_sizes=(groups * og, i // groups) + k)
    return ops.conv_general_dilated(
        x, w, window_strides=(1,) * nd, padding=pads, lhs_dilation=stride,
        rhs_dilation=dilation, dimension_numbers=dn, feature_group_count=groups)
