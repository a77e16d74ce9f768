"""Losses shared by frontends: negative log-likelihood (forward and backward),
cross-entropy, squared error, sigmoid cross-entropy.

Frameworks differ only by flags: the class axis, ``ignore_index``, class weights,
label smoothing, the reduction, and what a label outside ``[0, classes)`` gives
(``out_of_range_nan``: NaN, as TF's kernels; otherwise the frontend checks it with
``target_out_of_range`` and raises its own error). Picks are one-hot selects, not
gathers: XLA fuses them with the reduction, and the backward is one select.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full, full_like
from .indexing import one_hot
from .nn import log_softmax, softplus, softplus_parts
from .reductions import any, mean, sum  # noqa: A004 - the composites of those names

REDUCTIONS = ("none", "mean", "sum")


def _class_axis(x: Tensor, class_axis: int) -> int:
    return class_axis % x.ndim if x.ndim > 1 else 0


def _along(t: Tensor, shape: tuple, c: int) -> Tensor:
    """``t`` (``shape`` without axis ``c``, or rank 0) repeated along axis ``c``."""
    return ops.broadcast_in_dim(t, shape=shape, broadcast_dimensions=tuple(
        d if d < c else d + 1 for d in range(t.ndim)))


def _per_class(weight: Tensor, shape: tuple, c: int) -> Tensor:
    """A per-class vector laid along axis ``c`` of ``shape``."""
    return ops.broadcast_in_dim(weight, shape=shape, broadcast_dimensions=(c,))


def _check(x: Tensor, target: Tensor, c: int, reduction: str, op: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    expected = tuple(s for i, s in enumerate(x.shape) if i != c)
    if target.shape != expected:
        raise ShapeError(f"expected target of shape {expected} for input {x.shape}, "
                         f"got {target.shape}", op=op)


def _plain(x: Tensor, c: int, weight, ignore_index) -> bool:
    """No class weights and no ignorable class: an ignored row's one-hot is all false, so
    per-sample weights would only multiply by 1."""
    return weight is None and (ignore_index is None or not 0 <= ignore_index < x.shape[c])


def _outside(target: Tensor, classes: int, ignore_index=None) -> Tensor:
    low, high = full(target.shape, 0, target.dtype), full(target.shape, classes, target.dtype)
    bad = ops.bitwise_or(ops.lt(target, low), ops.ge(target, high))
    if ignore_index is not None:
        bad = ops.bitwise_and(bad, ops.ne(target, full(target.shape, ignore_index, target.dtype)))
    return bad


def target_out_of_range(target: Tensor, classes: int, ignore_index=None) -> Tensor:
    """Whether any label is outside ``[0, classes)`` and not ``ignore_index`` (lazy bool):
    what a frontend registers as a data check before raising its own error."""
    return any(_outside(target, classes, ignore_index))


def _sample_weights(x, target, hot, weight, ignore_index, c) -> Tensor | None:
    """Per-sample weight: the target's class weight, 0 where ignored; None if all 1."""
    w = None
    if ignore_index is not None:
        w = cast(ops.ne(target, full(target.shape, ignore_index, target.dtype)), x.dtype)
    if weight is not None:
        picked = sum(ops.select(hot, _per_class(weight, x.shape, c), full_like(x, 0)), c)
        w = picked if w is None else ops.mul(w, picked)
    return w


def nll_loss(logp: Tensor, target: Tensor, weight=None, ignore_index=None,
             reduction: str = "mean", class_axis: int = 1,
             return_total_weight: bool = False):
    """``-logp[target]`` weighted by ``weight[target]``, 0 where ``target ==
    ignore_index``; ``"mean"`` divides by the total weight. With
    ``return_total_weight``: ``(loss, total weight)``."""
    c = _class_axis(logp, class_axis)
    _check(logp, target, c, reduction, "nll_loss")
    hot = one_hot(target, logp.shape[c], c)
    chosen = ops.select(hot, logp, full_like(logp, 0))
    plain = _plain(logp, c, weight, ignore_index)
    need_total = reduction == "mean" or return_total_weight
    w = None
    if not plain or need_total:
        w = _sample_weights(logp, target, hot, weight, ignore_index, c)
        w = full(target.shape, 1, logp.dtype) if w is None else w
    if plain and reduction != "none":
        loss = ops.neg(sum(chosen))  # one reduction: ignored rows are all zeros
    else:
        picked = sum(chosen, c)
        loss = ops.neg(picked if plain else ops.mul(picked, w))
        if reduction != "none":
            loss = sum(loss)
        elif ignore_index is not None:  # +0.0 where ignored (-(0 * w) would be -0.0)
            keep = ops.ne(target, full(target.shape, ignore_index, target.dtype))
            loss = ops.select(keep, loss, full_like(loss, 0))
    total = sum(w) if need_total else None
    if reduction == "mean":
        loss = ops.div(loss, total)
    return (loss, total) if return_total_weight else loss


def nll_loss_backward(grad: Tensor, logp: Tensor, target: Tensor, weight=None,
                      ignore_index=None, reduction: str = "mean", total_weight=None,
                      class_axis: int = 1) -> Tensor:
    """The gradient of ``nll_loss`` with respect to ``logp``: ``-grad * weight`` at each
    target's class (one select), zero elsewhere."""
    c = _class_axis(logp, class_axis)
    _check(logp, target, c, reduction, "nll_loss_backward")
    hot = one_hot(target, logp.shape[c], c)
    if reduction == "mean":
        grad = ops.div(grad, total_weight)
    if not _plain(logp, c, weight, ignore_index):
        w = _sample_weights(logp, target, hot, weight, ignore_index, c)
        grad = ops.mul(broadcast_to(grad, w.shape) if grad.ndim == 0 else grad, w)
    return ops.select(hot, _along(ops.neg(grad), logp.shape, c), full_like(logp, 0))


def _reduce(loss: Tensor, reduction: str, total: Tensor | None = None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum(loss)
    return mean(loss) if total is None else ops.div(sum(loss), total)


def cross_entropy(logits: Tensor, target: Tensor, weight=None, ignore_index=None,
                  reduction: str = "mean", label_smoothing: float = 0.0,
                  class_axis: int = 1, out_of_range_nan: bool = False) -> Tensor:
    """Softmax cross-entropy with integer class targets or class probabilities
    (``target`` of ``logits``' shape and a floating dtype).

    Integer targets: ``log(sum(exp(s))) - s[target]`` with ``s`` the logits shifted by
    their max (a constant for the gradient), as TF's fused kernel -- fewer nodes than
    ``log_softmax`` followed by a pick. Label smoothing mixes in ``-mean(logp)`` over
    the classes (class-weighted), as PyTorch's ``cross_entropy``."""
    c = _class_axis(logits, class_axis)
    n = logits.shape[c]
    if target.shape == logits.shape and np.issubdtype(target.dtype, np.inexact):
        return _soft_cross_entropy(logits, target, weight, reduction, label_smoothing, c)
    _check(logits, target, c, reduction, "cross_entropy")
    shape = logits.shape
    top = ops.stop_gradient(ops.reduce_max(logits, axes=(c,)))
    shifted = ops.sub(logits, _along(top, shape, c))
    lse = ops.log(ops.reduce_sum(ops.exp(shifted), axes=(c,)))
    hot = one_hot(target, n, c)
    picked = ops.reduce_sum(ops.select(hot, shifted, full_like(shifted, 0)), axes=(c,))
    loss = ops.sub(lse, picked)
    w = _sample_weights(logits, target, hot, weight, ignore_index, c)
    if w is not None:
        loss = ops.mul(loss, w)
    if label_smoothing:
        logp = ops.sub(shifted, _along(lse, shape, c))
        if weight is not None:
            logp = ops.mul(logp, _per_class(weight, shape, c))
        smooth = ops.neg(ops.reduce_sum(logp, axes=(c,)))
        if ignore_index is not None:
            keep = ops.ne(target, full(target.shape, ignore_index, target.dtype))
            smooth = ops.select(keep, smooth, full_like(smooth, 0))
        eps = float(label_smoothing)
        loss = ops.add(ops.mul(loss, full(loss.shape, 1 - eps, loss.dtype)),
                       ops.mul(smooth, full(smooth.shape, eps / n, smooth.dtype)))
    if out_of_range_nan:
        bad = _outside(target, n, ignore_index)
        loss = ops.select(bad, full(loss.shape, np.nan, loss.dtype), loss)
    return _reduce(loss, reduction, None if w is None else sum(w))


def _soft_cross_entropy(logits, probs, weight, reduction, label_smoothing, c) -> Tensor:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    logp = log_softmax(logits, c)
    if label_smoothing:
        n = logits.shape[c]
        probs = ops.add(ops.mul(probs, full(probs.shape, 1 - label_smoothing, probs.dtype)),
                        full(probs.shape, label_smoothing / n, probs.dtype))
    terms = ops.mul(logp, probs)
    if weight is not None:
        terms = ops.mul(terms, _per_class(weight, terms.shape, c))
    return _reduce(ops.neg(sum(terms, c)), reduction)


def squared_difference(x: Tensor, y: Tensor) -> Tensor:
    """``|x - y|**2`` (complex: ``d * conj(d)``, a complex value with zero imaginary part)."""
    d = ops.sub(x, y)
    return ops.mul(d, ops.conj(d) if np.issubdtype(d.dtype, np.complexfloating) else d)


def mse_loss(x: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(squared_difference(x, y), reduction)


def sigmoid_cross_entropy(logits: Tensor, labels: Tensor, pos_weight=None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(logits)`` against ``labels``, stable for large
    ``|logits|``: ``max(x, 0) - x*z + log1p(exp(-|x|))``; with ``pos_weight`` ``q``:
    ``(1 - z)*x + (1 + (q - 1)*z) * softplus(-x)``."""
    x, z = logits, labels
    if pos_weight is None:
        tail, relu_x = softplus_parts(x)
        return ops.add(ops.sub(relu_x, ops.mul(x, z)), tail)
    one = full(x.shape, 1, x.dtype)
    return ops.add(ops.mul(ops.sub(one, z), x), ops.mul(  # log weight 1 + (pos_weight - 1) z
        ops.add(one, ops.mul(ops.sub(pos_weight, one), z)), softplus(ops.neg(x))))
