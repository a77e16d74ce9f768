"""The autoencoder tutorials' subclassed models (``tf.keras.Model`` holding an encoder
``Sequential`` that starts with ``Input`` and a decoder ``Sequential`` without one),
trained with ``fit`` on ``tf.clip_by_value``-ed noisy images, run on lazy Keras and
again in eager Keras: the same histories, weights and predictions, and the compiled
step captured (no fallback). Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

L = keras.layers
RNG = np.random.default_rng(21)
IMAGES = RNG.uniform(size=(16, 8, 8, 1)).astype(np.float32)
NOISY = np.clip(IMAGES + 0.2 * RNG.standard_normal(IMAGES.shape).astype(np.float32), 0, 1)


class Denoise(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([
            L.Input(shape=(8, 8, 1)),
            L.Conv2D(4, (3, 3), activation="relu", padding="same", strides=2)])
        self.decoder = keras.Sequential([
            L.Conv2DTranspose(4, kernel_size=3, strides=2, activation="relu", padding="same"),
            L.Conv2D(1, kernel_size=(3, 3), activation="sigmoid", padding="same")])

    def call(self, x):
        return self.decoder(self.encoder(x))


def test_denoising_autoencoder_builds_its_decoder_inside_the_captured_step(metrics):
    """Was a fallback to TensorFlow's graph for the whole step (and, when the failed
    trace's values outlived it, a CaptureError at the next step barrier): Keras builds
    the decoder in a scratch graph inside the captured step, whose variable shadows
    needed the values of variables that were capture placeholders."""
    def program():
        keras.utils.set_random_seed(22)
        model = Denoise()
        model.compile(optimizer="adam", loss=keras.losses.MeanSquaredError())
        noisy = tf.clip_by_value(tf.constant(NOISY), clip_value_min=0.0, clip_value_max=1.0)
        history = model.fit(noisy, IMAGES, epochs=2, batch_size=8, shuffle=False,
                            validation_data=(noisy[:4], IMAGES[:4]), verbose=0)
        encoded = model.encoder(noisy[:4]).numpy()
        return (history.history, encoded, model.decoder(encoded).numpy(),
                [v.numpy() for v in model.weights])

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    # atol: Adam divides a near-zero gradient (a Conv2DTranspose bias) by its own size,
    # which turns summation-order differences of 1e-9 into 4e-5 (a step is 1e-3)
    for a, b in zip(tf.nest.flatten(lazy_out), tf.nest.flatten(eager_out), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=1e-4)
    assert counters.get("tf_function_fallback", 0) == 0 and ltf.fallback_counts() == {}
