"""Pooling with channels-first (PyTorch) or channels-last (TF) layouts: max (optionally
with the flat index of each maximum, and its backward), average (``count_include_pad``,
``ceil_mode``, ``divisor_override``), and the output-size arithmetic."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from ..trace import constant, scalar
from .broadcasting import full
from .conv import _tuple
from .indexing import take


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1,
                ceil_mode: bool = False) -> int:
    """Windows along one axis; with ``ceil_mode`` a last partial window counts if it
    starts inside the input or its left padding."""
    eff = dilation * (kernel - 1) + 1
    if not ceil_mode:
        return (size + 2 * padding - eff) // stride + 1
    out = -(-(size + 2 * padding - eff) // stride) + 1
    return out - 1 if (out - 1) * stride >= size + padding else out


def _window(x: Tensor, kernel, stride, padding, dilation, channels_last):
    nd = x.ndim - 2
    kernel, stride, dilation = (_tuple(v, nd) for v in (
        kernel, kernel if stride is None else stride, dilation))
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
             channels_last: bool = False, ceil_mode: bool = False,
             return_indices: bool = False):
    """Max over windows. ``return_indices``: ``(values, indices)``, each index the flat
    position of its maximum in the unpadded spatial plane of its (batch, channel) --
    channels first, symmetric integer padding (PyTorch's ``max_pool*_with_indices``)."""
    if return_indices:
        return _max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
    win, strides, pads, dil = _window(x, kernel, stride, padding, dilation, channels_last)
    pads = _ceil_pads(x.shape, win, strides, pads, dil) if ceil_mode else pads
    return ops.reduce_window_max(x, window_dimensions=win, window_strides=strides,
                                 padding=pads, window_dilation=dil)


def avg_pool(x: Tensor, kernel, stride=None, padding=0, channels_last: bool = False,
             count_include_pad: bool = True, ceil_mode: bool = False,
             divisor_override=None) -> Tensor:
    win, strides, base_pads, dil = _window(x, kernel, stride, padding, 1, channels_last)
    pads = _ceil_pads(x.shape, win, strides, base_pads, dil) if ceil_mode else base_pads
    total = ops.reduce_window_sum(x, window_dimensions=win, window_strides=strides,
                                  padding=pads, window_dilation=dil)
    if divisor_override:
        return ops.div(total, full(total.shape, divisor_override, total.dtype))
    if count_include_pad and not ceil_mode:
        return ops.div(total, full(total.shape, int(np.prod(win)), total.dtype))
    # divide by the number of real (or, with count_include_pad, padded-but-in-range) cells
    ones, count_pads = full(x.shape, 1, x.dtype), pads
    if count_include_pad:
        ones = ops.pad(ones, full((), 1, x.dtype),
                       padding_config=tuple((lo, hi, 0) for lo, hi in base_pads))
        count_pads = tuple((0, p1 - b1) for (_, p1), (_, b1) in zip(pads, base_pads, strict=True))
    return ops.div(total, ops.reduce_window_sum(ones, window_dimensions=win, window_strides=strides,
                                                padding=count_pads, window_dilation=dil))


def _ceil_pads(shape, win, strides, pads, dil):
    """``pads`` with each high side grown so the windows of ``ceil_mode`` fit."""
    out = []
    for size, k, s, (lo, hi), d in zip(shape, win, strides, pads, dil, strict=True):
        span = size + lo + hi - (k - 1) * d - 1
        n_ceil = -(-span // s) + 1
        if (n_ceil - 1) * s >= size + lo:  # last window must start inside the input
            n_ceil -= 1
        out.append((lo, hi + max(0, (n_ceil - span // s - 1) * s)))
    return tuple(out)


def _max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """Every window offset is one strided slice of the padded input; a max over the
    stacked slices gives the values, an argmax over them the offset of each maximum."""
    nd = x.ndim - 2
    k, d, s, p = (_tuple(v, nd) for v in (
        kernel, dilation, kernel if stride is None else stride, padding))
    spatial = x.shape[2:]
    outs = [pool_output_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d, strict=True)]
    if any(o <= 0 for o in outs):
        raise ShapeError(f"pooling output size {outs} of input {x.shape} is too small",
                         op="max_pool")
    inexact = np.issubdtype(x.dtype, np.inexact)
    config = ((0, 0, 0), (0, 0, 0)) + tuple(
        (pp, max(0, (o - 1) * ss + dd * (kk - 1) + 1 - n - pp), 0)
        for n, kk, ss, pp, dd, o in zip(spatial, k, s, p, d, outs, strict=True))
    padded = ops.pad(x, scalar(-np.inf if inexact else np.iinfo(x.dtype).min, x.dtype),
                     padding_config=config)
    offsets = [[int(i) * dd for i, dd in zip(np.unravel_index(flat, k), d, strict=True)]
               for flat in range(math.prod(k))]
    windows = []
    for offset in offsets:
        window = ops.slice(padded, start_indices=(0, 0, *offset), limit_indices=(
            *x.shape[:2], *[st + (o - 1) * ss + 1 for st, o, ss in zip(offset, outs, s, strict=True)]),
            strides=(1, 1, *s))
        windows.append(ops.reshape(window, new_sizes=(1,) + window.shape))
    stacked = ops.concatenate(*windows, dimension=0)
    values = ops.reduce_max(stacked, axes=(0,))
    if inexact:  # a window holding NaN is NaN
        values = ops.select(ops.reduce_or(ops.ne(stacked, stacked), axes=(0,)),
                            full(values.shape, np.nan, values.dtype), values)
    which = ops.argmax(stacked, axis=0, index_dtype=np.int64)
    flat_index = None
    for axis in range(nd):
        start = ops.mul(ops.iota(dtype=np.int64, shape=values.shape, dimension=2 + axis),
                        full(values.shape, s[axis], np.int64))
        coord = ops.add(ops.sub(start, full(start.shape, p[axis], np.int64)), take(
            constant(np.asarray([o[axis] for o in offsets], dtype=np.int64)), which, 0))
        flat_index = coord if flat_index is None else ops.add(
            ops.mul(flat_index, full(coord.shape, spatial[axis], np.int64)), coord)
    return values, flat_index


def max_pool_backward(grad: Tensor, indices: Tensor, input_shape: tuple, nd: int) -> Tensor:
    """The input gradient of ``max_pool(..., return_indices=True)``: each output's
    gradient added at its index in its row (the axes before the ``nd`` spatial ones)."""
    rows = math.prod(input_shape[:len(input_shape) - nd])
    plane = math.prod(input_shape[len(input_shape) - nd:])
    idx = ops.reshape(indices, new_sizes=(rows, indices.size // max(rows, 1)))
    target = ops.add(ops.mul(ops.iota(dtype=np.int64, shape=idx.shape, dimension=0),
                             full(idx.shape, plane, np.int64)), idx)
    out = ops.scatter_add(full((rows * plane,), 0, grad.dtype),
                          ops.reshape(target, new_sizes=(target.size, 1)),
                          ops.reshape(grad, new_sizes=(grad.size,)), update_window_dims=(),
                          inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                          mode="fill")
    return ops.reshape(out, new_sizes=tuple(input_shape))
