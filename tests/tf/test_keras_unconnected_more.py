"""A source reached only through integer/bool values or piecewise-constant ops (argmax,
a comparison, a cast to int, floor/ceil/round) has no gradient: eager TF's
``tape.gradient`` is None there, and Keras's optimizers then skip the variable (or raise
"No gradients provided"). JAX's derivative is a zero: lazily the gradient was zeros, so
AdamW decayed a variable eager Keras leaves alone and an argmax model trained silently."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

X = np.array([[0.5, 1.5, 2.0], [3.0, -1.0, 0.0]], np.float32)
PATHS = {
    "argmax": lambda x: tf.cast(tf.argmax(x, 1), tf.float32),
    "cast_to_int": lambda x: tf.cast(tf.cast(x, tf.int32), tf.float32),
    "round": tf.round, "floor": tf.floor, "ceil": tf.math.ceil, "floordiv": lambda x: x // 1.0,
    "comparison": lambda x: tf.where(x > 1, 1.0, 0.0),
    "top_k_indices": lambda x: tf.cast(tf.math.top_k(x, 2).indices, tf.float32),
    "sign": tf.sign,  # TF's derivative is zeros here
    "round_plus_linear": lambda x: tf.round(x) + 2.0 * x,
}


@pytest.mark.parametrize("name", sorted(PATHS))
@pytest.mark.parametrize("zero", [False, True])
def test_gradient_through_steps_equals_eager(name, zero):
    unconnected = tf.UnconnectedGradients.ZERO if zero else tf.UnconnectedGradients.NONE
    grads = []
    for x, tape in ((ltf.convert_to_tensor(X), ltf.GradientTape()), (tf.constant(X), tf.GradientTape())):
        with tape:
            tape.watch(x)
            y = tf.reduce_sum(PATHS[name](x))
        g = tape.gradient(y, x, unconnected_gradients=unconnected)
        grads.append(None if g is None else np.asarray(g))
    lazy, eager = grads
    assert (lazy is None) == (eager is None), (lazy, eager)
    if eager is not None:
        np.testing.assert_array_equal(lazy, eager)


class Rounded(keras.layers.Layer):
    def build(self, shape):
        self.w = self.add_weight(shape=(shape[-1], 2), initializer="ones")
        self.b = self.add_weight(shape=(2,), initializer="ones")

    def call(self, x):
        return tf.matmul(x, tf.round(self.w)) + self.b


def test_keras_skips_a_variable_without_gradient_as_eager():
    data = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)

    def program():
        keras.utils.set_random_seed(1)
        model = keras.Sequential([keras.Input((3,)), Rounded()])
        model.compile(keras.optimizers.AdamW(0.1, weight_decay=0.5), "mse")
        for _ in range(2):
            model.train_on_batch(data, data[:, :2])
        return [v.numpy() for v in model.weights]

    with pytest.warns(UserWarning, match="Gradients do not exist"):
        lazy_w, eager_w, counters = lazy_and_eager_keras(program)
    for a, b in zip(lazy_w, eager_w, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert counters.get("tf_function_fallback", 0) == 0


def test_keras_argmax_model_raises_as_eager():
    def program():
        keras.utils.set_random_seed(1)
        inp = keras.Input((3,))
        out = keras.layers.Lambda(lambda t: tf.cast(tf.argmax(t, 1), tf.float32)[:, None])(
            keras.layers.Dense(4)(inp))
        model = keras.Model(inp, out)
        model.compile("adam", "mse")
        with pytest.raises(ValueError, match="No gradients provided") as info:
            model.train_on_batch(X, X[:, :1])
        return type(info.value)

    lazy, eager, _ = lazy_and_eager_keras(program)
    assert lazy is eager is ValueError
