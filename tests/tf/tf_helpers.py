"""Shared helpers for the lazy_tf tests."""

import numpy as np
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc


def lazy(value):
    return ltf.convert_to_tensor(value)


def assert_same(lazy_out, eager_out, rtol=1e-5, atol=1e-6):
    """Values, dtypes and shapes of (nests of) lazy vs eager results."""
    lz, eg = tf.nest.flatten(lazy_out), tf.nest.flatten(eager_out)
    assert len(lz) == len(eg)
    for a, b in zip(lz, eg, strict=True):
        if b is None or isinstance(b, bool | int | float):
            assert a == b
            continue
        assert ltf.is_lazy(a), f"expected a lazy result, got {type(a).__name__}"
        assert a.dtype == b.dtype, f"dtype {a.dtype.name} != {b.dtype.name}"
        assert a.shape.as_list() == b.shape.as_list()
        np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=rtol,
                                   atol=atol, equal_nan=True)


def lazy_and_eager_keras(program):
    """``program()`` on lazy Keras (with its counters), then in eager Keras."""
    lc.metrics.reset()
    ltf.keras.enable()
    try:
        lazy_out = program()
        counters = dict(lc.metrics.counters())
    finally:
        ltf.keras.disable()
    return lazy_out, program(), counters
