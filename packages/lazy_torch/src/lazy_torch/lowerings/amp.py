"""``torch.amp.GradScaler``'s two kernels: unscale with a non-finite check, and the
scale update. Traced, so a scaled step stays one program (the scaler itself reads
``found_inf`` once per step, as it does on CUDA)."""

from __future__ import annotations

from .common import num
from .registry import lower


@lower("_amp_foreach_non_finite_check_and_unscale.default")
def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """Every gradient times ``inv_scale``; ``found_inf`` becomes 1 if any value of any
    gradient is inf or NaN (it is never reset here, as in eager)."""
    return num.unscale(grads, inv_scale, found_inf)


@lower("_amp_update_scale.default")
def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                 growth_interval):
    """Eager's ``_amp_update_scale_``: back off on inf/NaN, grow after
    ``growth_interval`` clean steps (only if the grown scale is finite)."""
    return num.update_loss_scale(scale, growth_tracker, found_inf, growth_factor,
                                 backoff_factor, growth_interval)
