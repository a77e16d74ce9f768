"""A ``tf.function`` whose whole-function capture fails (``lazy_tf._capture``) leaves
nothing behind: values its trace made on placeholders must not reach a later sync."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402


def test_failed_capture_leaves_nothing_for_the_next_sync():
    """A TF Keras LSTM step under ``tf.function`` (TF's path: its weights are
    ``tf.Variable``s) called again once ``ltf.Variable``s live is tried for capture and
    falls back; the failed trace's lazy values (kept in cycles by the raised errors'
    tracebacks) must not be synced by the next lazy computation."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3, 2)), keras.layers.LSTM(4)])
    x = tf.constant(np.ones((2, 3, 2), np.float32))

    @tf.function(jit_compile=True)
    def tf_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        return loss, tape.gradient(loss, model.trainable_variables)

    expected = float(tf_step(x)[0])
    live = ltf.Variable(np.ones((3,), np.float32))
    assert float(tf_step(x)[0]) == expected
    np.testing.assert_allclose(float(tf.reduce_sum(live * 2.0)), 6.0)
