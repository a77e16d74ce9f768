"""Floor division and modulo (Python semantics: the result takes the divisor's sign).

The primitives ``div``/``rem`` truncate toward zero (C semantics); NumPy's
``floor_divide``/``mod``, PyTorch's ``floor_divide``/``remainder`` and TF's
``floordiv``/``floormod`` all round toward negative infinity. Operands must already
agree in shape and dtype.
"""

from __future__ import annotations

from .. import ops
from ..dtypes import is_floating, is_unsigned
from ..tensor import Tensor
from .broadcasting import full


def floor_mod(x: Tensor, y: Tensor) -> Tensor:
    r = ops.rem(x, y)
    if is_unsigned(x.dtype):
        return r
    zero = full(r.shape, 0, r.dtype)
    fix = ops.get("and")(ops.ne(r, zero), ops.ne(ops.lt(r, zero), ops.lt(y, zero)))
    return ops.select(fix, ops.add(r, y), r)


def floor_divide(x: Tensor, y: Tensor) -> Tensor:
    if is_floating(x.dtype):
        return ops.floor(ops.div(x, y))
    q = ops.div(x, y)
    if is_unsigned(x.dtype):
        return q
    r = ops.rem(x, y)
    zero = full(r.shape, 0, r.dtype)
    fix = ops.get("and")(ops.ne(r, zero), ops.ne(ops.lt(r, zero), ops.lt(y, zero)))
    return ops.select(fix, ops.sub(q, full(q.shape, 1, q.dtype)), q)
