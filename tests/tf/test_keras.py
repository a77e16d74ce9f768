"""Keras 3 (TensorFlow backend) on lazy_tf, against the same Keras program run eagerly."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.eager import backprop  # noqa: E402
from tf_helpers import assert_same, lazy  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 3)).astype(np.float32)
Y = RNG.standard_normal((16, 1)).astype(np.float32)


@pytest.fixture
def lazy_keras():
    ltf.keras.enable()
    yield
    ltf.keras.disable()


def _mlp(seed=1):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="relu"),
                             keras.layers.LayerNormalization(), keras.layers.Dense(1)])


def test_keras_ops_on_lazy_inputs_are_traced(metrics):
    a, b = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 2)).astype(
        np.float32)
    for op in (lambda x, y: keras.ops.matmul(x, y), lambda x, y: keras.ops.einsum("ij,jk", x, y),
               lambda x, y: keras.ops.softmax(x @ y), lambda x, y: keras.ops.mean(x, axis=0)):
        assert_same(op(lazy(a), lazy(b)), op(tf.constant(a), tf.constant(b)))
    assert ltf.fallback_counts() == {}


@pytest.mark.parametrize("make,shape,training", [
    (lambda: keras.Sequential([keras.Input((8, 8, 2)), keras.layers.Conv2D(3, 3, padding="same",
                                                                           activation="relu"),
                               keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                               keras.layers.Dense(2)]), (2, 8, 8, 2), False),
    (lambda: keras.Sequential([keras.Input((5,)), keras.layers.Dense(4),
                               keras.layers.BatchNormalization()]), (6, 5), True),
    (lambda: keras.Sequential([keras.Input((4, 3)), keras.layers.LSTM(5),
                               keras.layers.Dense(1)]), (2, 4, 3), False),
    (lambda: keras.Sequential([keras.Input((3, 3, 2)),  # a DCGAN generator's upsampling
                               keras.layers.Conv2DTranspose(3, 5, strides=2, padding="same"),
                               keras.layers.Conv2DTranspose(1, 3, strides=2)]), (2, 3, 3, 2), False),
    (lambda: keras.Sequential([keras.Input((5, 2)), keras.layers.Conv1DTranspose(3, 3, strides=2)]),
     (2, 5, 2), False),
    (lambda: keras.Sequential([keras.Input((3, 3, 2)), keras.layers.UpSampling2D(2),
                               keras.layers.Flatten(), keras.layers.RepeatVector(2)]),
     (2, 3, 3, 2), False),
    (lambda: keras.Sequential([keras.Input((5, 5, 3)), keras.layers.SeparableConv2D(4, 3)]),
     (2, 5, 5, 3), False),
])
def test_layers_run_lazily(lazy_keras, metrics, make, shape, training):
    keras.utils.set_random_seed(0)
    model = make()
    x = RNG.standard_normal(shape).astype(np.float32)
    out = model(lazy(x), training=training)
    assert ltf.is_lazy(out)
    assert ltf.fallback_counts() == {}
    np.testing.assert_allclose(out.numpy(), model(tf.constant(x), training=training).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_multi_head_attention_runs_lazily(lazy_keras, metrics):
    keras.utils.set_random_seed(0)
    mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    x = RNG.standard_normal((2, 4, 8)).astype(np.float32)
    out = mha(lazy(x), lazy(x))
    assert ltf.is_lazy(out) and ltf.fallback_counts() == {}
    np.testing.assert_allclose(out.numpy(), mha(x, x).numpy(), rtol=1e-5, atol=1e-6)


def _custom_loop(lazy_mode, steps=3):
    model = _mlp()
    opt, loss_fn = keras.optimizers.Adam(0.01), keras.losses.MeanSquaredError()
    conv = ltf.convert_to_tensor if lazy_mode else tf.convert_to_tensor
    tape_cls = ltf.GradientTape if lazy_mode else tf.GradientTape
    losses, compiles = [], []
    for _ in range(steps):
        with tape_cls() as tape:
            loss = loss_fn(conv(Y), model(conv(X)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        losses.append(float(loss))
        compiles.append(lc.metrics.counters().get("compiles", 0))
    return losses, [v.numpy() for v in model.trainable_variables], compiles


def test_custom_training_loop_matches_eager_keras(lazy_keras, metrics):
    previous = lc.settings.tier
    lc.configure(tier="compile")
    try:
        lazy_losses, lazy_weights, compiles = _custom_loop(True)
    finally:
        lc.configure(tier=previous)
    ltf.keras.disable()
    eager_losses, eager_weights, _ = _custom_loop(False)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-5)
    for a, b in zip(lazy_weights, eager_weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert compiles[-1] == compiles[0]  # the optimizer's slots (made in step 1) recompile nothing
    assert ltf.fallback_counts() == {}


def _fit(run_eagerly):
    model = _mlp()
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", run_eagerly=run_eagerly,
                  jit_compile=False)
    history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return (history.history["loss"], model.evaluate(X, Y, verbose=0),
            model.predict(X[:4], verbose=0), model.train_on_batch(X[:8], Y[:8]))


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_fit_evaluate_predict_match_eager_keras(lazy_keras, metrics, run_eagerly):
    lazy_out = _fit(run_eagerly)
    ltf.keras.disable()
    eager_out = _fit(run_eagerly)
    for a, b in zip(lazy_out, eager_out, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert ltf.fallback_counts() == {}
    if run_eagerly:  # the steps were traced and compiled by lazycore
        assert lc.metrics.counters().get("traced_ops", 0) > 0


def test_tape_watches_lazy_keras_variables(lazy_keras):
    v = keras.Variable([1.0, 2.0])
    assert ltf.is_lazy(v.value)
    with ltf.GradientTape() as tape:
        y = tf.reduce_sum(keras.ops.square(v) * 3.0)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [6.0, 12.0])


def test_tape_differentiates_keras_variables_holding_tf_variables():
    """A Keras variable made before ``ltf.keras.enable()`` holds a ``tf.Variable``: its
    gradient through a lazy graph is eager TF's (TF's tape carries it; it was a
    ``ValueError`` naming ``ltf.keras.enable``)."""
    v = keras.Variable([1.0, 2.0])  # lazy Keras variables are not enabled
    with ltf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sin(v * lazy([3.0, -1.0])))
    with tf.GradientTape() as eager_tape:
        want = eager_tape.gradient(tf.reduce_sum(tf.sin(v * tf.constant([3.0, -1.0]))), v)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, v)), want.numpy(), rtol=1e-6)


def test_plain_keras_is_untouched_after_disable(lazy_keras, metrics):
    ltf.keras.disable()
    model = _mlp()
    assert type(model(tf.constant(X))).__name__ == "EagerTensor"
    assert lc.metrics.counters().get("traced_ops", 0) == 0


def _plain_tf_gradients(tape_cls):
    x, v = tf.constant([1.0, 2.0, 3.0]), tf.Variable([0.5, -1.0, 2.0])
    with tape_cls(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x * v)
        with tape.stop_recording():
            z = x * 3.0
        w = tf.reduce_sum(z * v)  # z is a constant: w does not depend on x
        product = x * v
    watched = sorted(t.name for t in tape.watched_variables())
    return (tape.gradient(y, [x, v]), tape.gradient(w, x), tape.jacobian(product, x), watched)


def test_plain_tf_gradient_code_still_works_while_lazy_keras_is_enabled(lazy_keras):
    """``enable()`` makes ``tf.GradientTape`` lazy_tf's tape; code on eager tensors and
    ``tf.Variable``s keeps TF's answers (TF's own tape records beside it)."""
    assert tf.GradientTape is ltf.GradientTape
    got = _plain_tf_gradients(tf.GradientTape)
    expected = _plain_tf_gradients(backprop.GradientTape)
    assert got[1] is None and expected[1] is None
    for g, e in zip([*got[0], got[2]], [*expected[0], expected[2]], strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e))
    assert got[3] == expected[3]
