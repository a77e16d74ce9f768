"""Negative log-likelihood forward and backward (``F.cross_entropy``'s two halves).

PyTorch's decompositions of these ops dispatch a dozen small ATen calls each (views,
gathers, ``where``s, a scatter into zeros); lowering them directly makes a few core
nodes instead, and the backward becomes a one-hot select that XLA fuses. Inputs the
fast form does not cover (other ranks, bad shapes or dtypes) return ``NotImplemented``
so the decomposition runs and raises PyTorch's own errors.
"""

from __future__ import annotations

from .common import D, num, ops
from .registry import lower

_MEAN, _SUM = 1, 2


def _covered(x, target, weight) -> bool:
    if not D.is_floating(x.dtype) or target.dtype != D.int64 or x.ndim not in (1, 2):
        return False
    if weight is not None and weight.shape != (x.shape[-1],):
        # eager's message and type (the decomposition raises AssertionError instead)
        raise RuntimeError(f"weight tensor should be defined either for all {x.shape[-1]} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if weight is not None and weight.dtype != x.dtype:
        return False
    return (x.ndim == 2 and target.shape == x.shape[:1]) or (x.ndim == 1 and target.ndim == 0)


def _target_weights(x, target, weight, ignore_index):
    """(one-hot of the target over classes, per-sample weight: 0 where ignored)."""
    valid = ops.ne(target, num.full(target.shape, ignore_index, target.dtype))
    classes = x.shape[-1]
    column = ops.reshape(target, new_sizes=target.shape + (1,))
    iota = ops.iota(dtype=target.dtype, shape=(*target.shape, classes), dimension=target.ndim)
    hot = ops.eq(iota, num.broadcast_to(column, iota.shape))
    w = num.cast(valid, x.dtype)
    if weight is not None:
        picked = num.sum(ops.select(hot, num.broadcast_to(weight, hot.shape),
                                    num.full(hot.shape, 0, x.dtype)), axis=target.ndim)
        w = ops.mul(w, picked)
    return hot, w


@lower("nll_loss_forward.default")
def nll_loss_forward(x, target, weight, reduction, ignore_index):
    if not _covered(x, target, weight):
        return NotImplemented
    hot, w = _target_weights(x, target, weight, ignore_index)
    picked = num.sum(ops.select(hot, x, num.full(x.shape, 0, x.dtype)), axis=target.ndim)
    loss = ops.neg(ops.mul(picked, w))
    if reduction not in (_MEAN, _SUM) and x.ndim > 1:
        return loss, num.full((), 0, x.dtype)
    total = num.sum(w)
    if reduction == _SUM:
        return num.sum(loss), total
    if reduction == _MEAN:
        return ops.div(num.sum(loss), total), total
    return loss, total


@lower("nll_loss_backward.default")
def nll_loss_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    if not _covered(x, target, weight) or grad.dtype != x.dtype:
        return NotImplemented
    hot, w = _target_weights(x, target, weight, ignore_index)
    if reduction == _MEAN:
        grad = ops.div(grad, total_weight)
    if grad.ndim == 0:
        grad = num.broadcast_to(grad, w.shape)
    scale = ops.neg(ops.mul(grad, w))
    column = ops.reshape(scale, new_sizes=scale.shape + (1,))
    return ops.select(hot, num.broadcast_to(column, x.shape), num.full(x.shape, 0, x.dtype))

