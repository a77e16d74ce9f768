"""``tf.pad`` with ``REFLECT``/``SYMMETRIC`` (CycleGAN/style-transfer ``ReflectionPadding2D``
layers) stays in the trace: values, gradients under a tape and TF's own errors, against
eager TensorFlow."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

X = np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3) / 7


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC", "reflect"])
@pytest.mark.parametrize("pads", [[[0, 0], [1, 2], [3, 3], [0, 0]], [[1, 0], [3, 0], [0, 4], [0, 1]]])
def test_mirror_padding_matches_eager(mode, pads):
    if mode.upper() == "REFLECT" and max(max(p) for p in pads) > 3:
        pads = [[min(lo, 3), min(hi, 3)] for lo, hi in pads]
    before = lc.metrics.counters().get("fallbacks", 0)
    results = []
    for variable, tape_type in ((tf.Variable, tf.GradientTape), (ltf.Variable, ltf.GradientTape)):
        v = variable(X)
        with tape_type() as tape:
            y = tf.pad(v, pads, mode=mode)
            loss = tf.reduce_sum(y * y * np.arange(y.shape[-1], dtype=np.float32))
        results.append((np.asarray(y), np.asarray(tf.convert_to_tensor(tape.gradient(loss, v)))))
    assert lc.metrics.counters().get("fallbacks", 0) == before
    (ye, ge), (yl, gl) = results
    np.testing.assert_array_equal(yl, ye)
    np.testing.assert_allclose(gl, ge, rtol=1e-6)


@pytest.mark.parametrize("mode, pads, error", [
    ("REFLECT", [[0, 0], [4, 0], [0, 0], [0, 0]], tf.errors.InvalidArgumentError),
    ("SYMMETRIC", [[0, 0], [5, 0], [0, 0], [0, 0]], tf.errors.InvalidArgumentError),
    ("WRAP", [[0, 0], [1, 0], [0, 0], [0, 0]], ValueError)])
def test_bad_mirror_padding_raises_tensorflows_error(mode, pads, error):
    with pytest.raises(error):
        tf.pad(tf.constant(X), pads, mode=mode)
    with pytest.raises(error):
        np.asarray(tf.pad(ltf.constant(X), pads, mode=mode))
