"""More programs in the style of published Keras/TF code (keras.io examples, TF
tutorials), each run on lazy Keras and again in eager Keras: the same losses,
gradients, weights and predictions, and no silent fallback. Each test names the bug it
found. Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

L, K = keras.layers, keras.ops
RNG = np.random.default_rng(16)
W0 = RNG.standard_normal((3, 4)).astype(np.float32)


def _assert_close(lazy_out, eager_out, rtol=2e-4, atol=2e-5):
    flat_lazy, flat_eager = tf.nest.flatten(lazy_out), tf.nest.flatten(eager_out)
    assert len(flat_lazy) == len(flat_eager)
    for a, b in zip(flat_lazy, flat_eager, strict=True):
        assert (a is None) == (b is None), "a gradient is None on one side only"
        if b is not None:
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                       rtol=rtol, atol=atol)


def _no_fallback(counters):
    assert counters.get("tf_function_fallback", 0) == 0
    assert ltf.fallback_counts() == {}


def test_values_read_inside_the_tape_keep_their_gradient(metrics):
    """Was: a value the tape made, read on the host (``float(...)``, or a sync from a
    data-dependent op such as ``keras.ops.take_along_axis``'s reshape to
    ``tf.shape(x)[-1]``) and used again after: the gradient through the later use was
    lost (``None``, or only the part before the read: [2, 4] for eager's [4, 8])."""
    def program():
        w = keras.Variable(W0)
        with tf.GradientTape() as outer:
            h = w * 2.0
            with tf.GradientTape() as inner:
                float(tf.reduce_sum(h))  # a read: a barrier inside both tapes
                y = tf.reduce_sum(h * w)  # h: made before ``inner``, a constant to it
            ranked = K.take_along_axis(h, K.argsort(h, axis=-1), axis=-1)
            loss = tf.reduce_sum(ranked * np.arange(12.0, dtype=np.float32).reshape(3, 4)) + y
        return inner.gradient(y, w), outer.gradient(loss, w)

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)

