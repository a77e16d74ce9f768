"""``torch.amp.GradScaler``'s two kernels: unscale with a non-finite check, and the
scale update. Traced, so a scaled step stays one program (the scaler itself reads
``found_inf`` once per step, as it does on CUDA)."""

from __future__ import annotations

from .common import D, num, ops
from .registry import lower


@lower("_amp_foreach_non_finite_check_and_unscale.default")
def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """Every gradient times ``inv_scale``; ``found_inf`` becomes 1 if any value of any
    gradient is inf or NaN (it is never reset here, as in eager)."""
    inv = ops.reshape(inv_scale, new_sizes=())
    out, flags = [], []
    for g in grads:
        # eager's kernel multiplies in float32 (opmath) for half types, then rounds back
        wide = D.float32 if g.dtype in (D.float16, D.bfloat16) else g.dtype
        scaled = ops.mul(num.cast(g, wide), num.broadcast_to(num.cast(inv, wide), g.shape))
        out.append(num.cast(scaled, g.dtype))
        flags.append(num.any(ops.bitwise_not(ops.is_finite(g))))
    if not flags:
        return out, found_inf
    bad = flags[0]
    for f in flags[1:]:
        bad = ops.bitwise_or(bad, f)
    bad = num.broadcast_to(bad, found_inf.shape)
    one = num.full(found_inf.shape, 1, found_inf.dtype)
    return out, ops.select(bad, one, found_inf)


@lower("_amp_update_scale.default")
def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                 growth_interval):
    """Eager's ``_amp_update_scale_``: back off on inf/NaN, grow after
    ``growth_interval`` clean steps (only if the grown scale is finite)."""
    found = ops.gt(found_inf, num.full(found_inf.shape, 0, found_inf.dtype))
    zero_t = num.full(growth_tracker.shape, 0, growth_tracker.dtype)
    successful = ops.add(growth_tracker, num.full(growth_tracker.shape, 1, growth_tracker.dtype))
    grow = ops.eq(successful, num.full(successful.shape, growth_interval, successful.dtype))
    grown = ops.mul(scale, num.full(scale.shape, growth_factor, scale.dtype))
    grow_scale = ops.select(ops.bitwise_and(grow, ops.is_finite(grown)), grown, scale)
    backed = ops.mul(scale, num.full(scale.shape, backoff_factor, scale.dtype))
    new_scale = ops.select(found, backed, ops.select(grow, grow_scale, scale))
    new_tracker = ops.select(found, zero_t, ops.select(grow, zero_t, successful))
    return new_scale, num.cast(new_tracker, D.int32) if growth_tracker.dtype == D.int32 \
        else new_tracker
