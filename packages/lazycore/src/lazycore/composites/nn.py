"""Neural-network composites shared by frontends: activations, softmax, norms, losses."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full
from .indexing import take_along_axis
from .reductions import mean, normalize_axes, reduce, shift_max, sum, var


def _like(x: Tensor, value) -> Tensor:
    return full(x.shape, value, x.dtype)


def relu(x: Tensor) -> Tensor:
    return ops.max(x, _like(x, 0))


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        inner = ops.mul(_like(x, np.sqrt(2 / np.pi)),
                        ops.add(x, ops.mul(_like(x, 0.044715), ops.mul(x, ops.mul(x, x)))))
        return ops.mul(ops.mul(_like(x, 0.5), x), ops.add(_like(x, 1), ops.tanh(inner)))
    cdf = ops.mul(_like(x, 0.5), ops.add(_like(x, 1), ops.erf(ops.mul(x, _like(x, 1 / np.sqrt(2))))))
    return ops.mul(x, cdf)


def silu(x: Tensor) -> Tensor:
    return ops.mul(x, ops.logistic(x))


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    axes = normalize_axes(axis, x.ndim)
    e = ops.exp(ops.sub(x, broadcast_to(shift_max(x, axes), x.shape)))
    return ops.div(e, broadcast_to(reduce("reduce_sum", e, axes, keepdims=True), x.shape))


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """(x - max) - log(sum(exp(x - max))), as PyTorch, JAX and TF compute it (a row
    holding +inf or only -inf is NaN there too)."""
    axes = normalize_axes(axis, x.ndim)
    shifted = ops.sub(x, broadcast_to(shift_max(x, axes), x.shape))
    total = reduce("reduce_sum", ops.exp(shifted), axes, keepdims=True)
    return ops.sub(shifted, broadcast_to(ops.log(total), x.shape))


def layer_norm(x: Tensor, normalized_ndim: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalize over the last ``normalized_ndim`` axes (PyTorch/Keras LayerNorm)."""
    axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
    m = mean(x, axes, keepdims=True)
    v = var(x, axes, keepdims=True)
    y = ops.mul(ops.sub(x, broadcast_to(m, x.shape)),
                broadcast_to(ops.rsqrt(ops.add(v, _like(v, eps))), x.shape))
    if weight is not None:
        y = ops.mul(y, broadcast_to(weight, x.shape))
    if bias is not None:
        y = ops.add(y, broadcast_to(bias, x.shape))
    return y


def batch_norm_stats(x: Tensor, channel_axis: int = 1):
    """Per-channel (mean, biased var) over every other axis."""
    axes = tuple(i for i in range(x.ndim) if i != channel_axis % x.ndim)
    return mean(x, axes), var(x, axes)


def batch_norm(x: Tensor, mean_: Tensor, var_: Tensor, weight=None, bias=None,
               eps: float = 1e-5, channel_axis: int = 1) -> Tensor:
    c = channel_axis % x.ndim
    shape = tuple(s if i == c else 1 for i, s in enumerate(x.shape))

    def bcast(t):
        return broadcast_to(ops.reshape(t, new_sizes=shape), x.shape)

    inv = ops.rsqrt(ops.add(var_, _like(var_, eps)))
    y = ops.mul(ops.sub(x, bcast(mean_)), bcast(inv))
    if weight is not None:
        y = ops.mul(y, bcast(weight))
    if bias is not None:
        y = ops.add(y, bcast(bias))
    return y


def _reduce_loss(loss: Tensor, reduction: str, weight_sum: Tensor | None = None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum(loss)
    if reduction == "mean":
        if weight_sum is not None:
            return ops.div(sum(loss), weight_sum)
        return mean(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def nll_loss(logp: Tensor, target: Tensor, weight=None, ignore_index: int = -100,
             reduction: str = "mean", class_axis: int = 1) -> Tensor:
    """Negative log-likelihood of integer ``target`` under log-probabilities ``logp``."""
    c = class_axis % logp.ndim if logp.ndim > 1 else 0
    expected = tuple(s for i, s in enumerate(logp.shape) if i != c)
    if target.shape != expected:
        raise ShapeError(f"expected target of shape {expected} for input {logp.shape}, "
                         f"got {target.shape}", op="nll_loss")
    valid = ops.ne(target, full(target.shape, ignore_index, target.dtype))
    safe = ops.select(valid, target, full(target.shape, 0, target.dtype))
    picked = take_along_axis(logp, ops.reshape(safe, new_sizes=_insert(target.shape, c, 1)), c)
    picked = ops.reshape(picked, new_sizes=target.shape)
    w = cast(valid, logp.dtype)
    if weight is not None:
        class_w = take_along_axis(weight, ops.reshape(safe, new_sizes=(safe.size,)), 0)
        w = ops.mul(w, ops.reshape(class_w, new_sizes=target.shape))
    loss = ops.neg(ops.mul(picked, w))
    return _reduce_loss(loss, reduction, sum(w) if reduction == "mean" else None)


def _insert(shape, axis, size):
    return shape[:axis] + (size,) + shape[axis:]


def cross_entropy(logits: Tensor, target: Tensor, weight=None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0,
                  class_axis: int = 1) -> Tensor:
    """Softmax cross-entropy with integer class targets or class probabilities."""
    c = class_axis % logits.ndim if logits.ndim > 1 else 0
    logp = log_softmax(logits, c)
    if target.shape == logits.shape and np.issubdtype(target.dtype, np.inexact):
        probs = target
        if label_smoothing:
            n = logits.shape[c]
            probs = ops.add(ops.mul(probs, _like(probs, 1 - label_smoothing)),
                            _like(probs, label_smoothing / n))
        terms = ops.mul(logp, probs)
        if weight is not None:
            shape = tuple(s if i == c else 1 for i, s in enumerate(logits.shape))
            terms = ops.mul(terms, broadcast_to(ops.reshape(weight, new_sizes=shape), terms.shape))
        loss = ops.neg(sum(terms, c))
        return _reduce_loss(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index, reduction, c)
    if not label_smoothing:
        return nll
    n = logits.shape[c]
    valid = cast(ops.ne(target, full(target.shape, ignore_index, target.dtype)), logp.dtype)
    smooth_terms = logp
    if weight is not None:
        shape = tuple(s if i == c else 1 for i, s in enumerate(logits.shape))
        smooth_terms = ops.mul(logp, broadcast_to(ops.reshape(weight, new_sizes=shape), logp.shape))
    smooth = ops.mul(ops.neg(sum(smooth_terms, c)), valid)
    if reduction == "mean":
        if weight is not None:
            safe = ops.select(ops.ne(target, full(target.shape, ignore_index, target.dtype)),
                              target, full(target.shape, 0, target.dtype))
            w = ops.mul(valid, ops.reshape(take_along_axis(
                weight, ops.reshape(safe, new_sizes=(safe.size,)), 0), new_sizes=target.shape))
            smooth = ops.div(sum(smooth), sum(w))
        else:
            smooth = ops.div(sum(smooth), sum(valid))
    elif reduction == "sum":
        smooth = sum(smooth)
    eps = label_smoothing
    return ops.add(ops.mul(nll, _like(nll, 1 - eps)), ops.mul(smooth, _like(smooth, eps / n)))


def mse_loss(x: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    d = ops.sub(x, y)
    return _reduce_loss(ops.mul(d, d), reduction)


def dropout(x: Tensor, p: float, key: Tensor) -> Tensor:
    """Inverted dropout with an explicit key (see ``lazycore.random``)."""
    if p == 0:
        return x
    if p >= 1:
        return _like(x, 0)
    u = ops.random_uniform(key, shape=x.shape, dtype=x.dtype)
    keep = ops.ge(u, _like(u, p))
    return ops.select(keep, ops.div(x, _like(x, 1 - p)), _like(x, 0))
