"""Convolution and pooling with channels-first (PyTorch) or channels-last (TF) layouts."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensor import Tensor
from .broadcasting import full

_SPATIAL = "DHW"


def _dimension_numbers(nd: int, channels_last: bool):
    sp = _SPATIAL[-nd:]
    if channels_last:
        return ("N" + sp + "C", sp + "IO", "N" + sp + "C")
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def _tuple(v, n):
    return tuple(v) if isinstance(v, tuple | list) else (v,) * n


def conv(x: Tensor, w: Tensor, stride=1, padding=0, dilation=1, groups: int = 1,
         channels_last: bool = False, transposed: bool = False, output_padding=0) -> Tensor:
    """N-d convolution. ``padding`` is an int/tuple of symmetric pads, pairs, or
    ``"SAME"``/``"VALID"``. Weights: ``(O, I/groups, *k)`` channels-first, ``(*k, I, O)`` last."""
    nd = x.ndim - 2
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    if isinstance(padding, str):
        pad = padding.upper()
    else:
        p = _tuple(padding, nd)
        pad = tuple(q if isinstance(q, tuple | list) else (q, q) for q in p)
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


def _window(x: Tensor, kernel, stride, padding, dilation, channels_last):
    nd = x.ndim - 2
    kernel = _tuple(kernel, nd)
    stride = _tuple(stride if stride is not None else kernel, nd)
    dilation = _tuple(dilation, nd)
    if isinstance(padding, str):
        import jax.lax as lax  # padding arithmetic only

        spatial = x.shape[1:-1] if channels_last else x.shape[2:]
        pads = tuple(lax.padtype_to_pads(spatial, kernel, stride, padding.upper()))
    else:
        p = _tuple(padding, nd)
        pads = tuple(q if isinstance(q, tuple | list) else (q, q) for q in p)
    if channels_last:
        return ((1,) + kernel + (1,), (1,) + stride + (1,), ((0, 0),) + pads + ((0, 0),),
                (1,) + dilation + (1,))
    return ((1, 1) + kernel, (1, 1) + stride, ((0, 0), (0, 0)) + pads, (1, 1) + dilation)


def max_pool(x: Tensor, kernel, stride=None, padding=0, dilation=1,
             channels_last: bool = False, ceil_mode: bool = False) -> Tensor:
    win, strides, pads, dil = _window(x, kernel, stride, padding, dilation, channels_last)
    if ceil_mode:
        pads = _ceil_pads(x.shape, win, strides, pads, dil)
    return ops.reduce_window_max(x, window_dimensions=win, window_strides=strides,
                                 padding=pads, window_dilation=dil)


def avg_pool(x: Tensor, kernel, stride=None, padding=0, channels_last: bool = False,
             count_include_pad: bool = True, ceil_mode: bool = False,
             divisor_override=None) -> Tensor:
    win, strides, pads, dil = _window(x, kernel, stride, padding, 1, channels_last)
    base_pads = pads
    if ceil_mode:
        pads = _ceil_pads(x.shape, win, strides, pads, dil)
    total = ops.reduce_window_sum(x, window_dimensions=win, window_strides=strides,
                                  padding=pads, window_dilation=dil)
    if divisor_override:
        return ops.div(total, full(total.shape, divisor_override, total.dtype))
    if count_include_pad and not ceil_mode:
        return ops.div(total, full(total.shape, int(np.prod(win)), total.dtype))
    # divide by the number of real (or, with count_include_pad, padded-but-in-range) cells
    ones = full(x.shape, 1, x.dtype)
    if count_include_pad:
        ones = ops.pad(ones, full((), 1, x.dtype),
                       padding_config=tuple((lo, hi, 0) for lo, hi in base_pads))
        extra = tuple((0, p1 - b1) for (_, p1), (_, b1) in zip(pads, base_pads, strict=True))
        counts = ops.reduce_window_sum(ones, window_dimensions=win, window_strides=strides,
                                       padding=extra, window_dilation=dil)
    else:
        counts = ops.reduce_window_sum(ones, window_dimensions=win, window_strides=strides,
                                       padding=pads, window_dilation=dil)
    return ops.div(total, counts)


def _ceil_pads(shape, win, strides, pads, dil):
    out = []
    for size, k, s, (lo, hi), d in zip(shape, win, strides, pads, dil, strict=True):
        eff = (k - 1) * d + 1
        span = size + lo + hi - eff
        n_floor = span // s + 1
        n_ceil = -(-span // s) + 1
        if (n_ceil - 1) * s >= size + lo:  # last window must start inside the input
            n_ceil -= 1
        extra = max(0, (n_ceil - n_floor) * s)
        out.append((lo, hi + extra))
    return tuple(out)
