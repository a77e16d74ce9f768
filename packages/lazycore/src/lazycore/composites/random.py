"""Distributions built from the core's uniform draws (``ops.random_*`` give the bits).

Each takes a key (``lazycore.random.Generator.next_key``), so drawing every step of a
loop never recompiles.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..dtypes import canonical
from ..tensor import Tensor
from .broadcasting import cast, full

#: dtypes drawn and inverted in float32 (erfinv in 16 bits is too coarse near the bounds)
_NARROW = frozenset({np.dtype(np.float16), canonical("bfloat16")})


def truncated_normal(key: Tensor, shape, dtype, *, low: float = -2.0,
                     high: float = 2.0) -> Tensor:
    """Standard normal draws restricted to ``[low, high]`` (TF's ``truncated_normal``:
    ``[-2, 2]``, which redraws outside): a uniform draw mapped through the inverse CDF
    of the restricted normal, ``sqrt(2) * erfinv(erf(low/sqrt(2)) + u * (erf(high/sqrt(2))
    - erf(low/sqrt(2))))``, clamped to the bounds that rounding could cross. No rejection
    loop: the shape stays static."""
    if not low < high:
        raise ValueError(f"truncated_normal needs low < high, got [{low}, {high}]")
    dtype = canonical(dtype)
    work = np.dtype(np.float32) if dtype in _NARROW else dtype
    u = ops.random_uniform(key, shape=tuple(int(s) for s in shape), dtype=work)
    lo, hi = (math.erf(b / math.sqrt(2.0)) for b in (low, high))
    p = ops.add(full(u.shape, lo, work), ops.mul(u, full(u.shape, hi - lo, work)))
    z = ops.mul(ops.erf_inv(p), full(u.shape, math.sqrt(2.0), work))
    z = ops.clamp(full(u.shape, low, work), z, full(u.shape, high, work))
    return cast(z, dtype)


def exponential(key: Tensor, shape, dtype, *, rate: float = 1.0) -> Tensor:
    """Exponential draws of mean ``1 / rate``: ``-log1p(-u) / rate`` for a uniform ``u``
    in [0, 1) (finite: ``1 - u > 0``), drawn in float64 for float64, else in float32,
    and cast to ``dtype``."""
    dtype = canonical(dtype)
    work = dtype if dtype == np.dtype(np.float64) else np.dtype(np.float32)
    u = ops.random_uniform(key, shape=tuple(int(s) for s in shape), dtype=work)
    e = ops.neg(ops.log1p(ops.neg(u)))
    return cast(e if rate == 1 else ops.div(e, full(u.shape, rate, work)), dtype)
