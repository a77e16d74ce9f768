"""Bit-level APIs: ``tf.bitcast``.

Keras's ``signbit`` (behind ``keras.ops.argmax``, so behind every accuracy metric)
bitcasts float32 to int32; without an entry that would run eagerly each step.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._convert import np_dtype, to_core
from ._table import api


@api("bitcast", "bitcast_convert (equal widths)", tensors=("input",))
def _bitcast(input, type, name=None):  # noqa: A002 - TF's parameter names
    x, target = to_core(input), np_dtype(type)
    if x.dtype == np.bool_ or target == np.bool_ or x.dtype.itemsize != target.itemsize:
        raise NotImplementedError  # shape-changing or bool casts: TF's own kernel decides
    return lc.ops.bitcast_convert(x, dtype=target)
