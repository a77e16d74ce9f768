"""Negative log-likelihood forward and backward (``F.cross_entropy``'s two halves).

PyTorch's decompositions of these ops dispatch a dozen small ATen calls each (views,
gathers, ``where``s, a scatter into zeros); lowering them directly makes a few core
nodes instead, and the backward becomes a one-hot select that XLA fuses. Inputs the
fast form does not cover (other ranks, bad shapes or dtypes) return ``NotImplemented``
so the decomposition runs and raises PyTorch's own errors.
"""

from __future__ import annotations

import lazycore as lc

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


def _one_hot(x, target):
    """Boolean one-hot of ``target`` over ``x``'s class axis."""
    shape = (*target.shape, x.shape[-1])
    iota = ops.iota(dtype=target.dtype, shape=shape, dimension=target.ndim)
    column = ops.broadcast_in_dim(target, shape=shape,
                                  broadcast_dimensions=tuple(range(target.ndim)))
    return ops.eq(iota, column)


def _hot_drops_ignored(x, weight, ignore_index) -> bool:
    """No class weights and an ``ignore_index`` outside [0, classes) (the default -100):
    ignored rows have an all-false one-hot, so per-sample weights would only multiply by 1."""
    return weight is None and not 0 <= ignore_index < x.shape[-1]


def _sample_weights(x, target, weight, ignore_index, hot):
    """Per-sample weight: the target's class weight, 0 where ignored."""
    valid = ops.ne(target, num.full(target.shape, ignore_index, target.dtype))
    w = num.cast(valid, x.dtype)
    if weight is not None:
        picked = num.sum(ops.select(hot, num.broadcast_to(weight, hot.shape),
                                    num.full(hot.shape, 0, x.dtype)), axis=target.ndim)
        w = ops.mul(w, picked)
    return w


def _decomposition_accepts(x, target) -> bool:
    """Shapes and dtype under which the decomposition computes a value (a check registered
    for a call that then fails would raise again at the next barrier)."""
    if target.dtype != D.int64 or not D.is_floating(x.dtype):
        return False
    if x.ndim == 1:
        return target.ndim == 0
    return x.ndim >= 2 and target.shape == x.shape[:1] + x.shape[2:]


def _check_targets(x, target, ignore_index, op, results=()):
    """Eager raises ``IndexError: Target N is out of bounds.`` for a target outside
    [0, classes) that is not ``ignore_index``: checked in the next compiled program."""
    if not D.is_integer(target.dtype) or target.size == 0 or x.ndim == 0:
        return
    classes = x.shape[1] if x.ndim > 1 else x.shape[0]
    known = lc.checks.known_range(target)
    if known is not None:  # labels uploaded from the host
        if 0 <= known[0] and known[1] < classes:
            return  # all in range: nothing to check
        if not known[0] <= ignore_index <= known[1]:  # none ignored: eager's error now
            raise IndexError(f"Target {known[1] if known[1] >= classes else known[0]} is out "
                             "of bounds.")
    low = num.full(target.shape, 0, target.dtype)
    high = num.full(target.shape, classes, target.dtype)
    outside = ops.bitwise_or(ops.lt(target, low), ops.ge(target, high))
    counted = ops.ne(target, num.full(target.shape, ignore_index, target.dtype))
    bad = num.any(ops.bitwise_and(outside, counted))
    lc.checks.require(bad, IndexError, f"Target is out of bounds (classes: {classes}).",
                      op=op, guards=results)


@lower("nll_loss_forward.default", "nll_loss2d_forward.default")
def nll_loss_forward(x, target, weight, reduction, ignore_index):
    if not _covered(x, target, weight):
        if _decomposition_accepts(x, target):  # else it raises eager's error at the call
            _check_targets(x, target, ignore_index, "aten.nll_loss_forward")
        return NotImplemented
    out = _nll_loss_forward(x, target, weight, reduction, ignore_index)
    _check_targets(x, target, ignore_index, "aten.nll_loss_forward", out)
    return out


def _nll_loss_forward(x, target, weight, reduction, ignore_index):
    hot = _one_hot(x, target)
    chosen = ops.select(hot, x, num.full(x.shape, 0, x.dtype))
    unweighted = _hot_drops_ignored(x, weight, ignore_index)
    per_sample = reduction not in (_MEAN, _SUM) and x.ndim > 1
    w = None if unweighted and per_sample else _sample_weights(x, target, weight,
                                                                ignore_index, hot)
    if unweighted and not per_sample:
        loss = ops.neg(num.sum(chosen))  # one reduction: ignored rows are all zeros
    else:
        picked = num.sum(chosen, axis=target.ndim)
        loss = ops.neg(picked if unweighted else ops.mul(picked, w))
        if reduction in (_MEAN, _SUM):
            loss = num.sum(loss)
    if per_sample:
        return loss, num.full((), 0, x.dtype)
    total = num.sum(w)
    if reduction == _MEAN:
        return ops.div(loss, total), total
    return loss, total


@lower("nll_loss_backward.default")
def nll_loss_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    if not _covered(x, target, weight) or grad.dtype != x.dtype:
        return NotImplemented
    hot = _one_hot(x, target)
    if reduction == _MEAN:
        grad = ops.div(grad, total_weight)
    if not _hot_drops_ignored(x, weight, ignore_index):
        w = _sample_weights(x, target, weight, ignore_index, hot)
        grad = ops.mul(num.broadcast_to(grad, w.shape) if grad.ndim == 0 else grad, w)
    scale = ops.broadcast_in_dim(ops.neg(grad), shape=x.shape,
                                 broadcast_dimensions=tuple(range(grad.ndim)))
    return ops.select(hot, scale, num.full(x.shape, 0, x.dtype))
