"""Passing values between frontends and to/from host frameworks.

Frontend tensor types expose ``__lazycore_tensor__()`` returning their core handle, so
any frontend can adopt another's *pending* value without a sync (``unwrap``): one trace
can span NumPy preprocessing, a PyTorch model and TensorFlow post-processing and still
become one XLA program. Materialized buffers cross to host frameworks through DLPack.
"""

from __future__ import annotations

import jax
import numpy as np

from .runtime import data_node, materialize
from .tensor import Tensor

PROTOCOL = "__lazycore_tensor__"


def unwrap(obj) -> Tensor | None:
    """The core handle behind a frontend tensor (or a core Tensor itself); else None."""
    if isinstance(obj, Tensor):
        return obj
    method = getattr(type(obj), PROTOCOL, None)
    return None if method is None else method(obj)


def adopt(obj) -> Tensor:
    """A new handle on the same value as ``obj`` (no sync, no copy): the adopting
    frontend then applies its own rules to new ops."""
    core = unwrap(obj)
    if core is None:
        raise TypeError(f"{type(obj).__name__} is not a lazy value of any lazytensor frontend")
    return Tensor(core.node)


def from_dlpack(obj) -> Tensor:
    """Device data sharing memory with ``obj`` (anything with ``__dlpack__``) where the
    platform allows. The caller must not mutate ``obj`` afterwards: lazy values are
    snapshots. Use ``lazycore.asarray`` for a copy."""
    return Tensor(data_node(jax.dlpack.from_dlpack(obj)))


def to_dlpack_capsule_source(tensor: Tensor):
    """A ``jax.Array`` (which implements ``__dlpack__``) holding the value; frontends pass
    it to their framework's ``from_dlpack`` for a zero-copy host view."""
    return materialize(tensor)


def host_array(tensor: Tensor) -> np.ndarray:
    """Read-only NumPy view of the device buffer when possible (no copy on CPU)."""
    return np.asarray(materialize(tensor))
