"""Ops whose output size depends on data. The size is an attribute: the caller
first syncs a count (``lazycore.numeric.nonzero``), then traces the op with it."""

from __future__ import annotations

import jax.numpy as jnp

from .registry import defop
from .rules import jax_rule

FAMILY = "dynamic"


def _nonzero(x, *, size):
    return tuple(i.astype(jnp.int64) for i in jnp.nonzero(x, size=size))


nonzero = defop("nonzero", FAMILY, jax_rule(_nonzero), _nonzero, multi_output=True)


def _unique(x, *, size):
    return jnp.unique(x, size=size)


unique = defop("unique", FAMILY, jax_rule(_unique), _unique)


def _unique_all(x, *, size):
    values, index, inverse, counts = jnp.unique(x, return_index=True, return_inverse=True,
                                                return_counts=True, size=size)
    return (values, index.astype(jnp.int64), inverse.reshape(x.shape).astype(jnp.int64),
            counts.astype(jnp.int64))


unique_all = defop("unique_all", FAMILY, jax_rule(_unique_all), _unique_all, multi_output=True)
