"""Sort / argsort along an axis, top-k along an axis."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensor import Tensor
from .manipulation import moveaxis, reshape
from .reductions import normalize_axes


def sort(x: Tensor, axis=-1, descending: bool = False, stable: bool = True) -> Tensor:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.ndim == 0:
        return x
    (a,) = normalize_axes(axis, x.ndim)
    (out,) = ops.sort(x, dimension=a, is_stable=stable, descending=descending)
    return out


def argsort(x: Tensor, axis=-1, descending: bool = False, stable: bool = True,
            index_dtype=np.int64) -> Tensor:
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.ndim == 0:
        return ops.reshape(ops.iota(dtype=index_dtype, shape=(1,), dimension=0),
                           new_sizes=())
    (a,) = normalize_axes(axis, x.ndim)
    idx = ops.iota(dtype=index_dtype, shape=x.shape, dimension=a)
    _, out = ops.sort(x, idx, dimension=a, is_stable=stable, num_keys=1, descending=descending)
    return out


def sort_with_indices(x: Tensor, axis=-1, descending=False, stable=True, index_dtype=np.int64):
    (a,) = normalize_axes(axis, x.ndim)
    idx = ops.iota(dtype=index_dtype, shape=x.shape, dimension=a)
    return ops.sort(x, idx, dimension=a, is_stable=stable, num_keys=1, descending=descending)


def top_k(x: Tensor, k: int, axis: int = -1, largest: bool = True):
    """(values, int64 indices) of the ``k`` largest (or smallest) along ``axis``."""
    (a,) = normalize_axes(axis, x.ndim)
    moved = moveaxis(x, a, -1) if a != x.ndim - 1 else x
    if largest:
        values, indices = ops.top_k(moved, k=k)
    else:
        values, indices = ops.top_k(ops.neg(moved), k=k)
        values = ops.neg(values)
    indices = ops.convert(indices, dtype=np.int64)
    if a != x.ndim - 1:
        values, indices = moveaxis(values, -1, a), moveaxis(indices, -1, a)
    return values, indices
