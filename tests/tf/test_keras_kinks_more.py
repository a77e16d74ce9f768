"""Derivatives at kinks and ties, as eager TensorFlow takes them: relu'(0) = 0, abs'(0) = 0,
``maximum``/``minimum`` give a tie's whole derivative to their first operand (so
``clip_by_value`` passes it at its bounds), softplus'(0) = 1/2, ``xlogy``'s derivatives
where ``x == 0`` are 0. JAX's conventions (a tie split evenly, abs'(0) = 1) gave other
gradients silently: a VAE whose ``Conv2DTranspose`` met zeros (ReLU'd inputs, zero biases)
trained to other weights."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

X = np.array([-2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 6.0, 3.0], np.float32)
Z = np.array([0, 1, 0, 1, 1, 0, 1, 0], np.float32)
FUNCTIONS = {
    "relu": tf.nn.relu, "maximum": lambda x: tf.maximum(x, 0.0),
    "maximum_first_zero": lambda x: tf.maximum(0.0, x), "minimum": lambda x: tf.minimum(x, 0.0),
    "abs": tf.abs, "clip_by_value": lambda x: tf.clip_by_value(x, 0.0, 2.0),
    "softplus": tf.nn.softplus, "log_sigmoid": tf.math.log_sigmoid,
    "sigmoid_cross_entropy": lambda x: tf.nn.sigmoid_cross_entropy_with_logits(Z, x),
    "xlogy": lambda x: tf.math.xlogy(x, x * x),
    "keras_relu_max_value": lambda x: keras.activations.relu(x, max_value=2.0),
    "keras_mae": lambda x: keras.losses.mean_absolute_error(Z[:, None], x[:, None]),
    "keras_hinge": lambda x: keras.losses.hinge(Z[:, None], x[:, None]),
    "sqrt_abs": lambda x: tf.sqrt(tf.abs(x)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradient_at_kinks_equals_eager(name):
    fn = FUNCTIONS[name]
    results = []
    for tensor, tape_type in ((ltf.convert_to_tensor, ltf.GradientTape),
                              (tf.constant, tf.GradientTape)):
        x = tensor(X)
        with tape_type() as tape:
            tape.watch(x)
            y = fn(x)
        results.append((np.asarray(y), np.asarray(tape.gradient(y, x))))
    (lazy_y, lazy_dx), (eager_y, eager_dx) = results
    np.testing.assert_allclose(lazy_y, eager_y, rtol=1e-6)
    np.testing.assert_allclose(lazy_dx, eager_dx, rtol=1e-5, atol=1e-7, equal_nan=True)


def test_keras_step_through_exact_zeros_equals_eager():
    """Rows of zeros meet zero biases: every ReLU and the layer after it see exact zeros."""
    data = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    data[:4] = 0.0
    target = np.linspace(-1, 1, 8).astype(np.float32)[:, None]

    def program():
        keras.utils.set_random_seed(2)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"),
                                  keras.layers.Dense(6, activation="relu"), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(0.1), "mae")
        losses = [float(model.train_on_batch(data, target)) for _ in range(2)]
        return losses, [v.numpy() for v in model.weights]

    (lazy_losses, lazy_w), (eager_losses, eager_w), counters = lazy_and_eager_keras(program)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-6)
    for a, b in zip(lazy_w, eager_w, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert counters.get("tf_function_fallback", 0) == 0


def test_xdivy_gradients_where_x_is_zero_are_zero_as_tf():
    """``xdivy(0, 0)`` is 0 and so are its derivatives (TF's kernel); the quotient that
    the select drops must not send NaN back (0/0 in the vjp of the division)."""
    x0 = np.array([0.0, 0.0, 2.0, 0.0, 3.0], np.float32)
    y0 = np.array([0.0, 2.0, 4.0, np.inf, 0.0], np.float32)
    results = []
    for variable, tape_type in ((tf.Variable, tf.GradientTape), (ltf.Variable, ltf.GradientTape)):
        x, y = variable(x0), variable(y0)
        with tape_type() as tape:
            z = tf.reduce_sum(tf.math.xdivy(x, y))
        results.append([np.asarray(g) for g in tape.gradient(z, [x, y])])
    for eager, lazy in zip(*results, strict=True):
        np.testing.assert_array_equal(lazy, eager)
