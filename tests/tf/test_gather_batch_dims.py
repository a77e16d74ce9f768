"""``tf.gather`` with ``batch_dims`` (a DQN's ``gather(q, actions, batch_dims=1)``,
``keras.ops.take_along_axis`` on the TensorFlow backend) stays in the trace: values,
gradients under a tape and TF's own errors, against eager TensorFlow."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

CASES = [((4, 5), (4, 3), 1, None), ((4, 5, 6), (4, 2), 1, 1), ((2, 3, 5, 6), (2, 3, 4), 2, 2),
         ((2, 3, 5, 6), (2, 4, 2), 1, 2), ((3, 5, 2), (3, 7), -1, 1), ((2, 3, 5), (2, 3), 2, None)]


def _run(variable, tape_type, p, fn):
    v = variable(p)
    with tape_type() as tape:
        y = fn(v)
        loss = tf.reduce_sum(y * y)
    return np.asarray(y), np.asarray(tf.convert_to_tensor(tape.gradient(loss, v)))


@pytest.mark.parametrize("params_shape, indices_shape, batch_dims, axis", CASES)
def test_gather_with_batch_dims_matches_eager(params_shape, indices_shape, batch_dims, axis):
    rng = np.random.default_rng(0)
    p = rng.standard_normal(params_shape).astype(np.float32)
    at = (batch_dims % len(indices_shape)) if axis is None else axis
    i = rng.integers(0, params_shape[at], indices_shape).astype(np.int32)
    before = lc.metrics.counters().get("fallbacks", 0)
    fn = lambda v: tf.gather(v, i, batch_dims=batch_dims, axis=axis)  # noqa: E731
    (ye, ge), (yl, gl) = (_run(tf.Variable, tf.GradientTape, p, fn),
                          _run(ltf.Variable, ltf.GradientTape, p, fn))
    assert lc.metrics.counters().get("fallbacks", 0) == before
    np.testing.assert_array_equal(yl, ye)
    np.testing.assert_allclose(gl, ge, rtol=1e-6)


def test_keras_take_along_axis_under_a_tape_matches_eager():
    p = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.array([[[0], [3], [1], [2]]] * 3, np.int32)
    fn = lambda v: keras.ops.take_along_axis(v * 1.0, idx, axis=2)  # noqa: E731
    (ye, ge), (yl, gl) = (_run(tf.Variable, tf.GradientTape, p, fn),
                          _run(ltf.Variable, ltf.GradientTape, p, fn))
    np.testing.assert_array_equal(yl, ye)
    np.testing.assert_allclose(gl, ge, rtol=1e-6)


@pytest.mark.parametrize("indices, kw", [(np.zeros((2, 3), np.int32), {"batch_dims": 2, "axis": 1}),
                                         (np.full((2, 3), 9, np.int32), {"batch_dims": 1})])
def test_bad_batch_gathers_raise_tensorflows_error(indices, kw):
    p = np.ones((2, 3, 4), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.gather(tf.constant(p), indices, **kw)
    with pytest.raises(tf.errors.InvalidArgumentError):
        np.asarray(tf.gather(ltf.constant(p), ltf.constant(indices), **kw))


def test_set_shape_checks_like_an_eager_tensor():
    for make in (tf.constant, ltf.constant):
        t = make(np.ones((2, 3), np.float32))
        t.set_shape((2, None))
        with pytest.raises(ValueError, match="not compatible"):
            t.set_shape((3, 3))
