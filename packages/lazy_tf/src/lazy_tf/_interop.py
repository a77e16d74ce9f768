"""Lazy values from the other frontends enter lazy_tf without a sync (one trace)."""

from __future__ import annotations

import lazycore as lc

from ._tensor import LazyTensor, handle, new


def _core(self) -> lc.Tensor:
    return handle(self)


LazyTensor.__lazycore_tensor__ = _core


def from_lazy(value):
    """The same pending value (a LazyArray, a lazy torch tensor, ...) as a lazy TF
    tensor: no materialization, no copy; TF's dtype rules apply to what follows."""
    return new(lc.interop.adopt(value))
