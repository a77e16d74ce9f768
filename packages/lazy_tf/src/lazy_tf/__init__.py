"""lazy_tf: TensorFlow-eager programs recorded lazily and compiled by lazycore.

>>> import tensorflow as tf, lazy_tf as ltf
>>> w = ltf.Variable(tf.ones([3, 2]))
>>> x = ltf.convert_to_tensor([[1.0, 2.0, 3.0]])
>>> with ltf.GradientTape() as tape:
...     loss = tf.reduce_sum(tf.matmul(x, w))      # TF's own API, traced
>>> g = tape.gradient(loss, w)
>>> w.assign_sub(0.1 * g)
>>> ltf.sync()                                     # one compiled program
>>> float(loss)
12.0
"""

from __future__ import annotations  # noqa: I001  (_requirements must run first)

from . import _requirements  # noqa: F401  (names the package to install if TF is missing)

import os as _os

import tensorflow as _tf

import lazycore as _lc

from . import (  # noqa: F401  (fill the table)
    _capture,
    _api_array,
    _api_bits,
    _api_functional,
    _api_image,
    _api_linalg,
    _api_math,
    _api_nn,
    _api_signal,
    _dispatch,
    _graph,
    _indexing,
    keras,
    _operators,
    optimizers,
)
from ._api_random import random
from ._table import API
from ._tape import GradientTape
from ._tensor import LazyTensor
from ._variable import Variable

_dispatch._install()
_capture.install()
_operators._install()
_lc.register_internal_path(_os.path.dirname(_os.path.abspath(__file__)))
_lc.register_internal_path(_os.path.dirname(_tf.__file__))

metrics = _lc.metrics
Tensor = LazyTensor


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None) -> LazyTensor:
    """Host data (tf.Tensor, NumPy, lists, scalars) -> a lazy tensor (device data).
    Conversion follows ``tf.convert_to_tensor``; a lazy tensor is returned as is."""
    from ._convert import to_core
    from ._tensor import new

    if _graph.building():  # inside a tf.function trace: graph tensors
        return _tf.convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint)
    if isinstance(value, LazyTensor):
        if dtype is not None and _tf.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {_tf.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}")
        return value
    return new(to_core(_tf.convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint)))


def constant(value, dtype=None, shape=None, name=None) -> LazyTensor:
    """``tf.constant`` producing a lazy tensor."""
    if _graph.building():
        return _tf.constant(value, dtype=dtype, shape=shape)
    return convert_to_tensor(_tf.constant(value, dtype=dtype, shape=shape))


def sync(tensors=None, wait: bool = False) -> None:
    """The step barrier: compute every pending lazy value (or just ``tensors``)."""
    from ._convert import to_core

    _lc.sync(None if tensors is None else [to_core(t) for t in _tf.nest.flatten(tensors)],
             wait=wait)


def is_lazy(value) -> bool:
    """Whether ``value`` is a lazy tensor (or ``ltf.Variable``), recorded rather than eager."""
    return isinstance(value, LazyTensor)


def fallback_counts() -> dict[str, int]:
    """``{api: count}`` of calls that ran eagerly in TensorFlow instead of lazily."""
    return {k.split("::", 1)[1]: v for k, v in _lc.metrics.counters().items()
            if k.startswith("fallback::")}


def mark_sharding(tensor: LazyTensor, mesh: _lc.Mesh, spec) -> LazyTensor:
    """Split a lazy tensor or ``ltf.Variable`` over a ``lazycore.Mesh``: one spec entry
    per dimension, a mesh axis name or index, a tuple of them, or None. In place (a
    variable stays split across ``assign`` calls); returns it. A bad spec raises ValueError.
    See ``lazycore.mark_sharding`` and docs/scaling.md."""
    from ._tensor import handle

    if not isinstance(tensor, LazyTensor):
        raise TypeError(f"mark_sharding expects a lazy tensor, got {type(tensor).__name__}")
    _lc.mark_sharding(handle(tensor), mesh, spec)
    return tensor


__all__ = ["API", "GradientTape", "LazyTensor", "Tensor", "Variable", "constant",
           "convert_to_tensor", "fallback_counts", "is_lazy", "metrics", "optimizers",
           "random", "sync", "keras", "mark_sharding"]

from . import debug  # noqa: E402  (IR / HLO of pending values)
from ._interop import from_lazy  # noqa: E402  (one trace across frontends)
from ._loader import DeviceLoader  # noqa: E402  (batches copied to the device ahead)

__all__ += ["DeviceLoader", "__version__", "debug"]
__version__ = "0.1.0"  # the release; pyproject.toml pins lazycore to the same
