"""Neural-network composites shared by frontends: activations, softmax, norms, dropout
(losses are in ``losses.py``)."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensor import Tensor
from .broadcasting import broadcast_to, full
from .reductions import mean, normalize_axes, reduce, shift_max, var


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


def softplus(x: Tensor) -> Tensor:
    """``log1p(exp(-|x|)) + max(x, 0)``: no overflow for large ``|x|``."""
    return ops.add(ops.log1p(ops.exp(ops.neg(ops.abs(x)))), ops.max(x, _like(x, 0)))


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


def dropout(x: Tensor, p: float, key: Tensor) -> Tensor:
    """Inverted dropout with an explicit key (see ``lazycore.random``)."""
    if p == 0:
        return x
    if p >= 1:
        return _like(x, 0)
    u = ops.random_uniform(key, shape=x.shape, dtype=x.dtype)
    keep = ops.ge(u, _like(u, p))
    return ops.select(keep, ops.div(x, _like(x, 1 - p)), _like(x, 0))
