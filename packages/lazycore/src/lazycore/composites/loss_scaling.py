"""Dynamic loss scaling for mixed precision (PyTorch's ``GradScaler`` kernels; Keras'
``LossScaleOptimizer`` follows the same rule): unscale the gradients while flagging a
non-finite value, then back the scale off or grow it. Traced, so a scaled step stays
one program."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full
from .reductions import any as any_

_HALVES = (np.dtype(np.float16),)


def unscale(grads, inv_scale: Tensor, found_inf: Tensor, wide_halves: bool = True):
    """``(grads * inv_scale, found_inf')``: ``found_inf'`` is 1 where any value of any
    gradient is inf or NaN, else ``found_inf`` (never reset here). ``wide_halves``:
    half-precision gradients are scaled in float32 and rounded back (PyTorch's opmath)."""
    inv = ops.reshape(inv_scale, new_sizes=())
    out, bad = [], None
    for g in grads:
        wide = np.float32 if wide_halves and (g.dtype in _HALVES or g.dtype.name == "bfloat16") \
            else g.dtype
        scaled = ops.mul(cast(g, wide), broadcast_to(cast(inv, wide), g.shape))
        out.append(cast(scaled, g.dtype))
        flag = any_(ops.bitwise_not(ops.is_finite(g)))
        bad = flag if bad is None else ops.bitwise_or(bad, flag)
    if bad is None:
        return out, found_inf
    return out, ops.select(broadcast_to(bad, found_inf.shape),
                           full(found_inf.shape, 1, found_inf.dtype), found_inf)


def update_loss_scale(scale: Tensor, growth_tracker: Tensor, found_inf: Tensor,
                      growth_factor: float, backoff_factor: float, growth_interval: int):
    """``(scale', tracker')``: back off (``scale * backoff_factor``, tracker 0) after a
    non-finite step; after ``growth_interval`` clean steps grow (``scale *
    growth_factor``, only if that is finite) and reset the tracker; else count the step."""
    def like(t, v):
        return full(t.shape, v, t.dtype)

    found = ops.gt(found_inf, like(found_inf, 0))
    zero_t = like(growth_tracker, 0)
    successful = ops.add(growth_tracker, like(growth_tracker, 1))
    grow = ops.eq(successful, like(successful, growth_interval))
    grown = ops.mul(scale, like(scale, growth_factor))
    grow_scale = ops.select(ops.bitwise_and(grow, ops.is_finite(grown)), grown, scale)
    backed = ops.mul(scale, like(scale, backoff_factor))
    new_scale = ops.select(found, backed, ops.select(grow, grow_scale, scale))
    return new_scale, cast(ops.select(found, zero_t, ops.select(grow, zero_t, successful)),
                           growth_tracker.dtype)
