"""APIs TensorFlow gives no dispatch hook for, or whose dispatch signature takes a list:
``einsum``, ``map_fn``, ``vectorized_map`` (wrapped symbols, see ``_table.patch``),
``clip_by_global_norm``, ``linalg.global_norm``, ``clip_by_norm``.

Without an entry each of them converts its lazy arguments to eager tensors, which a
lazy tape cannot see. The composites are written with TF's own API calls in TF's
order of operations, so every step dispatches to its table entry (and TF's dtype
rules and errors apply to each); ``map_fn``/``vectorized_map`` run ``fn`` once per
element on lazy slices and stack the results -- what TF's eager loop computes.
"""

from __future__ import annotations

import tensorflow as tf

import lazycore as lc

from ._convert import same_dtype
from ._table import api, patch
from ._tensor import LazyTensor


@patch("einsum", "einsum (composite: dot_general, transpose, reduce)")
def _einsum(equation, *inputs, **kwargs):
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string, got {equation!r}")
    return lc.numeric.einsum(equation, *same_dtype(*inputs))


def global_norm_of(values: list):
    """``sqrt(2 * sum(l2_loss(v)))`` over the non-None values (TF's formula)."""
    total = tf.reduce_sum(tf.stack([tf.nn.l2_loss(_values(v)) for v in values
                                    if v is not None]))
    return tf.sqrt(total * tf.constant(2.0, dtype=total.dtype))


def _values(t):
    """TF's global norm and clipping use an IndexedSlices' slices, never densified."""
    return t.values if isinstance(t, tf.IndexedSlices) else t


def _sequence(t_list, what: str) -> list:
    if isinstance(t_list, str) or not isinstance(t_list, list | tuple):
        raise TypeError(f"`{what}` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


@api("linalg.global_norm", "l2 reductions, stack, sqrt (TF's composition)", lists=("t_list",))
def _global_norm(t_list, name=None):
    return global_norm_of(_sequence(t_list, "t_list"))


@api("clip_by_global_norm", "global_norm, min, mul (TF's composition)", lists=("t_list",))
def _clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    values = _sequence(t_list, "t_list")
    use_norm = global_norm_of(values) if use_norm is None else use_norm
    scale = clip_norm * tf.minimum(1.0 / use_norm,
                                   tf.constant(1.0, dtype=use_norm.dtype) / clip_norm)
    scale = scale + (use_norm - use_norm)  # NaN when the norm is inf or NaN, as in TF
    return [tf.IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, tf.IndexedSlices)
            else c for c, t in zip([None if t is None else _values(t) * tf.cast(scale, t.dtype)
                                    for t in values], values, strict=True)], use_norm


@api("clip_by_norm", "sum, sqrt, where, div (TF's composition)", tensors=("t",))
def _clip_by_norm(t, clip_norm, axes=None, name=None):
    l2sum = tf.reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    return tf.identity(t * clip_norm / tf.maximum(tf.where(  # the norm (a zero sum: 0)
        positive, tf.sqrt(tf.where(positive, l2sum, tf.ones_like(l2sum))), l2sum), clip_norm))


def _loop_map(fn, elems, signature=None):
    """``fn`` on each slice along axis 0, results stacked: TF's eager map_fn loop."""
    flat = tf.nest.flatten(elems)
    if not flat or any(not isinstance(x, LazyTensor | tf.Tensor) or x.shape.rank in (0, None)
                       for x in flat):
        raise NotImplementedError("map_fn: elements that are not tensors of rank >= 1")
    n = flat[0].shape[0]
    if n is None or n == 0 or any(x.shape[0] != n for x in flat):
        raise NotImplementedError("map_fn: no elements, or first dimensions that differ")
    outs = [fn(tf.nest.pack_sequence_as(elems, [x[i] for x in flat])) for i in range(n)]
    out_flat = [tf.nest.flatten(o) for o in outs]
    if signature is not None:
        want = [tf.as_dtype(getattr(s, "dtype", s)) for s in tf.nest.flatten(signature)]
        got = [getattr(v, "dtype", None) for v in out_flat[0]]
        if want != got:
            raise NotImplementedError("map_fn: outputs differ from fn_output_signature")
    return tf.nest.pack_sequence_as(outs[0], [tf.stack(list(column))
                                              for column in zip(*out_flat, strict=True)])


@patch("map_fn", "fn per element, stack")
def _map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
            swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    return _loop_map(fn, elems, fn_output_signature if fn_output_signature is not None
                     else dtype)


@patch("vectorized_map", "fn per element, stack")
def _vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    return _loop_map(fn, elems)
