"""Keras preprocessing layers whose compiled step used to fall back to TensorFlow's
graph, against eager TF/Keras: RandomCrop (a slice at traced starts), RandomHue and
RandomSaturation (``tf.image.rgb_to_hsv``/``hsv_to_rgb``), Discretization (bucketize)."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import assert_same, lazy, lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

L = keras.layers
rng = np.random.default_rng(5)
IMAGES = rng.uniform(0, 255, (16, 10, 10, 3)).astype(np.float32)
LABELS = rng.integers(0, 3, 16)


def _fit_and_predict(*layers):
    """A compiled fit, predict and evaluate with ``layers`` in front of a small CNN."""
    def program():
        keras.utils.set_random_seed(4)
        model = keras.Sequential([keras.Input((10, 10, 3)), *(f() for f in layers),
                                  L.Rescaling(1 / 255), L.Conv2D(4, 3, activation="relu"),
                                  L.GlobalAveragePooling2D(), L.Dense(3)])
        model.compile(keras.optimizers.SGD(0.1),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(IMAGES, LABELS, epochs=2, batch_size=8, verbose=0)
        return (history.history["loss"], model.predict(IMAGES, verbose=0),
                model.evaluate(IMAGES, LABELS, verbose=0), [v.numpy() for v in model.weights])

    old = lc.settings.tier
    lc.configure(tier="interpret")  # programs run once each here: compiles would dominate
    try:
        (*lazy_out, lazy_w), (*eager_out, eager_w), counters = lazy_and_eager_keras(program)
    finally:
        lc.configure(tier=old)
    assert counters.get("tf_function_fallback", 0) == 0 and ltf.fallback_counts() == {}
    assert not [k for k in counters if k.startswith("sync::fallback")]
    for a, b in zip([*lazy_out, *lazy_w], [*eager_out, *eager_w], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@tf.function
def _crop(x, h, w):
    h = h + 1  # the slices' bounds: the same tensor plus ints
    return x[:, h - 1:h + 5, w:w + 7], x[..., h:2 + h + 1, :], x[w:w + 1, 2]


def test_slice_at_traced_starts_in_a_captured_graph(metrics):
    x = rng.uniform(0, 9, (3, 10, 9, 2)).astype(np.float32)
    for h, w in ((0, 0), (4, 2), (2, 1)):
        assert_same(_crop(lazy(x), lazy(h), lazy(w)), _crop(x, tf.constant(h), tf.constant(w)),
                    rtol=0, atol=0)
    assert ltf.metrics.counters().get("tf_function_fallback", 0) == 0
    # TF's slice would be shorter there: no silent difference, an error at the barrier
    with pytest.raises(tf.errors.InvalidArgumentError, match="traced start"):
        _crop(lazy(x), lazy(5), lazy(0))[0].numpy()


def test_numpy_integer_indices_as_tfs(metrics):
    """TF takes NumPy integers as indices and slice bounds (they fell back before)."""
    x = rng.uniform(0, 9, (3, 4)).astype(np.float32)
    index = lambda t: (t[np.int64(1)], t[np.int32(0):np.int64(2), np.uint8(1)])  # noqa: E731
    assert_same(index(lazy(x)), index(tf.constant(x)), rtol=0, atol=0)
    assert ltf.fallback_counts() == {}


def test_random_crop_fit_matches_eager():
    """Training crops at random starts; predict/evaluate take the center crop path."""
    _fit_and_predict(lambda: L.RandomCrop(6, 7), lambda: L.RandomFlip())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_rgb_hsv_conversions_are_tfs_kernels(dtype, metrics):
    """Interpreted op by op: TF's roundings exactly (grey, black, negative, > 1 pixels,
    hues at the sector edges); integer images and 4 channels raise TF's errors."""
    old = lc.settings.tier
    lc.configure(tier="interpret")
    try:
        x = rng.uniform(-0.2, 1.3, (2, 5, 7, 3)).astype(dtype)
        x[0, 0, :5] = [[0.5, 0.5, 0.5], [0, 0, 0], [1, 1, 0.2], [1, 0.2, 0.2], [0.2, 0.2, 1]]
        hsv = tf.image.rgb_to_hsv(np.abs(x)).numpy()
        hsv[0, 1, :3, 0] = [0, 0.5, 1]
        for f, image in ((tf.image.rgb_to_hsv, x), (tf.image.hsv_to_rgb, hsv)):
            assert_same(f(lazy(image)), f(tf.constant(image)), rtol=0, atol=0)
    finally:
        lc.configure(tier=old)
    assert ltf.fallback_counts() == {}
    for bad in (x[..., :2], x.astype(np.int32)):
        with pytest.raises(Exception) as eager_error:
            tf.image.rgb_to_hsv(tf.constant(bad))
        with pytest.raises(type(eager_error.value)):
            tf.image.rgb_to_hsv(lazy(bad)).numpy()


def test_random_hue_and_saturation_fit_matches_eager():
    _fit_and_predict(lambda: L.RandomHue(0.4, value_range=(0, 255)),
                     lambda: L.RandomSaturation(0.6, value_range=(0, 255)))


def test_bucketize_is_tfs_kernel(metrics):
    """C++'s upper_bound on float32 boundaries: a value on a boundary goes above it,
    NaN past the last; integers compare as float32 (2**24 + 1 rounds onto 2**24)."""
    bounds = [-1.5, 0.0, 0.1, 2.0, 2.0, 16777216.0]
    f = rng.choice([-2, -1.5, 0, 0.1, 0.10000001, 2, 3, np.nan, 16777217], (4, 9))
    for x in (f.astype(np.float32), f, np.nan_to_num(f).astype(np.int32),
              np.nan_to_num(f).astype(np.int64), np.zeros((0, 3), np.float32)):
        assert_same(tf.raw_ops.Bucketize(input=lazy(x), boundaries=bounds),
                    tf.raw_ops.Bucketize(input=tf.constant(x), boundaries=bounds), rtol=0, atol=0)
    assert ltf.fallback_counts() == {}
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.Bucketize(input=lazy(f), boundaries=[1.0, 0.0])


def test_discretization_fit_matches_eager():
    _fit_and_predict(lambda: L.Discretization(bin_boundaries=[50.0, 100.0, 100.0, 200.0]))


@tf.function
def _slices(x, begin):
    return tf.slice(x, begin, [2, 4, 5]), tf.slice(x, begin + 1, [1, 3, 3])


def test_tf_slice_at_a_traced_begin(metrics):
    """keras.ops.slice's tf.slice with a lazy begin: a dynamic slice, never read; a
    begin out of range raises TF's InvalidArgumentError."""
    x = rng.uniform(0, 9, (3, 10, 9)).astype(np.float32)
    for begin in ([0, 0, 0], [1, 6, 4], [0, 2, 3]):
        assert_same(_slices(lazy(x), lazy(np.array(begin, np.int32))),
                    _slices(tf.constant(x), tf.constant(begin)), rtol=0, atol=0)
    assert ltf.metrics.counters().get("tf_function_fallback", 0) == 0
    for begin in ([2, 0, 0], [0, -1, 0]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            _slices(tf.constant(x), tf.constant(begin))
        with pytest.raises(tf.errors.InvalidArgumentError, match="begin"):
            _slices(lazy(x), lazy(np.array(begin, np.int32)))[0].numpy()
