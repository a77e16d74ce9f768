"""Random numbers: ``ltf.random`` mirrors ``tf.random`` with lazy results.

Seeds follow TF's two-level scheme: ``ltf.random.set_seed(g)`` fixes the global seed
and restarts every stream; an op-level ``seed=s`` selects its own stream for ``(g, s)``.
Each stream is a lazycore generator whose seed and counter are program parameters, so
drawing every step never recompiles; ``normal``/``uniform`` seed the kernels of TF's
stateless ops (Philox, below) with each draw's key, ``truncated_normal`` inverts the
restricted normal's CDF of a threefry uniform: a stream's values are not TF's.

``tf.random.stateless_uniform/normal/truncated_normal`` and
``tf.nn.experimental.stateless_dropout`` are TF's CPU kernels bit for bit (normals to
ulps) on lazy or host seeds: Keras 3's TF backend draws through them.
"""

from __future__ import annotations

import itertools
import numbers
import types

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import gen_random_ops
from tensorflow.python.ops.random_ops_util import convert_alg_to_int

import lazycore as lc

from . import _state
from ._convert import np_dtype, static, to_core
from ._graph import building
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
    """``z * scale + shift``, as TF writes its random ops: the product rounded before the
    sum (XLA's CPU backend would fuse both into one FMA; the product's bits or-ed with a
    zero only known at run time stop that)."""
    p = _apply("mul", z, _operand(scale, z.dtype))
    bits = np.dtype(f"uint{p.dtype.itemsize * 8}")
    p = lc.numeric.reinterpret(_apply("or", lc.numeric.reinterpret(p, bits),
                                      lc.scalar(0, bits, bake=False)), p.dtype)
    return _apply("add", p, _operand(shift, z.dtype))


def _stream_seed(seed) -> lc.Tensor:
    """The stream's next key as the seed of TF's stateless kernels (below)."""
    return lc.ops.convert(next_key(seed), dtype=np.int64)


def normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    return new(_affine(_draw(shape, _stream_seed(seed), dtype, None, "normal"), stddev, mean))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    """Normal draws outside two standard deviations are redrawn (as TF); the core
    draws them without rejection (``lazycore.numeric.truncated_normal``)."""
    return new(_affine(lc.numeric.truncated_normal(next_key(seed), _shape(shape), np_dtype(dtype)),
                       stddev, mean))


def uniform(shape, minval=0, maxval=None, dtype=tf.float32, seed=None, name=None):
    if maxval is None and lc.dtypes.is_integer(np_dtype(dtype)):
        raise ValueError(f"Must specify maxval for integer dtype {tf.as_dtype(dtype).name}")
    return new(_stateless_uniform(shape, _stream_seed(seed), minval, maxval, dtype))


def shuffle_core(value, seed=None) -> lc.Tensor:
    t = to_core(value)
    if t.ndim == 0:
        raise lc.ShapeError("shuffle needs rank >= 1")
    return lc.numeric.take(t, generator(seed).permutation(t.shape[0]), 0)


@api("random.shuffle", "random_permutation, gather", tensors=("value",))
def _shuffle(value, seed=None, name=None):
    return shuffle_core(value, seed)


def shuffle(value, seed=None, name=None):
    return new(shuffle_core(value, seed))


random = types.SimpleNamespace(set_seed=set_seed, normal=normal, uniform=uniform,
                               truncated_normal=truncated_normal, shuffle=shuffle,
                               generator=generator)


# -- TF's stateless random ops, bit for bit ----------------------------------------------
# TF's CPU kernels (alg "auto_select" or "philox"): lazycore.numeric.philox. A call this path
# refuses (another algorithm, an int dtype for normals, a tensor rate...) is TF's own.
def _draw(shape, seed, dtype, alg, kind: str) -> lc.Tensor:
    """``kind``'s draws (``lazycore.numeric.philox``) on TF's argument rules."""
    s, d = to_core(seed), np_dtype(dtype)
    if (convert_alg_to_int(alg or "auto_select") not in (1, 3) or s.shape != (2,)
            or not lc.dtypes.is_integer(s.dtype)):
        raise ValueError("lazy_tf draws with Philox from an integer seed of shape [2]")
    if not (lc.dtypes.is_floating(d) or kind == "uniform" and d.kind in "iu" and d.itemsize >= 4):
        raise ValueError(f"stateless {kind} draws of {d}")
    return lc.numeric.philox(s, _shape(shape), d, kind)


@api("random.stateless_uniform", "Philox (composite)", tensors=("seed", "minval", "maxval"))
def _stateless_uniform(shape, seed, minval=0, maxval=None, dtype=tf.float32, name=None,
                       alg="auto_select"):
    raw, d = _draw(shape, seed, dtype, alg, "uniform"), np_dtype(dtype)
    if lc.dtypes.is_floating(d):
        lo = _operand(minval, d)
        return _affine(raw, _apply("sub", _operand(1 if maxval is None else maxval, d), lo), lo)
    bounds = static([minval, maxval])
    if bounds == [None, None]:
        return lc.numeric.reinterpret(raw, d)
    if None in bounds or d.kind == "u" or bounds[0] >= bounds[1]:
        raise ValueError(f"integer bounds {bounds} for {d}")
    lo, hi = bounds
    return lc.numeric.reinterpret(_apply("add", _apply("rem", raw, hi - lo),
                                         lo % 2 ** (8 * d.itemsize)), d)


def _stateless_normal(kind: str):
    def draw(shape, seed, mean=0.0, stddev=1.0, dtype=tf.float32, name=None, alg="auto_select"):
        return _affine(_draw(shape, seed, dtype, alg, kind), stddev, mean)
    return draw


api("random.stateless_normal", "Philox, Box-Muller (composite)",
    tensors=("seed", "mean", "stddev"))(_stateless_normal("normal"))
api("random.stateless_truncated_normal", "Philox, Box-Muller, the first within 2 (composite)",
    tensors=("seed", "mean", "stddev"))(_stateless_normal("truncated"))


@api("nn.experimental.stateless_dropout", "Philox uniform, select (composite)",
     tensors=("x", "seed"))
def _stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """TF's ``_dropout``: ``x * (1 / (1 - rate))`` where a uniform draw of ``noise_shape``
    is ``>= rate``, else 0 (a tensor ``rate``: TF's own)."""
    t = to_core(x)
    if not (isinstance(rate, numbers.Real) and 0 <= rate < 1 and lc.dtypes.is_floating(t.dtype)):
        raise ValueError(f"stateless_dropout of {t.dtype} with rate {rate}")
    if rate == 0:
        return t
    return lc.numeric.where(
        _apply("ge", _draw(t.shape if noise_shape is None else [  # noise_shape's None: t's
            d if s is None else s for d, s in zip(t.shape, static(noise_shape), strict=False)],
            seed, t.dtype, rng_alg, "uniform"), rate),
        _apply("mul", t, _operand(1 / (1 - rate), t.dtype)), lc.numeric.full((), 0, t.dtype))


# -- TF's stateful random ops in a captured tf.function ----------------------------------
def _stateful(kind: str, original):
    """``gen_random_ops``' ``kind`` draw: while a ``tf.function`` is captured and its op
    seed given (TF's draws then follow from the seed pair), TF's kernel's values
    (``lazycore.numeric.philox`` from ``start``); else TensorFlow's op. TF's kernel
    (``GuardedPhiloxRandom``) keys Philox with the seed pair and reserves 256 blocks per
    value each run: call k of the captured function starts at block ``k * n * 256``, k
    reaching the program as the draw's key (re-drawn every call, ``_capture._stream_of``)."""
    def draw(shape, dtype, seed=0, seed2=0, name=None):
        trace = _state.capture[0]
        if trace is None or not (seed or seed2) or building():
            return original(shape, dtype, seed=seed, seed2=seed2, name=name)
        shape, zero, calls = _shape(shape), lc.scalar(0, np.int64, bake=False), itertools.count()
        key = lc.ops.rng_key(zero, zero)  # re-drawn per call: the call's index (as uint32s)
        trace.kernels[id(key.node)] = types.SimpleNamespace(next_key=lambda: lc.numeric.full(
            (2,), lc.scalar(next(calls), np.int64, bake=False), np.uint32))
        return new(lc.numeric.philox(to_core(np.array([seed, seed2], np.int64)), shape,
                                     np_dtype(dtype), kind, lc.numeric.elementwise(  # start
            "mul", lc.numeric.cast(lc.numeric.getitem(key, 0), np.uint64),
            256 * int(np.prod(shape)), dtype=np.uint64)))
    return draw


gen_random_ops.random_uniform = _stateful("uniform", gen_random_ops.random_uniform)
gen_random_ops.random_standard_normal = _stateful("normal",
                                                  gen_random_ops.random_standard_normal)
