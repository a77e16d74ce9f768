"""Indices and slice bounds that are lazy scalars inside a captured ``tf.function``
(the graph has no value for them): ``x[i]`` and ``tf.strided_slice`` with a lazy index,
and slices from a lazy start to that start plus ints, are dynamic slices of a static
size (range checks at the next barrier); against the same function in eager TF."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

X = np.arange(24, dtype=np.float32).reshape(6, 4)

CASES = {
    "index": lambda x, i: x[i] * 2.0,
    "column": lambda x, i: x[:, i - 3],
    "both": lambda x, i: x[i:i + 2, i - 2],
    "strided_shrink": lambda x, i: tf.strided_slice(x, [i, 1], [i + 1, 3], shrink_axis_mask=1),
    "strided_width": lambda x, i: tf.strided_slice(x, [i - 1, 0], [i + 1, 4], [1, 2]),
}


@pytest.mark.parametrize("name, i", [(n, i) for n in CASES for i in (2, 3)] + [("index", -1),
                                                                           ("index", -6)])
def test_lazy_index_in_captured_function_matches_eager(name, i, metrics):
    f = tf.function(CASES[name])
    lazy = f(ltf.convert_to_tensor(X), ltf.convert_to_tensor(np.int32(i)))
    eager = tf.function(CASES[name])(tf.constant(X), tf.constant(i))
    assert isinstance(lazy, ltf.LazyTensor) and lazy.shape == eager.shape
    np.testing.assert_array_equal(np.asarray(lazy), eager.numpy())
    assert lc.metrics.counters().get("tf_function_fallback", 0) == 0


def test_gradient_through_lazy_index(metrics):
    def run(var, conv):
        w = var(X)

        @tf.function
        def grad(i):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w[i] ** 2) + tf.reduce_sum(w[:, i - 2])
            return tape.gradient(loss, w)
        return [np.asarray(grad(conv(np.int32(i)))) for i in (1, 5, -2)]

    tape_cls = tf.GradientTape
    tf.GradientTape = ltf.GradientTape  # what ``ltf.keras.enable()`` does
    try:
        lazy = run(ltf.Variable, ltf.convert_to_tensor)
    finally:
        tf.GradientTape = tape_cls
    for a, b in zip(lazy, run(tf.Variable, tf.constant), strict=True):
        np.testing.assert_array_equal(a, b)
    assert lc.metrics.counters().get("tf_function_fallback", 0) == 0


@pytest.mark.parametrize("i", [6, -7])
def test_index_out_of_range_raises_tfs_error(i, metrics):
    f = tf.function(CASES["index"])
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant(X), tf.constant(i))
    with pytest.raises(tf.errors.InvalidArgumentError, match="index out of bounds"):
        f(ltf.convert_to_tensor(X), ltf.convert_to_tensor(np.int32(i))).numpy()


SLICES = {
    "getitem": lambda x, s: x[s:s + 3],
    "slice": lambda x, s: tf.slice(x, tf.stack([s, 0]), [3, 4]),
}


@pytest.mark.parametrize("name", list(SLICES))
@pytest.mark.parametrize("s", [4, -1])
def test_traced_start_past_dim_minus_width(name, s, metrics):
    """A start outside ``[0, dim - width]``: eager ``tf.slice`` raises
    InvalidArgumentError, and so does the captured slice (at the next barrier); eager
    ``x[s:s + 3]`` gives a shorter (or empty) slice, whose shape a captured graph of
    static shapes cannot have: InvalidArgumentError too, never a clamped start's rows."""
    def eager():
        return tf.function(SLICES[name])(tf.constant(X), tf.constant(s)).numpy()

    if name == "slice":
        with pytest.raises(tf.errors.InvalidArgumentError):
            eager()
    else:
        assert eager().shape[0] < 3
    lazy = tf.function(SLICES[name])(ltf.convert_to_tensor(X), ltf.convert_to_tensor(np.int32(s)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shorter" if name == "getitem"
                       else r"begin\[0\]"):
        lazy.numpy()
    assert lc.metrics.counters().get("tf_function_fallback", 0) == 0


@pytest.mark.parametrize("name", list(SLICES))
def test_traced_start_at_dim_minus_width(name, metrics):
    lazy = tf.function(SLICES[name])(ltf.convert_to_tensor(X), ltf.convert_to_tensor(np.int32(3)))
    np.testing.assert_array_equal(np.asarray(lazy), X[3:6])
