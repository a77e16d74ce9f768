"""Lazy values from the other frontends enter lazy_numpy without a sync (one trace)."""

from __future__ import annotations

import lazycore as lc

from ._array import LazyArray


def from_lazy(value) -> LazyArray:
    """The same pending value (a lazy torch or TF tensor, or a LazyArray) as a LazyArray:
    no materialization, no copy; NumPy's rules apply to the ops that follow."""
    return LazyArray(lc.interop.adopt(value))
