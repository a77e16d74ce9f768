"""Matrix products with NumPy/PyTorch semantics on top of ``dot_general``."""

from __future__ import annotations

import math

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_shapes, broadcast_to, full
from .manipulation import diagonal
from .reductions import (
    sum,  # noqa: A004 - the composite
    vector_norm,
)


def matmul(x: Tensor, y: Tensor) -> Tensor:
    """``x @ y``: 1-D operands are promoted and squeezed, batch dims broadcast."""
    if x.ndim == 0 or y.ndim == 0:
        raise ShapeError("input operand does not have enough dimensions", op="matmul")
    x2 = ops.reshape(x, new_sizes=(1, x.shape[0])) if x.ndim == 1 else x
    y2 = ops.reshape(y, new_sizes=(y.shape[0], 1)) if y.ndim == 1 else y
    if x2.shape[-1] != y2.shape[-2]:
        raise ShapeError(f"mismatch in contracted dimension: {x.shape} @ {y.shape} "
                         f"({x2.shape[-1]} != {y2.shape[-2]})", op="matmul",
                         shapes=[x.aval, y.aval])
    batch = broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
    nb = len(batch)
    if y2.ndim == 2:  # rows (of any batch) times one matrix: one dot, y not copied per batch
        out = ops.dot_general(x2, y2, contracting=((x2.ndim - 1,), (0,)), batch=((), ()))
    else:
        x3 = broadcast_to(x2, batch + x2.shape[-2:])
        y3 = broadcast_to(y2, batch + y2.shape[-2:])
        dims = tuple(range(nb))
        out = ops.dot_general(x3, y3, contracting=((nb + 1,), (nb,)), batch=(dims, dims))
    shape = list(out.shape)
    if y.ndim == 1:
        shape.pop(-1)
    if x.ndim == 1:
        shape.pop(-2 if y.ndim != 1 else -1)
    return out if tuple(shape) == out.shape else ops.reshape(out, new_sizes=tuple(shape))


def tensordot(x: Tensor, y: Tensor, axes=2) -> Tensor:
    if isinstance(axes, int):
        xa = tuple(range(x.ndim - axes, x.ndim))
        ya = tuple(range(axes))
    else:
        xa, ya = axes
        xa = (xa,) if isinstance(xa, int) else tuple(xa)
        ya = (ya,) if isinstance(ya, int) else tuple(ya)
    xa = tuple(a % x.ndim for a in xa)
    ya = tuple(a % y.ndim for a in ya)
    if len(xa) != len(ya) or any(x.shape[a] != y.shape[b] for a, b in zip(xa, ya, strict=True)):
        raise ShapeError(f"shape-mismatch for sum: {x.shape} and {y.shape} over {xa}, {ya}",
                         op="tensordot")
    return ops.dot_general(x, y, contracting=(xa, ya), batch=((), ()))


def einsum(subscripts: str, *xs: Tensor) -> Tensor:
    return ops.einsum(*xs, subscripts=subscripts.replace(" ", ""))


def logdet_cholesky(x: Tensor) -> Tensor:
    """``log(det(x))`` of Hermitian positive-definite matrices (the last two axes):
    ``2 * sum(log(real(diag(cholesky(x)))))``; NaN where ``x`` is not positive definite."""
    s = sum(ops.log(ops.real(diagonal(ops.linalg_cholesky(x), 0, -2, -1))), -1)
    return ops.add(s, s)


def kron(x: Tensor, y: Tensor) -> Tensor:
    """The Kronecker product of two tensors of one dtype: ``x``'s axes interleaved with
    ``y``'s (the shorter rank padded with leading 1s), multiplied by broadcasting, then
    merged pairwise (booleans: logical and, as NumPy's multiply)."""
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    x = ops.reshape(x, new_sizes=tuple(v for s in xs for v in (s, 1)))
    y = ops.reshape(y, new_sizes=tuple(v for s in ys for v in (1, s)))
    shape = broadcast_shapes(x.shape, y.shape)
    mul = ops.get("and") if x.dtype == bool else ops.mul
    prod = mul(broadcast_to(x, shape), broadcast_to(y, shape))
    return ops.reshape(prod, new_sizes=tuple(p * q for p, q in zip(xs, ys, strict=True)))


def _pairwise_differences(x1: Tensor, x2: Tensor) -> Tensor:
    """``x1[..., i, None, :] - x2[..., None, j, :]``, batch dims broadcast."""
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    shape = batch + (x1.shape[-2], x2.shape[-2], x1.shape[-1])
    a = broadcast_to(ops.reshape(x1, new_sizes=x1.shape[:-1] + (1, x1.shape[-1])), shape)
    b = broadcast_to(ops.reshape(x2, new_sizes=x2.shape[:-2] + (1,) + x2.shape[-2:]), shape)
    return ops.sub(a, b)


def cdist(x1: Tensor, x2: Tensor, p: float) -> Tensor:
    """The ``p``-norm distance of every row of ``x1`` to every row of ``x2`` (PyTorch's
    exact ``_cdist_forward``: the norm of each difference)."""
    return vector_norm(_pairwise_differences(x1, x2), p, axis=-1)


def cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, dist: Tensor) -> Tensor:
    """The gradient of ``cdist`` for ``x1`` as PyTorch's ``_cdist_backward`` gives it: a
    pair at distance 0 contributes nothing (``p`` 2 and general), every coordinate tied
    at the largest contributes fully (``p`` inf), ``p`` 0 has none."""
    diff = _pairwise_differences(x1, x2)
    zero = full(diff.shape, 0, diff.dtype)
    d = broadcast_to(ops.reshape(dist, new_sizes=dist.shape + (1,)), diff.shape)
    sign = ops.sign(diff)
    if p == 0:
        return full(x1.shape, 0, x1.dtype)
    if p == 1:
        local = sign
    elif p == math.inf:
        local = ops.select(ops.eq(ops.abs(diff), d), sign, zero)
    else:
        at_zero = ops.eq(d, zero)
        power = diff if p == 2 else ops.mul(sign, ops.pow(ops.abs(diff), full(d.shape, p - 1, d.dtype)))
        scale = d if p == 2 else ops.pow(d, full(d.shape, p - 1, d.dtype))
        local = ops.select(at_zero, zero, ops.div(power, ops.select(at_zero, full(d.shape, 1, d.dtype), scale)))
    g = broadcast_to(ops.reshape(grad, new_sizes=grad.shape + (1,)), diff.shape)
    return sum(ops.mul(local, g), axis=-2)  # PyTorch's cdist expands the batch dims first
