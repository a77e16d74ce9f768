"""Lazy values from the other frontends enter lazy_tf without a sync (one trace)."""

from __future__ import annotations

import lazycore as lc

from ._tensor import new


def from_lazy(value):
    """The same pending value (a LazyArray, a lazy torch tensor, ...) as a lazy TF
    tensor: no materialization, no copy; TF's dtype rules apply to what follows."""
    return new(lc.interop.adopt(value))
