"""``lazy_tf.DeviceLoader``: a ``tf.data.Dataset`` feeding lazy tensors."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import lazycore as lc

from ._tensor import LazyTensor, new


def _to_host(leaf):
    if isinstance(leaf, LazyTensor):
        return None
    if isinstance(leaf, tf.Tensor):
        if leaf.dtype == tf.string:
            return None  # the core holds numbers only: strings stay eager tensors
        return np.asarray(leaf.numpy())
    return np.asarray(leaf) if isinstance(leaf, np.ndarray | np.generic) else None


def DeviceLoader(dataset, batches_per_execution: int = 1, *, prefetch: int = 2):  # noqa: N802
    """Iterate ``dataset`` (a ``tf.data.Dataset`` or any iterable of tensor batches) as
    lazy tensors copied to the device by a background thread while the previous step
    runs; ``lazy_tf.sync()`` runs every ``batches_per_execution`` batches and at the end.

    >>> import tensorflow as tf, lazy_tf as ltf
    >>> ds = tf.data.Dataset.from_tensor_slices({"x": [[1.0, 2.0], [3.0, 4.0]]})
    >>> [float(tf.reduce_sum(b["x"])) for b in ltf.DeviceLoader(ds)]
    [3.0, 7.0]
    """
    return lc.DeviceLoader(dataset, batches_per_execution=batches_per_execution,
                           prefetch=prefetch, to_host=_to_host, wrap=new)
