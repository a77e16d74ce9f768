"""Random numbers from explicit keys (threefry): deterministic given (seed, counter).

A key is a ``uint32[2]`` value. ``rng_key(seed, counter)`` derives one from two
parameters, so drawing in a loop never recompiles.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dtypes import canonical
from ..errors import ShapeError
from ..ir import Aval
from .registry import defop

FAMILY = "random"
KEY = Aval((2,), np.dtype(np.uint32))


def _wrap(key):
    return jax.random.wrap_key_data(key, impl="threefry2x32")


def _key_rule(seed: Aval, counter: Aval) -> Aval:
    if seed.shape != () or counter.shape != ():
        raise ShapeError("seed and counter must be scalars")
    return KEY


def _rng_key(seed, counter):
    base = jax.random.key(seed.astype(jnp.uint32), impl="threefry2x32")
    return jax.random.key_data(jax.random.fold_in(base, counter.astype(jnp.uint32)))


rng_key = defop("rng_key", FAMILY, _key_rule, _rng_key)


def _draw_rule(key: Aval, *, shape, dtype, **_) -> Aval:
    if key != KEY:
        raise ShapeError(f"key must be uint32[2], got {key}")
    return Aval(tuple(shape), canonical(dtype))


random_bits = defop("random_bits", FAMILY, _draw_rule,
                    lambda key, *, shape, dtype: jax.random.bits(_wrap(key), shape,
                                                                 canonical(dtype)))
random_uniform = defop("random_uniform", FAMILY, _draw_rule,
                       lambda key, *, shape, dtype: jax.random.uniform(
                           _wrap(key), shape, canonical(dtype)))
random_normal = defop("random_normal", FAMILY, _draw_rule,
                      lambda key, *, shape, dtype: jax.random.normal(
                          _wrap(key), shape, canonical(dtype)))


def _randint(key, lo, hi, *, shape, dtype):
    return jax.random.randint(_wrap(key), shape, lo, hi, canonical(dtype))


def _randint_rule(key: Aval, lo: Aval, hi: Aval, *, shape, dtype) -> Aval:
    return _draw_rule(key, shape=shape, dtype=dtype)


random_randint = defop("random_randint", FAMILY, _randint_rule, _randint)


def _perm_rule(key: Aval, *, n) -> Aval:
    return Aval((n,), np.dtype(np.int64))


random_permutation = defop("random_permutation", FAMILY, _perm_rule,
                           lambda key, *, n: jax.random.permutation(_wrap(key), n)
                           .astype(jnp.int64))
