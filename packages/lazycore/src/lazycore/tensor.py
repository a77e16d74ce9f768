"""``Tensor``: the handle a frontend holds. It points at a node and can be re-pointed.

Frontend tensors own one core ``Tensor``. In-place updates re-point it
(``t.assign(new)``); a sync re-points every live pending handle at the device data
that was computed for it. The runtime tracks handles through weak references, so
values nobody holds any more are never computed.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from .ir import LEAF_OPS, Aval, Node

# Live handles as weak references in a set; a dead handle's ref removes itself via
# ``set.discard`` (a C callback), so registering costs well under a microsecond. The
# runtime reads the set at a sync; it imports this module, never the reverse.
_live: set = set()
_live_add = _live.add
_ref = weakref.ref
_discard = _live.discard


def _snapshot() -> list:
    """Live handles. Another thread may register while we copy: retry."""
    while True:
        try:
            refs = list(_live)
            break
        except RuntimeError:  # set changed size during iteration
            continue
    return [t for r in refs if (t := r()) is not None]


def live_tensors() -> list:
    return _snapshot()


_next_seq = itertools.count().__next__


class Tensor:
    # ``seq``: creation order. The live set is unordered; syncs order their outputs by
    # ``seq`` so the same program traced again gets the same cache key.
    __slots__ = ("node", "seq", "__weakref__")

    def __init__(self, node: Node):  # ``trace.call`` inlines this (hot path): keep both
        self.node = node
        self.seq = _next_seq()
        _live_add(_ref(self, _discard))

    # -- abstract value, answered without a sync ---------------------------------
    @property
    def aval(self) -> Aval:
        return self.node.aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.node.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.node.aval.shape)

    @property
    def size(self) -> int:
        return self.node.aval.size

    @property
    def is_pending(self) -> bool:
        """True while the value is an unexecuted computation."""
        return self.node.op not in LEAF_OPS

    # -- mutation -----------------------------------------------------------------
    def assign(self, other: Tensor) -> Tensor:
        """Re-point this handle at ``other``'s value (functional in-place update)."""
        if other.node.aval != self.node.aval:
            from .errors import ShapeError

            raise ShapeError(f"cannot assign {other.node.aval} to {self.node.aval}", op="assign")
        self.node = other.node
        return self

    # -- observation ----------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """Host copy (syncs this value if pending)."""
        from .runtime import to_numpy

        return to_numpy(self)

    def device_array(self):
        """The ``jax.Array`` holding this value (syncs if pending)."""
        from .runtime import materialize

        return materialize(self)

    def __repr__(self) -> str:
        state = "pending" if self.is_pending else "data"
        return f"lazycore.Tensor({self.node.aval}, {state})"
