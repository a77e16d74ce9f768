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


class LogSpectrogram(L.Layer):
    """An in-model feature layer, as audio examples write it."""

    def call(self, waves):
        frames = tf.signal.stft(waves, frame_length=32, frame_step=16, pad_end=True)
        return tf.math.log(tf.abs(frames) + 1e-3)


def test_audio_model_with_spectrogram_layers(metrics):
    """Was: ``tf.signal.stft`` (also behind Keras's ``ops.stft`` and ``MelSpectrogram``)
    had no lazy implementation: it ran eagerly on copies, so the compiled ``fit`` and
    ``predict`` steps fell back to TensorFlow's graph, and under a tape it raised."""
    def program():
        keras.utils.set_random_seed(3)
        waves = np.random.default_rng(3).standard_normal((6, 96)).astype(np.float32)
        labels = np.arange(6) % 2
        inputs = keras.Input((96,))
        learned = L.Dense(96)(inputs)
        mel = L.MelSpectrogram(fft_length=32, sequence_stride=16, sequence_length=32,
                               num_mel_bins=8, sampling_rate=8000)(learned)
        spec = L.Conv1D(4, 3, padding="causal", activation="relu")(LogSpectrogram()(learned))
        merged = L.Concatenate()([L.GlobalAveragePooling1D()(mel),
                                  L.GlobalAveragePooling1D()(spec)])
        model = keras.Model(inputs, L.Dense(2)(merged))
        model.compile(keras.optimizers.Adam(0.01),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(waves, labels, epochs=2, batch_size=3, verbose=0, shuffle=False)
        frames = tf.signal.frame(waves[:2], 20, 7, pad_end=True, pad_value=1.0, axis=-1)
        return (history.history["loss"], [v.numpy() for v in model.weights],
                model.predict(waves, verbose=0), frames * 1.0)

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    _assert_close(lazy_out, eager_out, rtol=1e-3, atol=1e-3)
    _no_fallback(counters)
