"""Data-dependent shapes: sync the size they need, then trace with it."""

from __future__ import annotations

import numpy as np

from .. import metrics, ops, runtime
from ..tensor import Tensor
from .broadcasting import cast, full


def count_true(mask: Tensor) -> int:
    """Number of ``True`` values; a counted data-dependent sync."""
    # the primitive, not reductions.sum: indexing (above reductions) calls this module
    total = ops.reduce_sum(cast(cast(mask, np.bool_), np.int64), axes=tuple(range(mask.ndim)))
    metrics.inc("data_dependent_syncs")
    return int(runtime.to_numpy_many([total], cause="data_dependent")[0])


def nonzero_mask(mask: Tensor) -> tuple[Tensor, ...]:
    """Index arrays (one per dim) of the ``True`` entries, row-major order."""
    mask = cast(mask, np.bool_)
    if mask.ndim == 0:
        n = count_true(mask)
        return (ops.reshape(ops.iota(dtype=np.int64, shape=(1,), dimension=0) if n else
                            ops.slice(ops.iota(dtype=np.int64, shape=(1,), dimension=0),
                                      start_indices=(0,), limit_indices=(0,)),
                            new_sizes=(n,)),)
    n = count_true(mask)
    return ops.nonzero(mask, size=n)


def argwhere(x: Tensor) -> Tensor:
    """``(count, ndim)`` int64 coordinates of the non-zero entries, row-major (NumPy's
    ``argwhere``, PyTorch's ``nonzero``); syncs the count."""
    cols = nonzero_mask(x) if x.ndim else nonzero_mask(ops.reshape(x, new_sizes=(1,)))
    n = cols[0].shape[0]
    if x.ndim == 0:
        return full((n, 0), 0, np.int64)
    return ops.concatenate(*[ops.reshape(c, new_sizes=(n, 1)) for c in cols], dimension=1)


def unique(x: Tensor) -> Tensor:
    """Sorted unique values of the flattened input (syncs the count)."""
    flat = ops.reshape(x, new_sizes=(x.size,))
    if x.size <= 1:
        return flat
    (s,) = ops.sort(flat, dimension=0)
    return ops.unique(flat, size=1 + count_true(ops.ne(  # neighbours that differ
        ops.slice(s, start_indices=(1,), limit_indices=(x.size,)),
        ops.slice(s, start_indices=(0,), limit_indices=(x.size - 1,)))))
