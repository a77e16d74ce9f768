"""Optimizers fed the tape's ``tf.IndexedSlices`` (an embedding read through gathers with
repeated ids) against eager Keras: Keras optimizers' sparse paths (scatter updates,
slice-wise squares, gathers of slots) in a custom loop and in ``fit`` with and without
``run_eagerly``, and ``ltf.optimizers``. With repeated ids sparse and dense updates
differ (``test_embedding_optimizer.py`` shows it), so equal weights mean the sparse
rules were followed."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

IDS = np.array([[1, 1, 2], [3, 1, 1], [2, 2, 5], [7, 1, 3]], np.int32)
LABELS = np.array([0, 2, 1, 0], np.int32)

OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(0.05),
    "adamw": lambda: keras.optimizers.AdamW(0.05, weight_decay=0.1),
    "sgd_momentum": lambda: keras.optimizers.SGD(0.1, momentum=0.9),
    "rmsprop": lambda: keras.optimizers.RMSprop(0.01),
    "adagrad": lambda: keras.optimizers.Adagrad(0.1),
    "adam_clipnorm": lambda: keras.optimizers.Adam(0.05, clipnorm=0.01),
    "adam_global_clipnorm": lambda: keras.optimizers.Adam(0.05, global_clipnorm=0.01),
}


def _model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((3,), dtype="int32")
    h = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(12, 4)(inputs))
    return keras.Model(inputs, keras.layers.Dense(3)(h))


def _loop(lazy_mode, make_opt, steps=3):
    """A custom GradientTape loop; the embedding's gradient must be IndexedSlices."""
    (ltf.keras.enable if lazy_mode else ltf.keras.disable)()
    try:
        model, opt = _model(), make_opt()
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        conv = ltf.convert_to_tensor if lazy_mode else tf.constant
        tape_cls = ltf.GradientTape if lazy_mode else tf.GradientTape
        x, y = conv(IDS), conv(LABELS)
        losses = []
        for _ in range(steps):
            with tape_cls() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            assert isinstance(grads[0], tf.IndexedSlices)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            losses.append(loss)
        return [float(v) for v in losses], [np.asarray(v) for v in model.trainable_variables]
    finally:
        ltf.keras.disable()


def _fit(lazy_mode, make_opt, run_eagerly):
    (ltf.keras.enable if lazy_mode else ltf.keras.disable)()
    try:
        model = _model()
        model.compile(make_opt(), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      run_eagerly=run_eagerly)
        history = model.fit(np.tile(IDS, (2, 1)), np.tile(LABELS, 2), batch_size=4, epochs=2,
                            verbose=0, shuffle=False)
        return history.history["loss"], [np.asarray(v) for v in model.trainable_variables]
    finally:
        ltf.keras.disable()


def _assert_close(a, b):
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, err_msg="losses")
    for i, (wa, wb) in enumerate(zip(a[1], b[1], strict=True)):
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6, err_msg=f"weight {i}")


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_keras_optimizer_sparse_updates_match_eager(name):
    _assert_close(_loop(True, OPTIMIZERS[name]), _loop(False, OPTIMIZERS[name]))


@pytest.mark.parametrize("name", ["adam", "adam_clipnorm", "adam_global_clipnorm"])
def test_adam_updates_stay_lazy(name):
    """Keras's Adam on IndexedSlices, clipped or not: no eager fallback (densifying,
    ``tf.clip_by_norm`` and ``tf.reduce_sum`` of IndexedSlices stay lazy)."""
    before = dict(ltf.fallback_counts())
    _loop(True, OPTIMIZERS[name])
    assert ltf.fallback_counts() == before


@pytest.mark.parametrize("name, run_eagerly", [("adam", False), ("adam", True)])
def test_fit_matches_eager(name, run_eagerly):
    _assert_close(_fit(True, OPTIMIZERS[name], run_eagerly), _fit(False, OPTIMIZERS[name], False))


@pytest.mark.parametrize("name", ["rmsprop", "adagrad"])
def test_fit_sparse_divide_stays_captured(name):
    """RMSprop/Adagrad divide IndexedSlices by a dense tensor (Keras's ``tf.cond`` on a
    zero divisor): the compiled step stays captured, no fallback, eager's weights."""
    before, counts = lc.metrics.counters().get("tf_function_fallback", 0), ltf.fallback_counts()
    lazy = _fit(True, OPTIMIZERS[name], False)
    assert lc.metrics.counters().get("tf_function_fallback", 0) == before
    assert ltf.fallback_counts() == counts
    _assert_close(lazy, _fit(False, OPTIMIZERS[name], False))


@pytest.mark.parametrize("divisor", [[1.0, 2.0, 4.0, 8.0], [0.0, 2.0, np.nan, 8.0]])
def test_sparse_divide_matches_eager(divisor):
    """Both of Keras's branches: divisor rows that are zero or NaN outside the slices
    give eager's NaN rows, a NaN row among them NaN slices; other rows stay zero."""
    ltf.keras.enable()
    try:
        x2 = np.array(divisor, np.float32)[:, None] * np.ones((1, 3), np.float32)
        values = np.arange(1, 7, dtype=np.float32).reshape(2, 3)

        def run(conv):
            g = tf.IndexedSlices(conv(values), conv(np.array([2, 3], np.int32)),
                                 tf.constant([4, 3]))
            out = keras.ops.divide(g, conv(x2))
            assert isinstance(out, tf.IndexedSlices)
            return np.asarray(tf.convert_to_tensor(out))

        np.testing.assert_array_equal(run(ltf.convert_to_tensor), run(tf.constant))
    finally:
        ltf.keras.disable()


def _ltf_loop(lazy_mode, make_opt):
    var, conv, tape_cls = ((ltf.Variable, ltf.convert_to_tensor, ltf.GradientTape) if lazy_mode
                           else (tf.Variable, tf.constant, tf.GradientTape))
    w, x = var(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4)), conv(IDS[:2])
    opt = make_opt()
    for _ in range(4):
        with tape_cls() as tape:
            loss = tf.reduce_sum(tf.sin(tf.gather(w, x)) ** 2)
        g = tape.gradient(loss, w)
        assert isinstance(g, tf.IndexedSlices)
        opt.apply_gradients([(g, w)])
    return np.asarray(w)


@pytest.mark.parametrize("lazy_opt, keras_opt", [
    (lambda: ltf.optimizers.Adam(0.05), lambda: keras.optimizers.Adam(0.05)),
    (lambda: ltf.optimizers.Adam(0.05, amsgrad=True),
     lambda: keras.optimizers.Adam(0.05, amsgrad=True)),
    (lambda: ltf.optimizers.SGD(0.1, momentum=0.9), lambda: keras.optimizers.SGD(0.1, momentum=0.9)),
])
def test_ltf_optimizers_follow_keras_sparse_rules(lazy_opt, keras_opt):
    np.testing.assert_allclose(_ltf_loop(True, lazy_opt), _ltf_loop(False, keras_opt),
                               rtol=1e-5, atol=1e-5)
