"""Sorting and selection: multi-operand sort (carries payloads, e.g. argsort) and top-k."""

from __future__ import annotations

from jax import lax

from .registry import defop
from .rules import jax_rule

FAMILY = "sorting"


def _sort(*xs, dimension, is_stable=True, num_keys=1, descending=False):
    if descending:  # stable descending = ascending sort of the reversed order keys
        out = lax.sort(tuple(_flip_key(x) for x in xs[:num_keys]) + tuple(xs[num_keys:]),
                       dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        return tuple(_flip_key(o) for o in out[:num_keys]) + tuple(out[num_keys:])
    return tuple(lax.sort(xs, dimension=dimension, is_stable=is_stable, num_keys=num_keys))


def _flip_key(x):
    """Reverses the order exactly and is its own inverse: ``~x = -x-1`` for integers (no
    overflow), ``not`` for booleans, ``-x`` for floats."""
    return ~x if x.dtype == bool or x.dtype.kind in "iu" else -x


sort = defop("sort", FAMILY, jax_rule(_sort), _sort, multi_output=True)


def _top_k(x, *, k):
    return tuple(lax.top_k(x, k))


top_k = defop("top_k", FAMILY, jax_rule(_top_k), _top_k, multi_output=True)
