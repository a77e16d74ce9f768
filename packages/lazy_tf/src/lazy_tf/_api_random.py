"""Random numbers: ``ltf.random`` mirrors ``tf.random`` with lazy results.

Seeds follow TF's two-level scheme: ``ltf.random.set_seed(g)`` fixes the global seed
and restarts every stream; an op-level ``seed=s`` selects its own stream for ``(g, s)``.
Each stream is a lazycore generator whose seed and counter are program parameters, so
drawing every step never recompiles. The bits are lazycore's (threefry), not TF's.
"""

from __future__ import annotations

import types

import tensorflow as tf

import lazycore as lc

from ._convert import np_dtype, static, to_core
from ._table import api
from ._tensor import new

_GLOBAL = [None]
_STREAMS: dict = {}


def set_seed(seed: int) -> None:
    """Global seed for ltf.random and ops taking ``seed=`` (also seeds eager TF)."""
    _GLOBAL[0] = int(seed)
    _STREAMS.clear()
    tf.random.set_seed(seed)


def generator(seed=None) -> lc.random.Generator:
    key = (_GLOBAL[0], None if seed is None else int(seed))
    if key not in _STREAMS:
        g, s = 87654321 if key[0] is None else key[0], 0 if key[1] is None else key[1] + 1
        _STREAMS[key] = lc.random.Generator((g * 1_000_003 + s) & 0x7FFFFFFF)
    return _STREAMS[key]


def next_key(seed=None) -> lc.Tensor:
    return generator(seed).next_key()


def _shape(shape) -> tuple:
    out = static(shape)
    return tuple(int(s) for s in (out if isinstance(out, list) else [out]))


def _operand(v, dtype) -> lc.Tensor:
    """A mean, stddev or bound in the draw's dtype; a tensor of another dtype is TF's
    ``ValueError`` (``convert_to_tensor(v, dtype)``)."""
    try:
        return to_core(v, dtype)
    except lc.DTypeError as error:
        raise ValueError(f"tf.random: {error}") from error


def _apply(op: str, a: lc.Tensor, b: lc.Tensor) -> lc.Tensor:
    """``a op b`` in ``a``'s dtype, broadcast both ways as TF's kernels do (a ``mean`` of
    shape (2, 3) with ``shape=[3]`` gives (2, 3)); shapes that do not broadcast are
    their ``InvalidArgumentError``."""
    try:
        return lc.numeric.elementwise(op, a, b, dtype=a.dtype)
    except lc.ShapeError as error:
        raise tf.errors.InvalidArgumentError(None, None, str(error)) from error


def _affine(z: lc.Tensor, scale, shift) -> lc.Tensor:
    """``z * scale + shift``, as TF writes its random ops."""
    return _apply("add", _apply("mul", z, _operand(scale, z.dtype)), _operand(shift, z.dtype))


def normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    z = lc.ops.random_normal(next_key(seed), shape=_shape(shape), dtype=np_dtype(dtype))
    return new(_affine(z, stddev, mean))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    """Normal draws outside two standard deviations are redrawn (as TF); the core
    draws them without rejection (``lazycore.numeric.truncated_normal``)."""
    z = lc.numeric.truncated_normal(next_key(seed), _shape(shape), np_dtype(dtype))
    return new(_affine(z, stddev, mean))


def uniform(shape, minval=0, maxval=None, dtype=tf.float32, seed=None, name=None):
    d, shp = np_dtype(dtype), _shape(shape)
    if lc.dtypes.is_integer(d):
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {tf.as_dtype(dtype).name}")
        return new(generator(seed).integers(int(static(minval)), int(static(maxval)), shp, d))
    u = lc.ops.random_uniform(next_key(seed), shape=shp, dtype=d)
    hi = 1.0 if maxval is None else maxval
    lo_t = _operand(minval, d)
    return new(_affine(u, _apply("sub", _operand(hi, d), lo_t), lo_t))


def shuffle_core(value, seed=None) -> lc.Tensor:
    t = to_core(value)
    if t.ndim == 0:
        raise lc.ShapeError("shuffle needs rank >= 1")
    perm = generator(seed).permutation(t.shape[0])
    return lc.numeric.take(t, perm, 0)


@api("random.shuffle", "random_permutation, gather", tensors=("value",))
def _shuffle(value, seed=None, name=None):
    return shuffle_core(value, seed)


def shuffle(value, seed=None, name=None):
    return new(shuffle_core(value, seed))


random = types.SimpleNamespace(set_seed=set_seed, normal=normal, uniform=uniform,
                               truncated_normal=truncated_normal, shuffle=shuffle,
                               generator=generator)
