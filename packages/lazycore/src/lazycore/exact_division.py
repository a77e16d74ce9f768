"""Compiled quotients rounded once, as eager kernels divide.

XLA's algebraic simplifier rewrites a float quotient whose divisor is a broadcast (or
built from broadcasts: it sinks them), a constant, ``sqrt``, ``rsqrt``, ``exp``, ``pow``
or another quotient, or whose dividend is a quotient, into a reciprocal product or a
reassociated quotient: one ulp off, which ``floor``/``astype(int)`` make another integer
(``floor(t / 0.1)`` over a 0.1 grid, ``x / 3`` on a third of the elements), and only
once a program is compiled (the interpreter divides exactly). Such quotients by a scalar,
a constant, ``sqrt``/``rsqrt``/``exp``/``pow`` or a quotient are lowered by
``rounded_once``; quotients by a broadcast row are not (``_from_broadcasts``)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .optable import OPS

#: divisors XLA rewrites a quotient by (besides broadcasts)
_REWRITTEN_BY = frozenset({"const", "sqrt", "rsqrt", "exp", "pow", "div"})
#: ops through which XLA moves a broadcast outward (elementwise families, shapes, casts)
_CARRY_BROADCAST = frozenset({"elementwise", "shape"})
_DEPTH = 4


def rounded_once(x, y):
    """Float32 and narrower divide in float64 and round: whatever XLA does to that
    quotient (a reciprocal product: float64's ulp) stays inside the gap between an exact
    float32 quotient and a rounding boundary. Float64 operands pass an optimization
    barrier the simplifier cannot see through."""
    if x.dtype.itemsize < 8:
        wide = lambda v: lax.convert_element_type(v, np.float64)  # noqa: E731
        return lax.convert_element_type(lax.div(wide(x), wide(y)), x.dtype)
    return lax.div(*lax.optimization_barrier((x, y)))


def needs_guard(dtype, refs, producer) -> bool:
    """Whether a ``div`` of ``dtype`` on the values at ``refs`` is a real float quotient
    XLA would rewrite. ``producer(ref)``: ``(op, operand refs, shape)`` of the value at
    ``ref``, ``op`` None for a program input."""
    if not jnp.issubdtype(dtype, jnp.floating):
        return False
    dividend, divisor = (producer(r) for r in refs)
    return (dividend[0] == "div" or divisor[0] in _REWRITTEN_BY
            or _from_broadcasts(divisor, producer, _DEPTH))


def _from_broadcasts(value, producer, depth: int) -> bool:
    """A broadcast of a scalar, or an elementwise/shape op of those and scalars (XLA sinks
    it). Broadcasts of rows (a softmax's or a norm's ``/ sum``) are left to XLA: guarding
    them cost a transformer step ~7% (its float64 conversions), and eager's own softmax
    kernels multiply by the reciprocal too."""
    op, refs, _ = value
    if op == "broadcast_in_dim":
        return not producer(refs[0])[2]
    if depth == 0 or op not in OPS or OPS[op].family not in _CARRY_BROADCAST:
        return False
    wide = [v for v in map(producer, refs) if v[2]]
    return bool(wide) and all(_from_broadcasts(v, producer, depth - 1) for v in wide)
