"""Distributions built from the core's uniform draws (``ops.random_*`` give the bits).

Each takes a key (``lazycore.random.Generator.next_key``), so drawing every step of a
loop never recompiles.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import canonical
from ..tensor import Tensor
from .broadcasting import cast, full


def exponential(key: Tensor, shape, dtype, *, rate: float = 1.0) -> Tensor:
    """Exponential draws of mean ``1 / rate``: ``-log1p(-u) / rate`` for a uniform ``u``
    in [0, 1) (finite: ``1 - u > 0``), drawn in float64 for float64, else in float32,
    and cast to ``dtype``."""
    dtype = canonical(dtype)
    work = dtype if dtype == np.dtype(np.float64) else np.dtype(np.float32)
    u = ops.random_uniform(key, shape=tuple(int(s) for s in shape), dtype=work)
    e = ops.neg(ops.log1p(ops.neg(u)))
    return cast(e if rate == 1 else ops.div(e, full(u.shape, rate, work)), dtype)
