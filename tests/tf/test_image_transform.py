"""TF's projective image transform (``tf.raw_ops.ImageProjectiveTransformV3``, behind
Keras's RandomRotation/RandomZoom/RandomTranslation/RandomShear) on lazy tensors against
eager TF: every interpolation x fill mode, NEAREST and integer pixels bit for bit; and a
compiled Keras fit with the augmentation layers that stays in the trace (before, its
step fell back to TensorFlow's graph) and equals eager Keras."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tf_helpers import assert_same, lazy, lazy_and_eager_keras  # noqa: E402

import lazy_tf as ltf  # noqa: E402
import lazycore as lc  # noqa: E402

rng = np.random.default_rng(11)
IMAGES = rng.uniform(0, 200, (4, 7, 9, 2)).astype(np.float32)
_a = rng.uniform(-1, 1, 4)
TRANSFORMS = np.stack([1.3 * np.cos(_a), -np.sin(_a), rng.uniform(-9, 9, 4), np.sin(_a),
                       0.7 * np.cos(_a), rng.uniform(-9, 9, 4), rng.uniform(-0.05, 0.05, 4),
                       rng.uniform(-0.05, 0.05, 4)], 1).astype(np.float32)
TRANSFORMS[1] = [1, 0, 0.5, 0, 1, -0.5, 0, 0]       # half-pixel shifts: rounding ties
TRANSFORMS[2] = [0.5, 0, 0, 0, 2, -30, -0.5, 0, ]   # zoom, far outside; k == 0 at x = 2
MODES = ["REFLECT", "WRAP", "CONSTANT", "NEAREST"]


def _transform(images, transforms, shape, interpolation, mode):
    return tf.raw_ops.ImageProjectiveTransformV3(
        images=images, transforms=transforms, output_shape=shape, fill_value=3.5,
        interpolation=interpolation, fill_mode=mode)


@pytest.fixture
def tier():
    """Interpreted (op by op): TF's float32 roundings exactly. Compiled, XLA:CPU fuses
    multiply-adds (one rounding less): bilinear values within ulps, see below."""
    old = lc.settings.tier
    yield lc.configure
    lc.configure(tier=old)


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
@pytest.mark.parametrize("mode", MODES)
def test_projective_transform_matches_eager_bit_for_bit(interpolation, mode, tier, metrics):
    tier(tier="interpret")
    for images in (IMAGES, IMAGES.astype(np.uint8)):
        for transforms, shape in ((TRANSFORMS, [7, 9]), (TRANSFORMS[:1], [5, 12])):
            args = (transforms, np.array(shape, np.int32), interpolation, mode)
            out, eager = _transform(lazy(images), *args), _transform(images, *args)
            assert_same(out, eager, rtol=0, atol=0)
    assert ltf.fallback_counts() == {}


def test_projective_transform_compiled(tier, metrics):
    """One compiled program of every case: NEAREST exact, BILINEAR within float32 ulps,
    integer pixels (TF truncates the float32 sum) within 1."""
    tier(tier="compile")
    cases = [(images, transforms, shape, interpolation, mode)
             for images in (IMAGES, IMAGES.astype(np.uint8)) for interpolation in ("NEAREST", "BILINEAR")
             for mode in MODES for transforms, shape in ((TRANSFORMS, [7, 9]), (TRANSFORMS[:1], [5, 12]))]
    outs = [_transform(lazy(images), *rest) for images, *rest in cases]
    for out, (images, *rest) in zip(outs, cases, strict=True):
        exact = rest[2] == "NEAREST"
        assert_same(out, _transform(images, *rest), rtol=0 if exact else 1e-6,
                    atol=0 if exact else 1 if images.dtype == np.uint8 else 1e-4)
    assert ltf.fallback_counts() == {}


def test_v2_and_errors_are_tfs():
    v2 = tf.raw_ops.ImageProjectiveTransformV2
    kwargs = dict(transforms=TRANSFORMS, output_shape=[6, 6], interpolation="BILINEAR")
    assert_same(v2(images=lazy(IMAGES), **kwargs), v2(images=IMAGES, **kwargs))
    for bad in (dict(transforms=TRANSFORMS[:3]), dict(output_shape=[0, 4]),
                dict(output_shape=[6]), dict(fill_value=[1.0, 2.0])):
        call = {**kwargs, "fill_value": 0.0, **bad}
        with pytest.raises(Exception) as eager_error:
            tf.raw_ops.ImageProjectiveTransformV3(images=IMAGES, **call)
        with pytest.raises(type(eager_error.value)):
            tf.raw_ops.ImageProjectiveTransformV3(images=lazy(IMAGES), **call)


def test_gradient_through_the_transform_is_refused():
    """TF's gradient is the inverse transform of the output's gradient, not the
    gathers' adjoint: a tape differentiating through it raises instead of differing."""
    x = ltf.Variable(IMAGES)
    with ltf.GradientTape() as tape, pytest.raises(NotImplementedError, match="(?i)transform"):
        _transform(x, TRANSFORMS, [7, 9], "BILINEAR", "REFLECT")
    del tape


def test_keras_augmentation_fit_matches_eager():
    """The TF tutorials' augmentation layers in a model: a compiled fit draws their
    parameters with TF's stateless ops and transforms lazily, as eager Keras does."""
    L = keras.layers
    x = rng.uniform(0, 255, (16, 10, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, 16)

    def program():
        keras.utils.set_random_seed(4)
        model = keras.Sequential([
            keras.Input((10, 10, 3)), L.RandomFlip("horizontal"), L.RandomRotation(0.2),
            L.RandomZoom(0.2, fill_mode="wrap"), L.RandomTranslation(0.1, 0.2, "nearest"),
            L.RandomShear(0.2, 0.1, interpolation="nearest", fill_mode="constant"),
            L.RandomContrast(0.3), L.RandomBrightness(0.2), L.Rescaling(1 / 255),
            L.Conv2D(4, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(3)])
        model.compile(keras.optimizers.SGD(0.1),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
        return history.history["loss"], [v.numpy() for v in model.weights]

    old = lc.settings.tier
    lc.configure(tier="interpret")  # programs run once each here: compiles would dominate
    try:
        (lazy_loss, lazy_w), (eager_loss, eager_w), counters = lazy_and_eager_keras(program)
    finally:
        lc.configure(tier=old)
    assert counters.get("tf_function_fallback", 0) == 0 and ltf.fallback_counts() == {}
    np.testing.assert_allclose(lazy_loss, eager_loss, rtol=1e-5)
    for a, b in zip(lazy_w, eager_w, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
