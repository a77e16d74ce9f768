"""Keras programs as users write them (a model's own ``train_step``, custom loops with
``tf.GradientTape``, a masked bidirectional RNN, callbacks, ``tf.data``), each run on
lazy Keras and again in eager Keras: the same histories, weights and predictions, and
no silent fallback to TensorFlow. The first three found bugs. Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras as _lazy_and_eager  # noqa: E402

import lazy_tf as ltf  # noqa: E402

L = keras.layers
RNG = np.random.default_rng(5)
X = RNG.standard_normal((20, 6)).astype(np.float32)
Y = X[:, :3].argmax(1).astype(np.int64)
TOKENS = RNG.integers(1, 20, (8, 5))
TOKENS[:3, 3:] = 0  # padding: masked steps
LOGITS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _weights(model):
    return [v.numpy() for v in model.weights]


def _assert_close(lazy_out, eager_out, rtol=2e-4, atol=2e-5):
    flat_lazy, flat_eager = tf.nest.flatten(lazy_out), tf.nest.flatten(eager_out)
    assert len(flat_lazy) == len(flat_eager)
    for a, b in zip(flat_lazy, flat_eager, strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                   rtol=rtol, atol=atol)


def _no_fallback(counters):
    assert counters.get("tf_function_fallback", 0) == 0
    assert ltf.fallback_counts() == {}


class OwnStep(keras.Model):
    """A subclassed model without ``Input`` whose ``train_step`` writes ``tf.GradientTape``."""

    def __init__(self):
        super().__init__()
        self.hidden, self.out = L.Dense(8, activation="relu"), L.Dense(3)
        self.tracker = keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = LOGITS(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables, strict=True))
        self.tracker.update_state(loss)
        return {"loss": self.tracker.result()}

    @property
    def metrics(self):
        return [self.tracker]


def test_own_train_step_with_tf_gradient_tape(metrics):
    """Was: 'LazyTensor is not supported as a gradient source' (``tf.GradientTape``), and
    the compiled step built the model in Keras's scratch graph on the capture's
    placeholder input, fell back, and failed the next sync."""
    def program():
        keras.utils.set_random_seed(1)
        model = OwnStep()
        model.compile(optimizer=keras.optimizers.Adam(0.01))
        history = model.fit(X, Y, epochs=2, batch_size=10, verbose=0, shuffle=False)
        return history.history["loss"], _weights(model), model.predict(X[:3], verbose=0)

    lazy_out, eager_out, counters = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)


@pytest.mark.parametrize("decorated", [False, True])
def test_custom_loop_with_tf_gradient_tape(metrics, decorated):
    """The tutorials' loop: ``tf.GradientTape``, a Keras optimizer with a schedule, a
    metric; eager or under ``tf.function``."""
    def program():
        keras.utils.set_random_seed(2)
        model = keras.Sequential([L.Dense(8, activation="relu"), L.Dense(3)])
        opt = keras.optimizers.RMSprop(keras.optimizers.schedules.ExponentialDecay(0.02, 2, 0.5))
        acc = keras.metrics.SparseCategoricalAccuracy()

        def step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = LOGITS(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            acc.update_state(y, logits)
            return loss

        step = tf.function(step) if decorated else step
        data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(10)
        losses = [float(step(x, y)) for _ in range(2) for x, y in data]
        return losses, float(acc.result()), _weights(model)

    lazy_out, eager_out, counters = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)


def _square_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return float(tape.gradient(y, x))


def test_tf_gradient_tape_is_lazy_while_enabled_and_still_differentiates_eager_tensors():
    ltf.keras.enable()
    try:
        assert tf.GradientTape is ltf.GradientTape
        assert _square_gradient() == 6.0
    finally:
        ltf.keras.disable()
    assert tf.GradientTape is not ltf.GradientTape and _square_gradient() == 6.0


def test_masked_bidirectional_rnn(metrics):
    """Was silently wrong: Keras's unrolled loop (taken for masks) zeroed the backward
    layer's outputs by the unreversed mask; Keras's own while loop reverses it."""
    def program():
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.Input((5,), dtype="int32"),
                                  L.Embedding(20, 4, mask_zero=True),
                                  L.Bidirectional(L.LSTM(3, return_sequences=True))])
        return model(TOKENS)

    lazy_out, eager_out, _ = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)


def test_mlp_with_callbacks_checkpoint_and_class_weight(metrics, tmp_path):
    """``validation_split``, EarlyStopping/ReduceLROnPlateau/ModelCheckpoint, a
    ``.keras`` file loaded back, ``class_weight``, Dropout."""
    def program():
        keras.utils.set_random_seed(4)
        path = str(tmp_path / f"best_{ltf.keras.is_enabled()}.keras")
        model = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="relu"),
                                  L.Dropout(0.2), L.Dense(3)])
        model.compile("adam", LOGITS, metrics=["accuracy"])
        callbacks = [keras.callbacks.EarlyStopping(patience=1, restore_best_weights=True),
                     keras.callbacks.ReduceLROnPlateau(factor=0.5, patience=0, min_delta=9.0),
                     keras.callbacks.ModelCheckpoint(path, save_best_only=True)]
        history = model.fit(X, Y, epochs=2, batch_size=8, validation_split=0.2, verbose=0,
                            callbacks=callbacks, class_weight={0: 1.0, 1: 2.0, 2: 0.5})
        return (history.history, float(model.optimizer.learning_rate.numpy()),
                _weights(model), _weights(keras.models.load_model(path)))

    lazy_out, eager_out, counters = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)


def test_tf_data_with_steps_per_execution(metrics):
    def program():
        keras.utils.set_random_seed(5)
        model = keras.Sequential([keras.Input((6,)), L.Dense(3)])
        model.compile(keras.optimizers.AdamW(keras.optimizers.schedules.CosineDecay(0.01, 4)),
                      LOGITS, metrics=["accuracy"], steps_per_execution=2)
        history = model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(10), epochs=2,
                            verbose=0)
        return history.history, _weights(model)

    lazy_out, eager_out, counters = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)


def test_embedding_under_global_clipnorm_in_compiled_fit(metrics):
    """Was a fallback: Keras's clipping multiplies the Embedding's ``IndexedSlices``
    gradient by a scale; TF converted it to a dense lazy tensor, then read its value."""
    def program():
        keras.utils.set_random_seed(6)
        model = keras.Sequential([keras.Input((5,), dtype="int32"), L.Embedding(20, 4),
                                  L.GlobalAveragePooling1D(), L.Dense(1)])
        model.compile(keras.optimizers.Adam(0.01, global_clipnorm=0.1), "mse")
        y = TOKENS[:, :1].astype(np.float32)
        history = model.fit(TOKENS, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
        return history.history["loss"], _weights(model)

    lazy_out, eager_out, counters = _lazy_and_eager(program)
    _assert_close(lazy_out, eager_out)
    _no_fallback(counters)
