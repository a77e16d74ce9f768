"""TF's stateful random ops in a ``tf.function`` while lazy Keras is on, as the
convolutional VAE tutorial writes them: ``tf.random.normal(shape=mean.shape)`` in the
model's ``reparameterize``, called by a decorated train step (TensorFlow's graph path
runs it: the draw is TF's) and again eagerly for the test ELBO. Each run lazily and
again in eager Keras. Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

L = keras.layers
RNG = np.random.default_rng(11)
IMAGES = (RNG.uniform(size=(8, 8, 8, 1)) > 0.5).astype(np.float32)


def test_failed_capture_leaves_tf_random_stream_alone(metrics):
    """Was silently different: the capture attempt ran ``tf.random.normal`` eagerly
    before falling back, taking an op seed from TF's stream, so every later eager draw
    differed from eager TF's."""
    def program():
        v = keras.Variable(1.0)  # a lazy variable lives: tf.function calls try a capture
        tf.random.set_seed(3)
        f = tf.function(lambda x: tf.random.normal([2]) + x)
        return [f(tf.constant(1.0)), f(tf.constant(1.0)), tf.random.normal([2]),
                tf.random.uniform([3]), v.numpy()]

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    for a, b in zip(lazy_out, eager_out, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert counters["tf_function_fallback"] == 1


def test_seeded_tf_random_in_captured_function_is_tfs_kernel(metrics):
    """``tf.random.uniform/normal(seed=...)`` on host values inside a captured function:
    TF's stateful kernel's values (each call continues the function's own stream), no
    fallback to TF's graph (was: refused, so the whole step ran in TF's graph)."""
    def program():
        v = keras.Variable(1.0)
        tf.random.set_seed(3)
        f = tf.function(lambda x: (tf.random.uniform([5], seed=7) * x,
                                   tf.random.normal([2, 3], seed=1, dtype=tf.float64),
                                   tf.random.uniform([3], 2.0, 4.0, seed=2) + v))
        out = [*f(tf.constant(2.0)), *f(tf.constant(2.0)), *f(tf.constant(3.0))]
        return out + [tf.random.uniform([3], seed=7), tf.random.uniform([2])]

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    assert counters["tf_function_call"] == 3 and counters.get("tf_function_fallback", 0) == 0
    for a, b in zip(lazy_out, eager_out, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert len({np.asarray(a).tobytes() for a in lazy_out[:9:3]}) == 3  # a new draw per call


class CVAE(keras.Model):
    def __init__(self, latent_dim=2):
        super().__init__()
        self.encoder = keras.Sequential([
            keras.Input((8, 8, 1)), L.Conv2D(4, 3, strides=2, activation="relu"),
            L.Flatten(), L.Dense(2 * latent_dim)])
        self.decoder = keras.Sequential([
            keras.Input((latent_dim,)), L.Dense(4 * 4 * 4, activation="relu"),
            L.Reshape((4, 4, 4)),
            L.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu"),
            L.Conv2DTranspose(1, 3, strides=1, padding="same")])

    def encode(self, x):
        return tf.split(self.encoder(x), num_or_size_splits=2, axis=1)

    def reparameterize(self, mean, logvar):
        return tf.random.normal(shape=mean.shape) * tf.exp(logvar * 0.5) + mean


def _log_normal_pdf(sample, mean, logvar):
    return tf.reduce_sum(-0.5 * ((sample - mean) ** 2.0 * tf.exp(-logvar) + logvar +
                                 tf.math.log(2.0 * np.pi)), axis=1)


def _compute_loss(model, x):
    mean, logvar = model.encode(x)
    z = model.reparameterize(mean, logvar)
    cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=model.decoder(z), labels=x)
    logpx_z = -tf.reduce_sum(cross_ent, axis=[1, 2, 3])
    return -tf.reduce_mean(logpx_z + _log_normal_pdf(z, 0.0, 0.0) -
                           _log_normal_pdf(z, mean, logvar))


def test_cvae_tutorial_decorated_step_then_eager_elbo(metrics):
    def program():
        keras.utils.set_random_seed(12)
        model, optimizer = CVAE(), keras.optimizers.Adam(1e-3)

        @tf.function
        def train_step(x):
            with tf.GradientTape() as tape:
                loss = _compute_loss(model, x)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        tf.random.set_seed(13)
        elbos = []
        for _ in range(2):
            losses = [train_step(x) for x in tf.data.Dataset.from_tensor_slices(IMAGES).batch(4)]
            elbos.append(-keras.metrics.Mean()(_compute_loss(model, IMAGES)).numpy())
        return [np.asarray(v) for v in losses] + elbos + [v.numpy() for v in model.weights]

    lazy_out, eager_out, _ = lazy_and_eager_keras(program)
    for a, b in zip(lazy_out, eager_out, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
