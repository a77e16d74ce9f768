"""Negative log-likelihood forward and backward (``F.cross_entropy``'s two halves), and
the squared error: the core's loss composites (``lazycore.numeric.nll_loss``...).

PyTorch's decompositions of these ops dispatch a dozen small ATen calls each (views,
gathers, ``where``s, a scatter into zeros); lowering them directly makes a few core
nodes instead, and the backward becomes a one-hot select that XLA fuses. Inputs the
fast form does not cover (other ranks, bad shapes or dtypes) return ``NotImplemented``
so the decomposition runs and raises PyTorch's own errors.
"""

from __future__ import annotations

import lazycore as lc

from .common import D, num
from .registry import lower

_REDUCTION = ("none", "mean", "sum")  # ATen's reduction enum


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


def _decomposition_accepts(x, target) -> bool:
    """Shapes and dtype under which the decomposition computes a value (a check registered
    for a call that then fails would raise again at the next barrier)."""
    return target.dtype == D.int64 and D.is_floating(x.dtype) and (
        target.ndim == 0 if x.ndim == 1 else
        x.ndim >= 2 and target.shape == x.shape[:1] + x.shape[2:])


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
    bad = num.target_out_of_range(target, classes, ignore_index)
    lc.checks.require(bad, IndexError, f"Target is out of bounds (classes: {classes}).",
                      op=op, guards=results)


@lower("nll_loss_forward.default", "nll_loss2d_forward.default")
def nll_loss_forward(x, target, weight, reduction, ignore_index):
    if not _covered(x, target, weight):
        if _decomposition_accepts(x, target):  # else it raises eager's error at the call
            _check_targets(x, target, ignore_index, "aten.nll_loss_forward")
        return NotImplemented
    per_sample = reduction == 0 and x.ndim > 1
    out = num.nll_loss(x, target, weight, ignore_index, _REDUCTION[reduction],
                       return_total_weight=not per_sample)
    # eager's total weight of a per-sample loss is 0, not the weights' sum
    out = (out, num.full((), 0, x.dtype)) if per_sample else out
    _check_targets(x, target, ignore_index, "aten.nll_loss_forward", out)
    return out


@lower("nll_loss_backward.default")
def nll_loss_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    if not _covered(x, target, weight) or grad.dtype != x.dtype:
        return NotImplemented
    return num.nll_loss_backward(grad, x, target, weight, ignore_index,
                                 _REDUCTION[reduction], total_weight)


@lower("mse_loss.default")
def mse_loss(x, target, reduction=1):
    if x.shape != target.shape or x.dtype != target.dtype or not D.is_floating(x.dtype):
        return NotImplemented  # broadcasting (eager warns) and mixed dtypes: decomposition
    return num.mse_loss(x, target, _REDUCTION[reduction])
