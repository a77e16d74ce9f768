"""Lazy values from the other frontends enter lazy_torch without a sync (one trace)."""

from __future__ import annotations

import lazycore as lc

from ._tensor import LazyTensor, wrap


def from_lazy(value) -> LazyTensor:
    """The same pending value (a LazyArray, a lazy TF tensor, ...) as a lazy
    ``torch.Tensor`` on the lazy device: no materialization, no copy. It is a leaf for
    autograd, as a tensor made from NumPy data would be eagerly."""
    return wrap(lc.interop.adopt(value))
