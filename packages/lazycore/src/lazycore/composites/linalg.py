"""Matrix products with NumPy/PyTorch semantics on top of ``dot_general``."""

from __future__ import annotations

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_shapes, broadcast_to
from .manipulation import diagonal
from .reductions import sum  # noqa: A004 - the composite


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
