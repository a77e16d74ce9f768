"""tf.DType <-> numpy dtype (the core's dtypes are numpy dtypes), cached both ways."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import lazycore as lc

_TO_NP: dict = {}
_TO_TF: dict = {}


def to_np(dtype) -> np.dtype:
    """A tf.DType (or anything ``tf.as_dtype`` takes) as the core's numpy dtype."""
    out = _TO_NP.get(dtype)
    if out is None:
        out = lc.dtypes.canonical(np.dtype(tf.as_dtype(dtype).as_numpy_dtype))
        _TO_NP[dtype] = out
    return out


def to_tf(dtype) -> tf.DType:
    out = _TO_TF.get(dtype)
    if out is None:
        out = tf.as_dtype(np.dtype(dtype))
        _TO_TF[dtype] = out
    return out
