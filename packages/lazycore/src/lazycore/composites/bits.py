"""Bit reinterpretation: the same bytes read as another dtype (``a.view(dtype)``).

Bytes are little-endian, the order of every host XLA runs on. A change of item size
rescales the last axis by the ratio; a complex item is its two float halves, real part
first; a bool item is one byte (0 or 1: a view as bool reads every nonzero byte as 1).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical, is_complex
from ..errors import ShapeError
from ..tensor import Tensor
from ..trace import constant


def _uint(itemsize: int) -> np.dtype:
    return np.dtype(f"u{itemsize}")


def _along_new_axis(values, x: Tensor) -> Tensor:
    """``values`` (one per position of a new last axis) broadcast to ``x.shape + (k,)``,
    baked into the program (they depend on dtypes only)."""
    k = constant(np.asarray(values, x.dtype))
    return ops.broadcast_in_dim(k, shape=x.shape + k.shape, broadcast_dimensions=(x.ndim,))


def _last_axis(x: Tensor, size: int) -> tuple[int, ...]:
    return (x.shape[:-1] if x.ndim else ()) + (size,)


def as_bits(x: Tensor) -> Tensor:
    """``x``'s bytes as unsigned integers of its item size (complex: its two float
    halves on a doubled last axis, a 0-d value giving two; bool: its 0/1 bytes)."""
    if x.dtype == np.bool_:
        return ops.convert(x, dtype=np.dtype(np.uint8))
    if is_complex(x.dtype):
        n = x.shape[-1] if x.ndim else 1
        parts = [ops.reshape(p, new_sizes=_last_axis(x, n) + (1,))
                 for p in (ops.real(x), ops.imag(x))]
        pairs = ops.concatenate(*parts, dimension=len(_last_axis(x, n)))
        return as_bits(ops.reshape(pairs, new_sizes=_last_axis(x, 2 * n)))
    return ops.bitcast_convert(x, dtype=_uint(x.dtype.itemsize))


def from_bits(u: Tensor, dtype) -> Tensor:
    """Inverse of :func:`as_bits`: unsigned integers of ``dtype``'s item size (for a
    complex ``dtype``: of half of it, in pairs along the last axis) read as ``dtype``."""
    dtype = canonical(dtype)
    if dtype == np.bool_:
        return ops.ne(u, ops.broadcast_in_dim(constant(np.zeros((), u.dtype)), shape=u.shape,
                                              broadcast_dimensions=()))
    if is_complex(dtype):
        floats = ops.bitcast_convert(u, dtype=np.dtype(f"f{dtype.itemsize // 2}"))
        pairs = ops.reshape(floats, new_sizes=u.shape[:-1] + (u.shape[-1] // 2, 2))
        re, im = (ops.reshape(ops.slice(pairs, start_indices=(0,) * (pairs.ndim - 1) + (k,),
                                        limit_indices=pairs.shape[:-1] + (k + 1,)),
                              new_sizes=pairs.shape[:-1]) for k in (0, 1))
        return ops.complex(re, im)
    return ops.bitcast_convert(u, dtype=dtype)


def regroup(u: Tensor, width: int) -> Tensor:
    """Unsigned ``u`` re-cut into unsigned items of ``width`` bytes along the last axis,
    little-endian: a wide item splits into its low bytes first, narrow items join with
    the first one lowest."""
    w = u.dtype.itemsize
    if w == width:
        return u
    out = _uint(width)
    if w > width:
        k = w // width
        wide = ops.broadcast_in_dim(u, shape=u.shape + (k,),
                                    broadcast_dimensions=tuple(range(u.ndim)))
        shifted = ops.shift_right_logical(wide, _along_new_axis(
            [8 * width * i for i in range(k)], u))
        low = ops.bitwise_and(shifted, _along_new_axis([(1 << (8 * width)) - 1] * k, u))
        return ops.reshape(ops.convert(low, dtype=out), new_sizes=u.shape[:-1] + (u.shape[-1] * k,))
    r = width // w
    if u.shape[-1] % r:
        raise ShapeError(f"a last axis of {u.shape[-1]} items of {w} bytes does not regroup "
                         f"into items of {width} bytes", op="regroup")
    grouped = ops.convert(ops.reshape(u, new_sizes=u.shape[:-1] + (u.shape[-1] // r, r)),
                          dtype=out)
    shifts = ops.broadcast_in_dim(constant(np.asarray([8 * w * i for i in range(r)], out)),
                                  shape=grouped.shape, broadcast_dimensions=(grouped.ndim - 1,))
    return ops.reduce_or(ops.shift_left(grouped, shifts), axes=(grouped.ndim - 1,))


def reinterpret(x: Tensor, dtype) -> Tensor:
    """``x``'s bytes read as ``dtype``: the last axis rescaled by the item-size ratio
    (NumPy's ``view(dtype)``, PyTorch's ``Tensor.view(dtype)``); a 0-d ``x`` needs an
    equal item size."""
    dtype = canonical(dtype)
    if x.dtype == dtype:
        return x
    if x.ndim == 0:
        if x.dtype.itemsize != dtype.itemsize:
            raise ShapeError(f"a 0-d {x.dtype} cannot be read as {dtype} (item sizes "
                             f"{x.dtype.itemsize} and {dtype.itemsize})", op="reinterpret")
        flat = reinterpret(ops.reshape(x, new_sizes=(1,)), dtype)
        return ops.reshape(flat, new_sizes=())
    if (x.shape[-1] * x.dtype.itemsize) % dtype.itemsize:
        raise ShapeError(f"the last axis of {x.aval} ({x.shape[-1] * x.dtype.itemsize} bytes) "
                         f"is not a multiple of {dtype}'s item size", op="reinterpret")
    return from_bits(regroup(as_bits(x), dtype.itemsize // 2 if is_complex(dtype) else
                             dtype.itemsize), dtype)
