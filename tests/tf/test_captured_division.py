"""A quotient inside a captured ``tf.function`` is rounded once, as eager TF divides:
captured bodies run through ``lazycore.ops.registry.interpret``, where XLA would
otherwise turn ``v / s`` (a scalar divisor, broadcast) into ``v * (1 / s)``, one ulp off
on about a third of the elements (``tests/core/test_division_rounding.py``: the rule)."""

import numpy as np
import tensorflow as tf

import lazy_tf as ltf


def test_captured_quotient_by_a_scalar_is_eagers():
    x = (np.random.RandomState(0).randn(2000) * 10).astype(np.float32)

    @tf.function
    def third(v, s):
        return v / s

    want = third(tf.constant(x), tf.constant(np.float32(3))).numpy()
    for _ in range(3):  # traced once, then the captured program
        got = third(ltf.constant(x), ltf.constant(np.float32(3)))
        np.testing.assert_array_equal(got.numpy(), want)
