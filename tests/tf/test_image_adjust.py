"""``tf.image.adjust_brightness/contrast/gamma`` on lazy images are traced (TF's
composition; contrast as TF's CPU kernel), against eager TF: values interpreted and
compiled, dtypes, gradients, errors. Other dtypes (converted by ``convert_image_dtype``
in TF) and ``adjust_hue``/``adjust_saturation`` run eagerly, counted as fallbacks, and
raise under a tape that differentiates the image."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

rng = np.random.default_rng(3)
IMAGE = rng.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)

CASES = {
    "brightness": lambda im: tf.image.adjust_brightness(im, 0.2),
    "brightness_tensor": lambda im: tf.image.adjust_brightness(im, tf.constant(-0.3)),
    "gamma": lambda im: tf.image.adjust_gamma(im, 0.7, 1.3),
    "contrast": lambda im: tf.image.adjust_contrast(im, 1.7),
    "contrast_lazy_factor": lambda im: tf.image.adjust_contrast(
        im, ltf.convert_to_tensor(np.float32(0.6)) if isinstance(im, ltf.LazyTensor) else 0.6),
}


@pytest.mark.parametrize("tier", ["interpret", "compile"])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_adjust_matches_eager(name, dtype, tier):
    if dtype == np.float16 and "contrast" in name:
        dtype = np.float64  # (TF has no float16 CPU kernel: a float64 image runs eagerly)
    x = IMAGE.astype(dtype)
    eager = CASES[name](tf.constant(x))
    before, old = dict(ltf.fallback_counts()), lc.settings.tier
    lc.configure(tier=tier)
    try:
        lazy = CASES[name](ltf.convert_to_tensor(x))
        got = np.asarray(lazy)
    finally:
        lc.configure(tier=old)
    assert isinstance(lazy, ltf.LazyTensor) and lazy.dtype == eager.dtype
    # XLA's pow is within an ulp of TF's; the rest is bit for bit
    np.testing.assert_allclose(got, eager.numpy(), rtol=2.5e-7 if name == "gamma" else 0, atol=0)
    assert (ltf.fallback_counts() == before) == (dtype != np.float64)


def test_adjust_gradients_and_errors():
    def grads(var, tape_cls):
        x = var(IMAGE[0])
        with tape_cls() as tape:
            y = tf.reduce_sum(tf.image.adjust_gamma(tf.image.adjust_brightness(x, 0.1), 2.0) ** 2)
        return tape.gradient(y, x)

    np.testing.assert_allclose(np.asarray(grads(ltf.Variable, ltf.GradientTape)),
                               grads(tf.Variable, tf.GradientTape).numpy(), rtol=1e-6)
    for image in (tf.constant(IMAGE), ltf.convert_to_tensor(IMAGE)):
        with pytest.raises(ValueError, match="Gamma should be a non-negative"):
            tf.image.adjust_gamma(image, -1.0)
    x = ltf.Variable(IMAGE)
    with ltf.GradientTape(), pytest.raises(LookupError, match="AdjustContrastv2"):
        tf.image.adjust_contrast(x * 1.0, 2.0)  # TF has no gradient for it
    with ltf.GradientTape(), pytest.raises(NotImplementedError, match="adjust_hue"):
        tf.image.adjust_hue(x * 1.0, 0.1)
