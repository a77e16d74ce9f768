"""Keras training on lazy_tf against the same program in eager Keras: an MLP, a CNN with
BatchNormalization, an LSTM and a MultiHeadAttention model, trained with Keras's
cross-entropy losses through ``fit``/``train_on_batch``/``evaluate``/``predict`` and a
custom ``ltf.GradientTape`` loop. Tiny sizes, a few steps."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

RNG = np.random.default_rng(3)
CLASSES = 3


def _mlp():
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                             keras.layers.Dense(CLASSES)])


def _cnn():
    return keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(4, 3, padding="same"),
                             keras.layers.BatchNormalization(), keras.layers.ReLU(),
                             keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                             keras.layers.Dense(CLASSES)])


def _lstm():
    return keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(6),
                             keras.layers.Dense(CLASSES)])


def _attention():
    inputs = keras.Input((4, 8))
    h = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
    h = keras.layers.LayerNormalization()(h + inputs)
    outputs = keras.layers.Dense(CLASSES)(keras.layers.GlobalAveragePooling1D()(h))
    return keras.Model(inputs, outputs)


MODELS = {"mlp": (_mlp, (6,)), "cnn_bn": (_cnn, (6, 6, 2)), "lstm": (_lstm, (5, 3)),
          "mha": (_attention, (4, 8))}


def _data(shape, n=16):
    x = RNG.standard_normal((n, *shape)).astype(np.float32)
    return x, RNG.integers(0, CLASSES, n).astype(np.int32)


@pytest.fixture
def lazy_keras():
    ltf.keras.enable()
    yield
    ltf.keras.disable()


def _build(name, seed=0):
    keras.utils.set_random_seed(seed)
    return MODELS[name][0]()


def _fit_program(name, x, y, run_eagerly=True):
    model = _build(name)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    out = {"loss": history.history["loss"], "acc": history.history["accuracy"],
           "train_on_batch": model.train_on_batch(x[:8], y[:8]),
           "evaluate": model.evaluate(x, y, verbose=0, return_dict=True)["loss"],
           "predict": model.predict(x[:4], verbose=0)}
    out.update({f"w{i}": v.numpy() for i, v in enumerate(model.weights)})
    return out


def _assert_close(lazy_out: dict, eager_out: dict, rtol=2e-4, atol=2e-5):
    assert lazy_out.keys() == eager_out.keys()
    for k in lazy_out:
        np.testing.assert_allclose(np.asarray(lazy_out[k], np.float64),
                                   np.asarray(eager_out[k], np.float64),
                                   rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("name", list(MODELS))
def test_fit_matches_eager_keras(lazy_keras, metrics, name):
    x, y = _data(MODELS[name][1])
    lazy_out = _fit_program(name, x, y)
    traced = lc.metrics.counters().get("traced_ops", 0)
    ltf.keras.disable()
    eager_out = _fit_program(name, x, y)
    _assert_close(lazy_out, eager_out)
    assert traced > 0 and ltf.fallback_counts() == {}


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_fit_is_captured_and_matches_eager_keras(lazy_keras, metrics, name):
    """``run_eagerly=False``: the train and test steps are tf.functions that lazy_tf
    captures whole (one call node per step); the same losses, metrics and weights as
    eager Keras, and nothing falls back."""
    x, y = _data(MODELS[name][1])
    lazy_out = _fit_program(name, x, y, run_eagerly=False)
    counters = lc.metrics.counters()
    ltf.keras.disable()
    eager_out = _fit_program(name, x, y)
    _assert_close(lazy_out, eager_out)
    assert counters.get("tf_function_capture", 0) >= 2  # train step, test step
    assert counters.get("tf_function_fallback", 0) == 0
    assert ltf.fallback_counts() == {}


def _unbuilt_adam_fit(x, y):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(CLASSES)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    losses = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history["loss"]
    return {"loss": losses, **{f"w{i}": v.numpy() for i, v in enumerate(model.weights)}}


def test_model_without_input_builds_lazily_in_compiled_fit(lazy_keras, metrics):
    """A model with no ``Input`` (and Adam's slots) creates its variables inside the first
    compiled step: they are lazy, the step is captured, and training matches eager Keras."""
    x, y = _data((6,))
    lazy_out = _unbuilt_adam_fit(x, y)
    counters = lc.metrics.counters()
    ltf.keras.disable()
    _assert_close(lazy_out, _unbuilt_adam_fit(x, y))
    assert counters.get("tf_function_capture", 0) >= 1
    assert counters.get("tf_function_fallback", 0) == 0


def test_layer_built_inside_a_tf_function_holds_a_lazy_variable(lazy_keras):
    """TF's graph path (a ``tf.Tensor`` input) builds the layer in its trace: the initializer runs
    eagerly, as ``tf.Variable`` lifts it, and the variable is lazy."""
    keras.utils.set_random_seed(0)
    layer = keras.layers.Dense(3)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    out = tf.function(layer)(tf.constant(x))
    assert ltf.keras.lazy_value(layer.kernel) is not None
    np.testing.assert_allclose(np.asarray(out), x @ layer.kernel.numpy() + layer.bias.numpy(),
                               rtol=1e-5, atol=1e-6)


def _loop(name, x, y, lazy_mode, steps=3):
    model = _build(name)
    opt = keras.optimizers.SGD(0.05, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    conv = lazy if lazy_mode else tf.constant
    tape_cls = ltf.GradientTape if lazy_mode else tf.GradientTape
    losses = []
    for _ in range(steps):
        with tape_cls() as tape:
            loss = loss_fn(conv(y), model(conv(x), training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        losses.append(float(loss))
    return {"loss": losses, **{f"w{i}": v.numpy() for i, v in enumerate(model.weights)}}


@pytest.mark.parametrize("name", ["cnn_bn"])
def test_keras_loss_in_custom_loop_matches_eager(lazy_keras, metrics, name):
    x, y = _data(MODELS[name][1], n=8)
    lazy_out = _loop(name, x, y, True)
    ltf.keras.disable()
    _assert_close(lazy_out, _loop(name, x, y, False))
    assert ltf.fallback_counts() == {}


@pytest.mark.parametrize("loss", [
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    keras.losses.SparseCategoricalCrossentropy(from_logits=False),
    keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
    keras.losses.BinaryCrossentropy(from_logits=True),
], ids=["sparse_logits", "sparse_probs", "categorical", "binary"])
def test_keras_losses_differentiate_lazily(loss, metrics):
    logits = RNG.standard_normal((4, CLASSES)).astype(np.float32)
    labels = np.array([0, 2, 1, 2], np.int32)
    if isinstance(loss, keras.losses.CategoricalCrossentropy):
        labels = np.eye(CLASSES, dtype=np.float32)[labels]
    elif isinstance(loss, keras.losses.BinaryCrossentropy):
        labels = (logits > 0).astype(np.float32)
    probs = not getattr(loss, "_fn_kwargs", {}).get("from_logits", True)

    def run(tape_cls, conv):
        w = conv(np.ones((CLASSES, CLASSES), np.float32))
        with tape_cls() as tape:
            tape.watch(w)
            pred = conv(logits) @ w
            value = loss(conv(labels), tf.nn.softmax(pred) if probs else pred)
        return value, tape.gradient(value, w)

    lazy_value, lazy_grad = run(ltf.GradientTape, lazy)
    eager_value, eager_grad = run(tf.GradientTape, tf.constant)
    assert ltf.is_lazy(lazy_value) and ltf.is_lazy(lazy_grad)
    np.testing.assert_allclose(lazy_value.numpy(), eager_value.numpy(), rtol=1e-5)
    np.testing.assert_allclose(lazy_grad.numpy(), eager_grad.numpy(), rtol=1e-4, atol=1e-6)
    assert ltf.fallback_counts() == {}
