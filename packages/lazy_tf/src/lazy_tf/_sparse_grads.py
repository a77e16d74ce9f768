"""TF's sparse gradients, ``tf.IndexedSlices`` with lazy ``values`` and ``indices``.

Eager TF differentiates a row gather (``tf.gather`` on axis 0, ``embedding_lookup``,
``gather_nd`` with one index column) into ``IndexedSlices``, and optimizers treat
repeated rows slice by slice. The gather APIs mark their core gather
(``lazycore.autodiff.mark_rows``); ``ltf.GradientTape`` turns the core's ``Rows``
into TF's own class. Densifying one with ``tf.convert_to_tensor`` is a lazy segment
sum (so are ``tf.reduce_sum`` and ``tf.clip_by_norm`` of one); TF's internal conversions
accept only eager tensors, so they sync (a fallback).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import tensor_conversion_registry

import lazycore as lc

from ._convert import to_core
from ._graph import building, to_tensor
from ._tensor import is_lazy_class, new


def from_rows(rows: lc.autodiff.Rows, shape, record) -> tf.IndexedSlices:
    """The tape's gradient: ``dense_shape`` is an eager constant, as eager's is."""
    return tf.IndexedSlices(record(rows.values), new(rows.indices),
                            tf.constant(shape, tf.as_dtype(rows.tag or np.int32)))


def is_lazy(value) -> bool:
    return isinstance(value, tf.IndexedSlices) and any(
        is_lazy_class(v.__class__) for v in (value.values, value.indices))


def dense(value, dtype=None) -> lc.Tensor:
    """``unsorted_segment_sum(values, indices, dense_shape[0])``, as TF densifies."""
    if dtype is not None and not tf.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {tf.as_dtype(dtype).name} for "
                         f"IndexedSlices with dtype {value.dtype.name}")
    v, i = to_core(value.values), to_core(value.indices)
    return lc.numeric.index_add(lc.numeric.zeros(
        (int(np.asarray(value.dense_shape)[0]),) + v.shape[1:], v.dtype), 0, i, v)


@tf.experimental.dispatch_for_api(tf.convert_to_tensor, {"value": tf.IndexedSlices})
def _convert(value, dtype=None, dtype_hint=None, name=None):
    if not is_lazy(value):
        return NotImplemented  # TF's own conversion
    out = new(dense(value, dtype))
    return to_tensor(out) if building() else out


@tf.experimental.dispatch_for_api(tf.math.reduce_sum, {"input_tensor": tf.IndexedSlices})
def _reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Keras's ``global_clipnorm`` sums squared gradients: the dense sum, lazily."""
    if not is_lazy(input_tensor):
        return NotImplemented
    return tf.math.reduce_sum(new(dense(input_tensor)), axis, keepdims)


@tf.experimental.dispatch_for_api(tf.clip_by_norm, {"t": tf.IndexedSlices})
def _clip_by_norm(t, clip_norm, axes=None, name=None):
    """TF clips the slices as one tensor (Keras's ``clipnorm``), lazily."""
    if not is_lazy(t):
        return NotImplemented
    return tf.IndexedSlices(tf.clip_by_norm(t.values, clip_norm, axes), t.indices, t.dense_shape)


def _internal(value, dtype=None, name=None, as_ref=False):
    """TF's internal conversions (a generated op's inputs) need an eager tensor."""
    if not is_lazy(value):
        return NotImplemented
    from ._fallback import to_eager

    return to_eager(new(dense(value, dtype)))


tensor_conversion_registry.register_tensor_conversion_function(
    tf.IndexedSlices, _internal, priority=99)
