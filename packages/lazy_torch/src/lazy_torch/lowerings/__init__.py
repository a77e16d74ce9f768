"""The lowering table (one dict, filled by the op-family modules below)."""

from . import creation, indexing, losses, nn, pointwise, random, reductions, rnn, shape, sorting  # noqa: F401 - register
from .registry import LOWERINGS, lower, overload

__all__ = ["LOWERINGS", "lower", "overload"]
