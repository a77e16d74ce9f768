"""tf.image resizing/flips/crops/grayscale/standardization, tf.math segment reductions and in_top_k on lazy tensors:
values, dtypes, shapes and gradients equal eager TF's, with no fallback; a Keras model
with Resizing/UpSampling2D/GlobalMaxPooling2D and top-k/AUC metrics trains without
leaving the trace, as eager Keras does."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import assert_same, lazy  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

rng = np.random.default_rng(3)
IMG = rng.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)
U8 = rng.integers(0, 256, (5, 7, 3)).astype(np.uint8)

CASES = {
    "resize bilinear up": lambda x: tf.image.resize(x, [8, 11]),
    "resize bilinear down": lambda x: tf.image.resize(x, [3, 4]),
    "resize nearest": lambda x: tf.image.resize(x, [9, 4], "nearest"),
    "resize bicubic": lambda x: tf.image.resize(x, [8, 5], tf.image.ResizeMethod.BICUBIC),
    "resize aspect": lambda x: tf.image.resize(x, [10, 10], preserve_aspect_ratio=True),
    "flip_left_right": tf.image.flip_left_right,
    "flip_up_down": tf.image.flip_up_down,
    "total_variation": tf.image.total_variation,
    "crop_to_bounding_box": lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 3, 4),
    "pad_to_bounding_box": lambda x: tf.image.pad_to_bounding_box(x, 1, 0, 8, 9),
    "resize_with_crop_or_pad": lambda x: tf.image.resize_with_crop_or_pad(x, 8, 4),
    "central_crop": lambda x: tf.image.central_crop(x, 0.5),
    "rgb_to_grayscale": tf.image.rgb_to_grayscale,
    "per_image_standardization": tf.image.per_image_standardization,
}


@pytest.mark.parametrize("case", list(CASES))
def test_image_matches_eager_with_gradient(case, metrics):
    fn = CASES[case]
    for image in (IMG, IMG[0]):  # a batch and a single image
        assert_same(fn(lazy(image)), fn(tf.constant(image)), rtol=2e-5)
    x = ltf.Variable(IMG)
    with ltf.GradientTape() as tape:
        loss = tf.reduce_sum(fn(x) * tf.cos(fn(x)))
    with tf.GradientTape() as eager_tape:
        e = tf.Variable(IMG)
        eager_loss = tf.reduce_sum(fn(e) * tf.cos(fn(e)))
    assert_same(tape.gradient(loss, x), eager_tape.gradient(eager_loss, e), rtol=1e-4, atol=1e-5)
    assert ltf.fallback_counts() == {}


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
def test_resize_integer_pixels_and_dtypes(method, metrics):
    for image in (U8, U8.astype(np.float64)):
        fn = lambda x: tf.image.resize(x, [4, 10], method)  # noqa: E731
        assert_same(fn(lazy(image)), fn(tf.constant(image)), rtol=2e-5, atol=1e-4)
        standardized = tf.image.per_image_standardization
        assert_same(standardized(lazy(image)), standardized(tf.constant(image)), atol=1e-5)
    assert ltf.fallback_counts() == {}


@pytest.mark.parametrize("call", [
    lambda x: tf.image.resize(x[0, 0], [3, 3]),                 # rank 2
    lambda x: tf.image.resize(x, [0, 3]),                      # empty output
    lambda x: tf.image.resize(tf.cast(x, tf.bool), [3, 3], "nearest"),
    lambda x: tf.image.flip_left_right(x[0, 0]),
    lambda x: tf.image.crop_to_bounding_box(x, 2, 0, 4, 3),    # past the bottom
    lambda x: tf.image.pad_to_bounding_box(x, 0, 0, 4, 8),     # smaller than the image
    lambda x: tf.image.central_crop(x, 1.5),
    lambda x: tf.image.rgb_to_grayscale(x[..., :2]),          # not 3 channels
])
def test_image_errors_are_tf_errors(call):
    with pytest.raises(Exception) as eager_error:
        call(tf.constant(IMG))
    with pytest.raises(type(eager_error.value)):
        call(lazy(IMG))


DATA = rng.standard_normal((6, 3)).astype(np.float32)
IDS = np.array([0, 2, -1, 0, 4, 2], np.int32)


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "mean", "sqrt_n"])
def test_unsorted_segments_match_eager(kind, metrics):
    fn = getattr(tf.math, f"unsorted_segment_{kind}")
    assert_same(fn(lazy(DATA), lazy(IDS), 5), fn(tf.constant(DATA), IDS, 5))
    assert_same(fn(lazy(DATA[:, 0]), IDS, 6), fn(tf.constant(DATA[:, 0]), IDS, 6))
    if kind in ("sum", "max", "min"):
        ints = (DATA * 10).astype(np.int32)
        assert_same(fn(lazy(ints), IDS, 5), fn(tf.constant(ints), IDS, 5))
    if kind != "prod":  # TF's prod gradient is its own formula; the core's scatter_mul has none
        x = ltf.Variable(np.round(DATA, 1))
        with ltf.GradientTape() as tape:
            loss = tf.reduce_sum(fn(x, IDS, 5) ** 2)
        e = tf.Variable(np.round(DATA, 1))
        with tf.GradientTape() as eager_tape:
            eager_loss = tf.reduce_sum(fn(e, IDS, 5) ** 2)
        assert_same(tape.gradient(loss, x), eager_tape.gradient(eager_loss, e))
    assert ltf.fallback_counts() == {}


def test_segment_id_past_the_end_raises_like_tf_cpu():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.unsorted_segment_sum(tf.constant(DATA), IDS, 4)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.unsorted_segment_sum(lazy(DATA), lazy(IDS) + 0, 4).numpy()


def test_in_top_k_matches_eager(metrics):
    scores = np.array([[1, 2, 3, 4], [4, 4, 1, 0], [1, np.nan, 2, 3], [0, 1, 2, 3]], np.float32)
    for targets in ([3, 1, 3, 0], [0, 2, 2, 5], [-1, 0, 1, 4]):
        for k in (1, 2, 4):
            t = np.array(targets, np.int32)
            assert_same(tf.math.in_top_k(lazy(t), lazy(scores), k),
                        tf.math.in_top_k(t, tf.constant(scores), k))
    assert ltf.fallback_counts() == {}


IMAGES = rng.uniform(0, 1, (8, 6, 6, 3)).astype(np.float32)
ONE_HOT = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 8)]
L = keras.layers


def _fit():
    """Resizing + bilinear UpSampling2D (tf.image.resize), GlobalMaxPooling2D (its
    assert_greater), top-k accuracy (in_top_k) and AUC (unsorted_segment_sum)."""
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((6, 6, 3)), L.Resizing(4, 5), L.UpSampling2D(interpolation="bilinear"),
        L.Conv2D(2, 3), L.GlobalMaxPooling2D(), L.Dense(4)])
    model.compile("sgd", keras.losses.CategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.TopKCategoricalAccuracy(k=2, name="top2"),
                           keras.metrics.AUC(num_thresholds=20, from_logits=True, name="auc")])
    history = model.fit(IMAGES, ONE_HOT, batch_size=4, epochs=1, verbose=0, shuffle=False)
    return history.history, [v.numpy() for v in model.weights]


def test_keras_program_stays_lazy():
    lc.metrics.reset()
    ltf.keras.enable()
    try:
        lazy_history, lazy_weights = _fit()
        counters = dict(lc.metrics.counters())
    finally:
        ltf.keras.disable()
    eager_history, eager_weights = _fit()
    assert counters.get("tf_function_fallback", 0) == 0
    assert not [k for k in counters if k.startswith(("fallback::", "sync::fallback"))]
    assert sorted(lazy_history) == sorted(eager_history) == ["auc", "loss", "top2"]
    for a, b in zip(tf.nest.flatten([lazy_history, lazy_weights]),
                    tf.nest.flatten([eager_history, eager_weights]), strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
