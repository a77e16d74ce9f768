"""Shape manipulation with NumPy-style arguments: stack, split, squeeze, flip, roll, ..."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..errors import AxisError, ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_shapes, broadcast_to
from .indexing import gather_points, host_index
from .reductions import normalize_axes


def reshape(x: Tensor, shape) -> Tensor:
    """Reshape with at most one ``-1``."""
    shape = tuple(int(s) for s in (shape if isinstance(shape, tuple | list) else (shape,)))
    if shape.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension", op="reshape")
    if -1 in shape:
        known = math.prod([int(s) for s in shape if s != -1])
        if known == 0 or x.size % known:
            raise ShapeError(f"cannot reshape array of size {x.size} into shape {shape}",
                             op="reshape")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    return x if shape == x.shape else ops.reshape(x, new_sizes=shape)


def expand_dims(x: Tensor, axis) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes, dims = normalize_axes(axes, x.ndim + len(axes)), iter(x.shape)
    return ops.reshape(x, new_sizes=tuple(1 if i in axes else next(dims)
                                          for i in range(x.ndim + len(axes))))


def squeeze(x: Tensor, axis=None) -> Tensor:
    if axis is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        axes = normalize_axes(axis, x.ndim)
        if any(x.shape[a] != 1 for a in axes):
            raise ShapeError("cannot select an axis to squeeze out which has size not "
                             "equal to one", op="squeeze")
    return ops.reshape(x, new_sizes=tuple(s for i, s in enumerate(x.shape) if i not in axes))


def transpose(x: Tensor, axes=None) -> Tensor:
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    axes = tuple(int(a) % x.ndim if x.ndim else 0 for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise AxisError(f"axes {axes} don't match array of dimension {x.ndim}", op="transpose")
    return x if axes == tuple(range(x.ndim)) else ops.transpose(x, permutation=axes)


def moveaxis(x: Tensor, source, destination) -> Tensor:
    src, dst = (normalize_axes(a, x.ndim) if isinstance(a, int) else tuple(
        normalize_axes(one, x.ndim)[0] for one in a) for a in (source, destination))
    if len(src) != len(dst):
        raise ValueError("source and destination must have the same number of elements")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


def concatenate(xs, axis: int = 0) -> Tensor:
    xs = list(xs)
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs, axis = [reshape(x, (-1,)) for x in xs], 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    (a,) = normalize_axes(axis, xs[0].ndim)
    return xs[0] if len(xs) == 1 else ops.concatenate(*xs, dimension=a)


def stack(xs, axis: int = 0) -> Tensor:
    xs = list(xs)
    if not xs:
        raise ValueError("need at least one array to stack")
    shape = xs[0].shape
    if any(x.shape != shape for x in xs):
        raise ShapeError("all input arrays must have the same shape", op="stack")
    (a,) = normalize_axes(axis, len(shape) + 1)
    return concatenate([expand_dims(x, a) for x in xs], a)


def split_sizes(x: Tensor, sizes, axis: int = 0, starts=None) -> list[Tensor]:
    """Pieces of ``sizes`` along ``axis``: one after another, or at ``starts``."""
    (a,) = normalize_axes(axis, x.ndim)
    out, start = [], 0
    for i, size in enumerate(sizes):
        lo, hi = [0] * x.ndim, list(x.shape)
        lo[a] = start if starts is None else starts[i]
        hi[a] = lo[a] + size
        out.append(ops.slice(x, start_indices=tuple(lo), limit_indices=tuple(hi)))
        start += size
    return out


def split(x: Tensor, indices_or_sections, axis: int = 0, strict: bool = True) -> list[Tensor]:
    """NumPy ``split``/``array_split`` (``strict=False``)."""
    (a,) = normalize_axes(axis, x.ndim)
    n = x.shape[a]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        base, extra = divmod(n, k)
        sizes = [base + 1] * extra + [base] * (k - extra)
    else:
        bounds = [0] + [min(max(int(i) if i >= 0 else int(i) + n, 0), n)
                        for i in indices_or_sections] + [n]
        return split_sizes(x, [max(hi - lo, 0) for lo, hi in zip(bounds[:-1], bounds[1:],
                                                                  strict=True)],
                           a, bounds[:-1])  # bounds are clamped to [0, n]
    return split_sizes(x, sizes, a)


def flip(x: Tensor, axis=None) -> Tensor:
    axes = normalize_axes(axis, x.ndim)
    return ops.rev(x, dimensions=axes) if axes else x


def roll(x: Tensor, shift, axis=None) -> Tensor:
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts, axes = ((v,) if isinstance(v, int) else tuple(v) for v in (shift, axis))
    # one shift for several axes, or one axis for several shifts: repeated
    shifts, axes = (shifts * (len(axes) if len(shifts) == 1 else 1),
                    axes * (len(shifts) if len(axes) == 1 else 1))
    for s, ax in zip(shifts, axes, strict=True):
        (a,) = normalize_axes(ax, x.ndim)
        n = x.shape[a]
        s = s % n if n else 0  # an empty axis does not roll
        if s:
            tail, head = split_sizes(x, [n - s, s], a)
            x = ops.concatenate(head, tail, dimension=a)
    return x


def tile(x: Tensor, reps) -> Tensor:
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    expanded = tuple(n for pair in zip(reps, shape, strict=True) for n in pair)
    big = ops.broadcast_in_dim(reshape(x, shape), shape=expanded,
                               broadcast_dimensions=tuple(range(1, 2 * ndim, 2)))
    return reshape(big, tuple(r * s for r, s in zip(reps, shape, strict=True)))


def repeat(x: Tensor, repeats: int, axis=None) -> Tensor:
    """Static integer ``repeats`` (array repeats go through ``lazycore.numeric`` + sync)."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    (a,) = normalize_axes(axis, x.ndim)
    return reshape(ops.broadcast_in_dim(
        x, shape=x.shape[:a + 1] + (repeats,) + x.shape[a + 1:],
        broadcast_dimensions=tuple(i for i in range(x.ndim + 1) if i != a + 1)), x.shape[:a] + (x.shape[a] * repeats,) + x.shape[a + 1:])


def broadcast_arrays(*xs: Tensor) -> list[Tensor]:
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


def diagonal(x: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    a1, a2 = normalize_axes(axis1, x.ndim)[0], normalize_axes(axis2, x.ndim)[0]
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = moveaxis(x, (a1, a2), (-2, -1))
    rows, cols = x.shape[-2], x.shape[-1]
    n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    rows_at, cols_at = np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0)
    return moveaxis(gather_points(x, [x.ndim - 2, x.ndim - 1],
                                  [host_index(rows_at), host_index(cols_at)]), 0, -1)
