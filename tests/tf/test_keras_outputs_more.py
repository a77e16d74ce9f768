"""Keras fit/evaluate where Keras formats a traced tensor: a list-output model fed a
dataset of tuples (Keras's compile loss tries ``assert_same_structure``, whose error
message shows the tensors, then repacks), and ``print``/``repr`` in a ``tf.function``.
A lazy tensor's repr read the capture's placeholder: the whole step fell back to TF's
graph (``tf_function_fallback``). Now it shows TF's graph-tensor form, as TF does."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402

RNG = np.random.default_rng(1)
X = RNG.standard_normal((30, 8)).astype(np.float32)
B = np.linspace(-1, 1, 90, dtype=np.float32).reshape(30, 3)
YB = (X[:, :1] > 0).astype(np.float32)
YC = np.abs(X[:, :4]).argmax(1).astype(np.int64)


def test_list_outputs_with_tuple_targets_stay_captured():
    def program():
        keras.utils.set_random_seed(5)
        a, b = keras.Input((8,)), keras.Input((3,))
        h = keras.layers.Add()([keras.layers.Dense(6)(a), keras.layers.Dense(6)(b)])
        model = keras.Model([a, b], [keras.layers.Dense(1, activation="sigmoid")(h),
                                     keras.layers.Dense(4, activation="softmax")(h)])
        model.compile(keras.optimizers.RMSprop(1e-2), loss_weights=[0.5, 1.0],
                      loss=["binary_crossentropy", "sparse_categorical_crossentropy"])
        data = tf.data.Dataset.from_tensor_slices(((X, B), (YB, YC))).batch(10)
        history = model.fit(data, epochs=2, verbose=0)
        return history.history, model.evaluate(data, return_dict=True, verbose=0)

    lazy_out, eager_out, counters = lazy_and_eager_keras(program)
    for a, b in zip(tf.nest.flatten(lazy_out), tf.nest.flatten(eager_out), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert counters.get("tf_function_fallback", 0) == 0


def test_repr_and_print_inside_a_captured_function(metrics, capsys):
    shown = []

    @tf.function
    def f(x):
        shown.append((repr(x), str(x)))
        print(x)
        return x * 2.0

    eager = tf.function(lambda x: (shown.append((repr(x), str(x))), x * 2.0)[1])
    eager(tf.constant([1.0, 2.0]))
    out = f(ltf.convert_to_tensor([1.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    assert metrics.counters().get("tf_function_fallback", 0) == 0
    (eager_repr, eager_str), (lazy_repr, lazy_str) = shown[0], shown[-1]
    for lazy, want in ((lazy_repr, eager_repr), (lazy_str, eager_str)):  # names differ
        assert lazy.split("shape")[1] == want.split("shape")[1]
        assert lazy.split("'")[0].split('"')[0] == want.split("'")[0].split('"')[0]
    assert 'Tensor("' in capsys.readouterr().out
    assert repr(out) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>"
