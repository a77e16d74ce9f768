"""Eager values optimized through lazy models, as the TF tutorials write them: the
neural style transfer tutorial's ``image = tf.Variable(content_image)`` fed through a
lazy Keras feature extractor (after eager ops: ``image * 255``, a preprocessing
subtraction), ``tf.image.total_variation(image)`` added to the lazy loss, Adam's
``apply_gradients([(grad, image)])`` and ``image.assign(clip(image))``; and a watched
eager tensor that reaches a lazy model through eager ops. Each run lazily and again in
eager TF/Keras. Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

RNG = np.random.default_rng(7)
CONTENT = RNG.uniform(size=(1, 8, 8, 3)).astype(np.float32)
STYLE = RNG.uniform(size=(1, 8, 8, 3)).astype(np.float32)


def _gram(x):
    return tf.linalg.einsum("bijc,bijd->bcd", x, x) / tf.cast(tf.shape(x)[1] * tf.shape(x)[2],
                                                             tf.float32)


@pytest.mark.parametrize("decorated", [False, True])
def test_style_transfer_optimizes_an_eager_image_variable(metrics, decorated):
    """Was: ``ValueError: ltf.GradientTape cannot differentiate with respect to
    ResourceVariable`` (undecorated; decorated, the step runs on TF's graph path)."""
    def program():
        keras.utils.set_random_seed(8)
        inp = keras.Input((8, 8, 3))
        c1 = keras.layers.Conv2D(4, 3, activation="relu", padding="same")(inp)
        c2 = keras.layers.Conv2D(4, 3, activation="relu", strides=2)(c1)
        extractor = keras.Model(inp, [c1, c2])
        extractor.trainable = False

        def features(image):
            style, content = extractor(image * 255.0 - tf.constant([103.9, 116.8, 123.7]))
            return _gram(style), content

        style_target, content_target = features(STYLE)[0], features(CONTENT)[1]
        image = tf.Variable(CONTENT)
        opt = keras.optimizers.Adam(learning_rate=0.02, beta_1=0.99, epsilon=1e-1)

        def train_step(image):
            with tf.GradientTape() as tape:
                style, content = features(image)
                loss = tf.add_n([1e-6 * tf.reduce_mean((style - style_target) ** 2),
                                 1e-4 * tf.reduce_mean((content - content_target) ** 2)])
                loss += 0.1 * tf.image.total_variation(image)
            grad = tape.gradient(loss, image)
            opt.apply_gradients([(grad, image)])
            image.assign(tf.clip_by_value(image, 0.0, 1.0))
            return loss, grad

        step = tf.function(train_step) if decorated else train_step
        out = [step(image) for _ in range(3)]
        return [np.asarray(v) for pair in out for v in pair], image.numpy()

    (lazy_steps, lazy_image), (eager_steps, eager_image), _ = lazy_and_eager_keras(program)
    for a, b in zip(lazy_steps, eager_steps, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(lazy_image, eager_image, rtol=1e-5, atol=1e-6)
    assert not np.allclose(lazy_image, CONTENT)  # the steps moved it


@pytest.mark.parametrize("make", [ltf.Variable, tf.Variable])
def test_watched_eager_tensor_through_eager_ops_into_a_lazy_graph(make):
    """Was silently ``None``: the eager op's result entered the lazy graph as a
    constant. Now eager TF's gradient, summed with the watched tensor's direct use; a
    ``tf.Variable`` read by eager ops and by a lazy op directly gets eager's gradient
    too (was a ``ValueError``)."""
    x0, w0 = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 2))
    s0 = RNG.standard_normal((2, 2)).astype(np.float32)

    def grads(tape_class, w, s):
        x = tf.constant(x0)
        with tape_class() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.matmul(tf.tanh(x) * 3.0, w) ** 2 * s) + \
                tf.reduce_sum(x * w[:, 0]) + tf.reduce_sum(tf.matmul(s, tf.transpose(w)))
        return tape.gradient(loss, [x, w])

    got = grads(ltf.GradientTape, make(w0.astype(np.float32)), ltf.convert_to_tensor(s0))
    want = grads(tf.GradientTape, tf.Variable(w0.astype(np.float32)), tf.constant(s0))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-5)


def test_jacobian_through_eager_ops_raises_instead_of_none():
    """Was silently ``None``: ``jacobian`` does not carry rows through TF's tape."""
    v = tf.Variable([1.0, 2.0])
    with ltf.GradientTape() as tape:
        y = tf.tanh(v * 2.0) * ltf.convert_to_tensor([1.0, 3.0])
    with pytest.raises(NotImplementedError, match="jacobian with respect to eager values"):
        tape.jacobian(y, v)


def test_nested_and_side_by_side_tapes_share_eager_sources():
    """Each active tape must see the one handle an eager value got: the Hessian of a
    watched tensor (two nested tapes), and two tapes opened together (the DCGAN step)
    each differentiating a ``tf.Variable`` read through eager ops."""
    x, s = tf.constant([2.0, -1.0]), ltf.convert_to_tensor([3.0, 0.5])
    with ltf.GradientTape() as outer:
        outer.watch(x)
        with ltf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(s * x * x * x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(np.asarray(g), 3 * s.numpy() * x.numpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outer.gradient(g, x)), 6 * s.numpy() * x.numpy(),
                               rtol=1e-6)
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([0.5, -1.0])
    with ltf.GradientTape() as tape_a, ltf.GradientTape() as tape_b:
        y = tf.reduce_sum(tf.sin(a * 1.0) * s + b * b * s)
    ga, gb = tape_a.gradient(y, a), tape_b.gradient(y, b)
    np.testing.assert_allclose(np.asarray(ga), np.cos(a.numpy()) * s.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), 2 * b.numpy() * s.numpy(), rtol=1e-6)


def test_gradient_through_eager_ops_inside_another_tape_raises():
    """TF's tape would take the lazy part's gradient for a constant: a silently wrong
    second derivative."""
    x, s = tf.Variable(2.0), ltf.convert_to_tensor(3.0)
    with ltf.GradientTape():
        with ltf.GradientTape() as inner:
            y = (x * 1.0) ** 2 * s
        with pytest.raises(NotImplementedError, match="inside another GradientTape"):
            inner.gradient(y, x)
