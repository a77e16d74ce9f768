"""Neural-network composites shared by frontends: activations, softmax, norms, dropout
(losses are in ``losses.py``)."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, full, full_like
from .indexing import index_copy, take
from .reductions import center, centered_var, mean, normalize_axes, reduce, shift_max, vector_norm

_NARROW = frozenset({np.dtype(np.float16), canonical("bfloat16")})


def _wide(*tensors):
    """float16/bfloat16 tensors as float32 (PyTorch's CPU kernels compute in it)."""
    return [t if t is None or t.dtype not in _NARROW else cast(t, np.float32) for t in tensors]


def relu(x: Tensor) -> Tensor:
    return ops.max(full_like(x, 0), x)  # relu'(0) = 0: a tie's derivative goes to the 0


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        inner = ops.mul(full_like(x, np.sqrt(2 / np.pi)),
                        ops.add(x, ops.mul(full_like(x, 0.044715), ops.mul(x, ops.mul(x, x)))))
        return ops.mul(ops.mul(full_like(x, 0.5), x), ops.add(full_like(x, 1), ops.tanh(inner)))
    return ops.mul(x, ops.mul(full_like(x, 0.5), ops.add(  # x times the normal cdf
        full_like(x, 1), ops.erf(ops.mul(x, full_like(x, 1 / np.sqrt(2)))))))


def silu(x: Tensor, beta: float | Tensor = 1.0) -> Tensor:
    """``x * sigmoid(beta * x)`` (``beta``: a number or a tensor of ``x``'s shape)."""
    if isinstance(beta, Tensor):
        return ops.mul(x, ops.logistic(ops.mul(x, beta)))
    return ops.mul(x, ops.logistic(x if beta == 1 else ops.mul(x, full_like(x, beta))))


def softplus_parts(x: Tensor) -> tuple[Tensor, Tensor]:
    """``log1p(exp(-|x|))`` and ``max(x, 0)``, whose sum is softplus (no overflow for
    large ``|x|``), as selects on ``x > 0``: the derivative at 0 is sigmoid(0) = 1/2."""
    pos = ops.gt(x, full_like(x, 0))
    return ops.log1p(ops.exp(ops.select(pos, ops.neg(x), x))), ops.select(pos, x, full_like(x, 0))


def softplus(x: Tensor) -> Tensor:
    return ops.add(*softplus_parts(x))


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """The subtracted max is under stop_gradient: the result does not depend on it (its
    gradient is zero up to rounding), so as in JAX/TF no backward runs through it."""
    axes = normalize_axes(axis, x.ndim)
    e = ops.exp(ops.sub(x, broadcast_to(ops.stop_gradient(shift_max(x, axes)), x.shape)))
    return ops.div(e, broadcast_to(reduce("reduce_sum", e, axes, keepdims=True), x.shape))


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """(x - max) - log(sum(exp(x - max))), as PyTorch, JAX and TF compute it (a row
    holding +inf or only -inf is NaN there too); the max is under stop_gradient (softmax)."""
    axes = normalize_axes(axis, x.ndim)
    shifted = ops.sub(x, broadcast_to(ops.stop_gradient(shift_max(x, axes)), x.shape))
    return ops.sub(shifted, broadcast_to(ops.log(reduce("reduce_sum", ops.exp(shifted), axes,
                                                        keepdims=True)), x.shape))


def softmax_backward(grad: Tensor, output: Tensor, axis: int, log: bool = False) -> Tensor:
    """The input gradient of ``softmax`` (``grad*out - out*sum(grad*out)``) or, with
    ``log``, of ``log_softmax`` (``grad - exp(out)*sum(grad)``) from its output."""
    def sum_back(t):
        return t if t.ndim == 0 else broadcast_to(reduce("reduce_sum", t, (axis,), keepdims=True),
                                                  t.shape)

    if log:
        return ops.sub(grad, ops.mul(ops.exp(output), sum_back(grad)))
    go = ops.mul(grad, output)
    return ops.sub(go, ops.mul(output, sum_back(go)))


def elu(x: Tensor, alpha: float = 1.0, scale: float = 1.0, expm1: bool = True) -> Tensor:
    """``scale * (x if x > 0 else alpha * expm1(x))`` (selu: TF's/PyTorch's constants).
    ``expm1=False`` computes ``exp(x) - 1`` as TF's kernels do (``elu(-1e-30)`` is 0)."""
    e = ops.expm1(x) if expm1 else ops.sub(ops.exp(x), full_like(x, 1))
    neg = e if alpha == 1 else ops.mul(full_like(x, alpha), e)
    y = ops.select(ops.lt(x, full_like(x, 0)), neg, x)  # -0.0 stays -0.0
    return y if scale == 1 else ops.mul(full_like(x, scale), y)


def leaky_relu(x: Tensor, negative_slope: float) -> Tensor:
    return ops.select(ops.gt(x, full_like(x, 0)), x, ops.mul(x, full_like(x, negative_slope)))


def softsign(x: Tensor) -> Tensor:
    return ops.div(x, ops.add(full_like(x, 1), ops.abs(x)))


def layer_norm(x: Tensor, normalized_ndim: int, weight=None, bias=None, eps: float = 1e-5,
               return_stats: bool = False):
    """Normalize over the last ``normalized_ndim`` axes (PyTorch/Keras LayerNorm). With
    ``return_stats``: ``(y, mean, rstd)``, the statistics kept as size-1 axes (what a
    backward pass reuses); float16/bfloat16 compute in float32 and round once (PyTorch)."""
    dt = x.dtype
    x, weight, bias = _wide(x, weight, bias)
    axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
    m, centered = center(x, axes)
    rstd = ops.rsqrt(ops.add(centered_var(centered, axes, keepdims=True), full_like(m, eps)))
    y = ops.mul(centered, broadcast_to(rstd, x.shape))
    if weight is not None:
        y = ops.mul(y, broadcast_to(weight, x.shape))
    if bias is not None:
        y = ops.add(y, broadcast_to(bias, x.shape))
    return tuple(cast(t, dt) for t in (y, m, rstd)) if return_stats else cast(y, dt)


def layer_norm_backward(grad: Tensor, x: Tensor, m: Tensor, rstd: Tensor, normalized_ndim: int,
                        weight=None, outputs=(True, True, True)):
    """``(dx, dweight, dbias)`` of ``layer_norm`` from its saved ``m``/``rstd`` (None where
    ``outputs`` is False), in float32 for float16/bfloat16 as ``layer_norm``."""
    dt = x.dtype
    grad, x, m, rstd, weight = _wide(grad, x, m, rstd, weight)
    inner = tuple(range(x.ndim - normalized_ndim, x.ndim))
    outer = tuple(range(x.ndim - normalized_ndim))
    r = broadcast_to(rstd, x.shape)
    x_hat = ops.mul(ops.sub(x, broadcast_to(m, x.shape)), r)
    g_hat = grad if weight is None else ops.mul(grad, broadcast_to(weight, x.shape))
    dx = ops.sub(ops.sub(g_hat, broadcast_to(mean(g_hat, inner, keepdims=True), x.shape)),
                 ops.mul(x_hat, broadcast_to(mean(ops.mul(g_hat, x_hat), inner, True), x.shape)))
    found = (ops.mul(r, dx), reduce("reduce_sum", ops.mul(grad, x_hat), outer),
             reduce("reduce_sum", grad, outer))
    return tuple(cast(t, dt) if want else None for t, want in zip(found, outputs, strict=True))


def moments(x: Tensor, axis=None, keepdims: bool = False):
    """``(mean, biased variance)`` over ``axis`` (batch norm's statistics; TF's
    ``nn.moments``)."""
    axes = normalize_axes(axis, x.ndim, scalar_axes=())
    m, centered = center(x, axes)
    v = centered_var(centered, axes, keepdims)
    return (m if keepdims else ops.reshape(m, new_sizes=v.shape)), v


def batch_norm(x: Tensor, mean_: Tensor, var_: Tensor, weight=None, bias=None,
               eps: float = 1e-5, channel_axis: int | None = 1) -> Tensor:
    """``(x - mean) * rsqrt(var + eps) * weight + bias``, the weight folded into the
    reciprocal (a per-channel vector, not a second full-size product). The statistics
    and affine terms are vectors along ``channel_axis``, or with ``channel_axis=None``
    tensors that broadcast against ``x`` (TF's ``batch_normalization``)."""
    shape = None if channel_axis is None else tuple(
        s if i == channel_axis % x.ndim else 1 for i, s in enumerate(x.shape))

    def bcast(t):
        return broadcast_to(t if shape is None else ops.reshape(t, new_sizes=shape), x.shape)

    inv = ops.rsqrt(ops.add(var_, full_like(var_, eps)))
    if weight is not None:
        inv = ops.mul(inv, broadcast_to(weight, inv.shape) if channel_axis is None else weight)
    y = ops.mul(ops.sub(x, bcast(mean_)), bcast(inv))
    return y if bias is None else ops.add(y, bcast(bias))


def embedding_renorm(weight: Tensor, indices: Tensor, max_norm: float, ord: float = 2) -> Tensor:
    """``weight`` with each row ``indices`` reads whose ``ord``-norm exceeds ``max_norm``
    scaled by ``max_norm / (norm + 1e-7)``, the scale computed in float64 and rounded to
    ``weight``'s dtype (PyTorch's ``embedding_renorm_``: ``F.embedding(max_norm=)``)."""
    index = ops.reshape(indices, new_sizes=(indices.size,))
    rows = take(weight, index, 0)
    norm = cast(vector_norm(rows, ord, 1, keepdims=True), np.float64)
    scale = ops.select(ops.gt(norm, full_like(norm, max_norm)), ops.div(
        full_like(norm, max_norm), ops.add(norm, full_like(norm, 1e-7))), full_like(norm, 1))
    return index_copy(weight, 0, index,
                      ops.mul(rows, broadcast_to(cast(scale, weight.dtype), rows.shape)))


def dropout(x: Tensor, p: float, key: Tensor, noise_shape=None, return_mask: bool = False):
    """Inverted dropout with an explicit key (see ``lazycore.random``): an element is
    kept where a uniform draw is ``>= p`` and scaled by ``1 / (1 - p)``. ``noise_shape``
    (broadcast against ``x``) shares one draw along its size-1 axes (TF). With
    ``return_mask``: ``(y, keep mask)``."""
    shape = x.shape if noise_shape is None else tuple(noise_shape)
    if p == 0 or p >= 1:
        keep = full(x.shape, p == 0, np.bool_)
        y = x if p == 0 else full_like(x, 0)
        return (y, keep) if return_mask else y
    keep = broadcast_to(ops.ge(ops.random_uniform(key, shape=shape, dtype=x.dtype),
                               full(shape, p, x.dtype)), x.shape)
    y = ops.select(keep, ops.mul(x, full_like(x, 1.0 / (1.0 - p))), full_like(x, 0))
    return (y, keep) if return_mask else y
