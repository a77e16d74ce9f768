"""Keras's recurrent layers on lazy values run as ONE loop node (``lazy_tf._keras_rnn``)
and equal eager Keras: outputs, final states and gradients under ``ltf.GradientTape``
and inside a captured ``tf.function``, and ``train_on_batch`` losses; masks keep Keras's
unrolled path. Tiny sizes."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402
from lazy_tf import _keras_rnn  # noqa: E402

X = np.random.default_rng(5).standard_normal((2, 4, 3)).astype(np.float32)
KINDS = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "rnn": keras.layers.SimpleRNN}
OPTIONS = {"last": {}, "sequences": {"return_sequences": True},
           "backwards": {"go_backwards": True, "return_sequences": True}}


@pytest.fixture
def lazy_keras():
    ltf.keras.enable()
    _keras_rnn.install()
    yield
    ltf.keras.disable()


def _model(kind, options, **layer_kwargs):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((4, 3))
    outs = KINDS[kind](5, return_state=True, **options, **layer_kwargs)(inputs)
    return keras.Model(inputs, outs)


def _loss(outs):
    return tf.add_n([tf.reduce_sum(o * o) for o in tf.nest.flatten(outs)])


def _eager(kind, options, **layer_kwargs):
    """Eager Keras on TF variables: (outputs, gradients)."""
    ltf.keras.disable()
    try:
        model = _model(kind, options, **layer_kwargs)
        with tf.GradientTape() as tape:
            outs = model(X)
            loss = _loss(outs)
        return outs, tape.gradient(loss, model.trainable_variables)
    finally:
        ltf.keras.enable()


def _close(lazy, eager):
    for a, b in zip(tf.nest.flatten(lazy), tf.nest.flatten(eager), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_layer_and_gradients_under_tape_are_one_scan(lazy_keras, metrics, kind, options):
    model = _model(kind, OPTIONS[options])
    with ltf.GradientTape() as tape:
        outs = model(ltf.convert_to_tensor(X))
        loss = _loss(outs)
    grads = tape.gradient(loss, model.trainable_variables)
    assert lc.metrics.counters().get("keras_rnn_scan") == 1
    eager_outs, eager_grads = _eager(kind, OPTIONS[options])
    _close(outs, eager_outs)
    assert all(g is not None for g in grads)
    _close(grads, eager_grads)


@pytest.mark.parametrize("kind", list(KINDS))
def test_captured_step_is_one_scan(lazy_keras, metrics, kind):
    """The recurrent layer inside a ``tf.function`` captured whole: the same loss and
    gradients as eager, over two calls, with no fallback to TF's graph."""
    model = _model(kind, OPTIONS["sequences"])

    @tf.function
    def step(x):
        with ltf.GradientTape() as tape:
            loss = _loss(model(x))
        return loss, tape.gradient(loss, model.trainable_variables)

    x = ltf.convert_to_tensor(X)
    first, second = step(x), step(x)
    counters = lc.metrics.counters()
    assert counters.get("keras_rnn_scan") == 1 and counters.get("tf_function_capture") == 1
    assert counters.get("tf_function_fallback", 0) == 0
    eager_outs, eager_grads = _eager(kind, OPTIONS["sequences"])
    for loss, grads in (first, second):
        np.testing.assert_allclose(float(loss), float(_loss(eager_outs)), rtol=1e-5)
        _close(grads, eager_grads)


def _train_on_batch_losses(steps=3):
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((4, 3)), keras.layers.LSTM(6),
                              keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), run_eagerly=False,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    y = np.array([0, 2], np.int32)
    return [float(model.train_on_batch(X, y)) for _ in range(steps)]


def test_compiled_keras_training_matches_eager(lazy_keras, metrics):
    lazy_losses = _train_on_batch_losses()
    counters = lc.metrics.counters()
    assert counters.get("keras_rnn_scan", 0) >= 1 and counters.get("tf_function_capture")
    assert counters.get("tf_function_fallback", 0) == 0
    ltf.keras.disable()
    np.testing.assert_allclose(lazy_losses, _train_on_batch_losses(), rtol=2e-5)


@pytest.mark.parametrize("case", ["mask", "dropout"])
def test_masks_stay_unrolled_and_dropout_scans(lazy_keras, metrics, case):
    """A mask keeps Keras's unrolled path (still lazy); a cell with dropout runs as the
    scan (dropout is inactive at inference). Results equal eager."""
    kwargs = {"dropout": 0.5, "recurrent_dropout": 0.5} if case == "dropout" else {}
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool) if case == "mask" else None

    def run(model, x):
        return model.layers[-1](x, mask=mask) if mask is not None else model(x)

    model = _model("lstm", OPTIONS["sequences"], **kwargs)
    lazy_outs = run(model, ltf.convert_to_tensor(X))
    assert (lc.metrics.counters().get("keras_rnn_scan", 0) > 0) == (case == "dropout")
    ltf.keras.disable()
    eager_model = _model("lstm", OPTIONS["sequences"], **kwargs)
    ltf.keras.enable()
    _close(lazy_outs, run(eager_model, X))


class _NoisyCell(keras.layers.Layer):
    """A cell drawing fresh noise each step."""

    state_size = 3

    def call(self, x, states, draw=None):
        noise = draw((2, 3))
        return noise, [states[0] * 0.0 + noise]


@pytest.mark.parametrize("draw", ["tf", "ltf"])
def test_a_step_that_draws_stays_unrolled(lazy_keras, metrics, draw):
    """A loop would repeat one draw at every step: the unrolled path draws per step."""
    fn = tf.random.uniform if draw == "tf" else ltf.random.uniform
    layer = keras.layers.RNN(_NoisyCell(), return_sequences=True)
    layer.cell.call = lambda x, states, _call=layer.cell.call: _call(x, states, fn)
    out = np.asarray(layer(ltf.convert_to_tensor(X)))
    assert lc.metrics.counters().get("keras_rnn_scan", 0) == 0
    assert not np.allclose(out[:, 0], out[:, 1])
