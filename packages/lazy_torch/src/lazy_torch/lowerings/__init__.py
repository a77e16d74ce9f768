"""The lowering table (one dict, filled by the op-family modules below)."""

from . import (  # noqa: F401 - register
    amp,
    conv,
    creation,
    indexing,
    losses,
    nn,
    pointwise,
    random,
    recurrent,
    reductions,
    rnn,
    shape,
    sorting,
    spectral,
)
from .registry import LOWERINGS, lower, overload

__all__ = ["LOWERINGS", "lower", "overload"]
