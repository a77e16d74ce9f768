"""Broadcasting, promotion and n-ary elementwise application.

``promote(args, dtype=...)`` casts and broadcasts operands to the dtype a frontend has
decided (Python scalars become fills of that dtype: parameters, so new values do not
recompile); without ``dtype`` it promotes by ``dtypes.result_type`` (NumPy's NEP 50 by
default). ``elementwise("add", x, 2.0)`` promotes and traces one primitive.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import ops
from ..dtypes import canonical, result_type
from ..errors import ShapeError
from ..tensor import Tensor
from ..trace import fill_of, filled

PY_SCALARS = (bool, int, float, complex)


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """NumPy broadcasting of shapes; ``ShapeError`` when they do not broadcast."""
    first = shapes[0] if shapes else ()
    for s in shapes[1:]:
        if s != first:
            break
    else:
        return tuple(first)
    try:
        return _broadcast_cached(tuple(tuple(s) for s in shapes))
    except TypeError:  # unhashable shape entries
        return _broadcast(shapes)


@functools.lru_cache(maxsize=4096)
def _broadcast_cached(shapes) -> tuple[int, ...]:
    return _broadcast(shapes)


def _broadcast(shapes) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, start=ndim - len(shape)):
            if size == out[i] or size == 1:
                continue
            if out[i] == 1:
                out[i] = size
            else:
                raise ShapeError("operands could not be broadcast together with shapes "
                                 + " ".join(str(tuple(s)) for s in shapes), shapes=shapes)
    return tuple(out)


def broadcast_to(x: Tensor, shape) -> Tensor:
    if x.node.aval.shape == shape:
        return x
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    if len(shape) < x.ndim:
        raise ShapeError(f"cannot broadcast {x.aval} to {shape}", op="broadcast_to")
    if not x.ndim:
        fill = fill_of(x, shape)  # a host scalar: one leaf, no broadcast node
        if fill is not None:
            return fill
    lead = len(shape) - x.ndim
    return ops.broadcast_in_dim(x, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


def cast(x: Tensor, dtype) -> Tensor:
    if x.node.aval.dtype is dtype:
        return x
    dtype = canonical(dtype)
    return x if x.dtype == dtype else ops.convert(x, dtype=dtype)


def _weak_type(v):
    if isinstance(v, bool | np.bool_):
        return bool
    if isinstance(v, int | np.integer) and not isinstance(v, np.generic):
        return int
    if isinstance(v, float) and not isinstance(v, np.generic):
        return float
    if isinstance(v, complex) and not isinstance(v, np.generic):
        return complex
    return None


def promote(args, policy: str = "numpy", dtype=None) -> list[Tensor]:
    """Tensors and Python scalars -> Tensors of one dtype and one shape."""
    if dtype is None and args and all(type(a) is Tensor for a in args):
        first = args[0].node.aval
        if all(a.node.aval == first for a in args[1:]):
            return list(args)  # hot path: nothing to promote or broadcast
    keys = []
    for a in args:
        if isinstance(a, Tensor):
            keys.append(a.dtype)
        else:
            weak = _weak_type(a)
            keys.append(weak if weak is not None else np.asarray(a).dtype)
    target = canonical(dtype) if dtype is not None else _result_type(tuple(keys), policy)
    shape = broadcast_shapes(*[a.shape for a in args if isinstance(a, Tensor)])
    return [broadcast_to(cast(a, target), shape) if isinstance(a, Tensor)
            else filled(a, target, shape) for a in args]


@functools.lru_cache(maxsize=4096)
def _result_type(keys: tuple, policy: str):
    return result_type(keys, policy)


def elementwise(op_name: str, *args, policy: str = "numpy", dtype=None) -> Tensor:
    """Promote + broadcast + trace the primitive ``op_name``."""
    return ops.get(op_name)(*promote(args, policy, dtype))


def full(shape, value, dtype) -> Tensor:
    """``value`` broadcast to ``shape`` (a parameter unless 0/+-1)."""
    if isinstance(value, Tensor):
        return broadcast_to(cast(value, dtype), tuple(shape))
    return filled(value, dtype, tuple(shape))


def full_like(x: Tensor, value) -> Tensor:
    return full(x.shape, value, x.dtype)


def where(cond: Tensor, x, y, policy: str = "numpy") -> Tensor:
    x, y = promote([x, y], policy)
    cond = cast(cond, np.bool_)
    shape = broadcast_shapes(cond.shape, x.shape)
    return ops.select(broadcast_to(cond, shape), broadcast_to(x, shape), broadcast_to(y, shape))
