"""Keras layers beyond the tutorials' (regularizers, merges, attention, transposed
convolutions, cropping/padding), each model fitted, evaluated and predicted on lazy Keras
and again in eager Keras: the same histories, weights and predictions, no fallback.
The regularizer case found a bug: an activity regularizer's loss, made inside the
captured predict step and kept in ``layer.losses``, failed every later sync."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

L = keras.layers


def _regularized():
    i = keras.Input((6,))
    h = L.Dense(8, kernel_regularizer="l2", bias_regularizer="l1",
                activity_regularizer=keras.regularizers.L1L2(0.01, 0.01))(i)
    h = L.ActivityRegularization(0.01, 0.01)(h)
    h = L.Dense(4, kernel_constraint=keras.constraints.MaxNorm(1.0))(h)
    return keras.Model(i, L.Dense(3)(h)), [(6,)]


def _merged():
    a, b = keras.Input((4,)), keras.Input((4,))
    outs = [L.Add()([a, b]), L.Subtract()([a, b]), L.Multiply()([a, b]),
            L.Average()([a, b]), L.Maximum()([a, b]), L.Minimum()([a, b]), L.Dot(axes=1)([a, b])]
    return keras.Model([a, b], L.Dense(3)(L.Concatenate()(outs))), [(4,), (4,)]


def _attention():
    q, v = keras.Input((6, 4)), keras.Input((5, 4))
    both = L.Concatenate()([L.Attention(use_scale=True)([q, v]), L.AdditiveAttention()([q, v])])
    return keras.Model([q, v], L.Dense(3)(L.Flatten()(both))), [(6, 4), (5, 4)]


def _transposed():
    i = keras.Input((6, 6, 2))
    h = L.Conv2DTranspose(3, 3, strides=2, padding="same")(i)
    h = L.ZeroPadding2D(1)(L.Cropping2D(1)(h))
    return keras.Model(i, L.Dense(3)(L.GlobalMaxPooling2D()(h))), [(6, 6, 2)]


@pytest.mark.parametrize("build", [_regularized, _merged, _attention, _transposed])
def test_layer_model_fits_like_eager_keras(build):
    def program():
        rng = np.random.default_rng(0)
        keras.utils.set_random_seed(0)
        model, shapes = build()
        xs = [rng.normal(size=(16,) + s).astype("float32") for s in shapes]
        x = xs if len(xs) > 1 else xs[0]
        y = np.arange(16) % 3
        model.compile(optimizer=keras.optimizers.Adam(0.01), metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history
        return (history["loss"], model.evaluate(x, y, verbose=0), model.predict(x, verbose=0),
                [w.numpy() for w in model.weights])

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    for a, b in zip(lazy_out[:3], eager_out[:3], strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                   rtol=2e-4, atol=2e-5)
    for a, b in zip(lazy_out[3], eager_out[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
    assert counters.get("tf_function_fallback", 0) == 0
    assert ltf.fallback_counts() == {}
