"""Convolution with channels-first (PyTorch) or channels-last (TF) layouts (pooling:
``pooling.py``)."""

from __future__ import annotations

from .. import ops
from ..tensor import Tensor

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
