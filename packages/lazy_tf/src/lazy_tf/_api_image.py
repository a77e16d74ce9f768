"""tf.image on static shapes: resize (bilinear, nearest, bicubic), flips, crops and pads,
total variation, rgb_to_grayscale, per_image_standardization; and Keras's image
augmentation transform (``tf.raw_ops.ImageProjectiveTransformV2/V3``, ``tf.ensure_shape``).

Images are ``[batch,] height, width, channels``. A resize is separable: along each
spatial axis an output pixel reads a few input pixels at indices and weights the host
computes with TF's own half-pixel-center formulas in float32, so the value, and its
gradient (the core's autodiff of the gathers), are those of TF's kernels. Where a call
is outside what is traced here (``antialias``, the area and
scale-and-translate kernels) it runs eagerly (a counted fallback); a ValueError here
re-runs the call in TF, which raises its own error.
"""

from __future__ import annotations

import functools

import numpy as np
import tensorflow as tf

import lazycore as lc

from . import _state
from ._api_math import composite
from ._convert import static, static_int, to_core
from ._table import FLOAT, REAL, api, patch, require, unary
from ._tape import check_leaving
from ._tensor import is_lazy_class

ops, num = lc.ops, lc.numeric
_PIXELS = lambda d: REAL(d) and d not in (np.uint32, np.uint64)  # noqa: E731 - TF's resize types
_F32 = np.float32
# TF's adjust_* take float16/float32 images as they are; other dtypes convert there and
# back (``convert_image_dtype``, saturating): they run eagerly
_HALF_OR_SINGLE = lambda d: d in (np.float16, np.float32)  # noqa: E731


def _image(image, what: str = "image") -> lc.Tensor:
    t = to_core(image)
    if t.ndim not in (3, 4):
        raise ValueError(f"'{what}' must have either 3 or 4 dimensions.")
    return t


def _keys_cubic(a: float = -0.5, size: int = 1024) -> np.ndarray:
    """TF's bicubic coefficient table: [near, far] weights for offsets 0..1 in 1/1024
    steps (float32 entries computed in double, as its kernel does)."""
    x = (np.arange(size + 1) / size).astype(_F32).astype(np.float64)
    far = (x + 1.0).astype(_F32).astype(np.float64)
    return np.stack([((a + 2) * x - (a + 3)) * x * x + 1,
                     ((a * far - 5 * a) * far + 8 * a) * far - 4 * a]).astype(_F32)


_CUBIC = _keys_cubic()


def _taps(method: str, n_in: int, n_out: int) -> list:
    """[(input indices, weights or None)] per output pixel of one axis (TF's kernels)."""
    scale, out = _F32(n_in) / _F32(n_out), np.arange(n_out, dtype=_F32)
    if method == "nearest":
        return [(np.clip(np.floor((out + _F32(0.5)) * scale), 0, n_in - 1).astype(np.int64), None)]
    src = (out + _F32(0.5)) * scale - _F32(0.5)
    lerp = src - np.floor(src)
    if method == "bilinear":
        return [(np.maximum(np.floor(src), 0).astype(np.int64), _F32(1) - lerp),
                (np.minimum(np.ceil(src), n_in - 1).astype(np.int64), lerp)]
    # bicubic: 4 taps from the table; taps outside the image weigh 0, the rest renormalized
    at, near, far = np.rint(lerp * _F32(1024)).astype(np.int64), _CUBIC[0], _CUBIC[1]
    index = [np.floor(src).astype(np.int64) + k for k in (-1, 0, 1, 2)]
    weights = [np.where((i >= 0) & (i < n_in), w, _F32(0)) for i, w in
               zip(index, (far[at], near[at], near[1024 - at], far[1024 - at]), strict=True)]
    scale = np.where(np.abs(total := sum(weights)) >= 1000 * np.finfo(_F32).tiny, _F32(1) / total,
                     _F32(1))
    return [(np.clip(i, 0, n_in - 1), w * scale) for i, w in zip(index, weights, strict=True)]


def _resample(t: lc.Tensor, axis: int, method: str, n_out: int) -> lc.Tensor:
    """The taps' sum, in tap order (weighted taps broadcast over the other axes)."""
    shape = tuple(n_out if d == axis else 1 for d in range(t.ndim))
    return functools.reduce(ops.add, [
        num.take(t, lc.constant(index), axis) if weight is None else
        num.elementwise("mul", num.take(t, lc.constant(index), axis),
                        lc.constant(weight.reshape(shape)))
        for index, weight in _taps(method, t.shape[axis], n_out)])


@api("image.resize", "gather, mul, add (TF's half-pixel taps)", tensors=("images",))
def _resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False,
            name=None):
    t, size, method = _image(images, "images"), static(size), str(method)
    if method not in ("bilinear", "nearest", "bicubic") or antialias:
        raise NotImplementedError(f"resize with method={method!r}, antialias={antialias}")
    h, w = t.shape[-3], t.shape[-2]
    if not isinstance(size, list) or len(size) != 2 or not all(isinstance(s, int) for s in size) \
            or min(size + [h, w]) <= 0:
        raise ValueError(f"cannot resize {t.shape} to {size}")
    if preserve_aspect_ratio:
        f = min(_F32(size[0]) / _F32(h), _F32(size[1]) / _F32(w))
        size = [int(np.rint(f * _F32(h))), int(np.rint(f * _F32(w)))]
    t = num.cast(require(t, _PIXELS, "resize"), t.dtype if method == "nearest" else np.float32)
    return _resample(_resample(t, t.ndim - 3, method, size[0]), t.ndim - 2, method, size[1])


for _tf, _from_end in [("image.flip_left_right", 2), ("image.flip_up_down", 3)]:  # width, height
    api(_tf, "rev", tensors=("image",))(
        composite(lambda t, k=_from_end: num.flip(_image(t), (t.ndim - k,)), None, _tf))


def _box(t: lc.Tensor, top: int, left: int, height: int, width: int, pad: bool) -> lc.Tensor:
    """Crop ``t`` to, or zero-pad it into, a box (TF's checks, as ValueError)."""
    h, w = t.shape[-3], t.shape[-2]
    inner, outer = ((h, w), (height, width)) if pad else ((height, width), (h, w))
    if min(top, left) < 0 or min(inner) <= 0 or top + inner[0] > outer[0] or \
            left + inner[1] > outer[1]:
        raise ValueError(f"the box ({top}, {left}, {height}, {width}) does not fit the image")
    if pad:
        return ops.pad(t, lc.scalar(0, t.dtype), padding_config=((0, 0, 0),) * (t.ndim - 3) + (
            (top, height - h - top, 0), (left, width - w - left, 0), (0, 0, 0)))
    return num.getitem(t, (Ellipsis, slice(top, top + height), slice(left, left + width),
                           slice(None)))


for _tf, _pad in [("image.crop_to_bounding_box", False), ("image.pad_to_bounding_box", True)]:
    api(_tf, "pad" if _pad else "slice", tensors=("image",))(
        lambda image, offset_height, offset_width, target_height, target_width, *, pad=_pad: _box(
            _image(image), *(static_int(v) for v in (offset_height, offset_width, target_height,
                                                     target_width)), pad=pad))


@api("image.resize_with_crop_or_pad", "slice, pad", tensors=("image",))
def _resize_with_crop_or_pad(image, target_height, target_width):
    t, th, tw = _image(image), static_int(target_height), static_int(target_width)
    h, w = t.shape[-3], t.shape[-2]
    return _box(_box(t, max((h - th) // 2, 0), max((w - tw) // 2, 0), min(th, h), min(tw, w),
                     False), max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw, True)


@api("image.central_crop", "slice", tensors=("image",))
def _central_crop(image, central_fraction):
    f, t = float(static(central_fraction)), _image(image)
    if not 0 < f <= 1:
        raise ValueError("central_fraction must be within (0, 1]")
    top, left = (int((n - n * f) / 2) for n in t.shape[-3:-1])
    return t if f == 1 else _box(t, top, left, t.shape[-3] - 2 * top, t.shape[-2] - 2 * left,
                                 False)


def _variation(t: lc.Tensor, after: tuple, before: tuple, axes) -> lc.Tensor:
    """The sum over ``axes`` of |t[after] - t[before]| (neighbours along one axis)."""
    return num.sum(num.absolute(ops.sub(num.getitem(t, after), num.getitem(t, before))), axes,
                   dtype=t.dtype)


@api("image.total_variation", "slice, sub, abs, reduce_sum", tensors=("images",))
def _total_variation(images, name=None):
    t = require(_image(images, "images"), lambda d: REAL(d) and not lc.dtypes.is_unsigned(d),
                "total_variation")
    axes, every = None if t.ndim == 3 else (1, 2, 3), slice(None)
    return ops.add(_variation(t, (Ellipsis, slice(1, None), every, every),  # down, across
                              (Ellipsis, slice(None, -1), every, every), axes),
                   _variation(t, (Ellipsis, slice(1, None), every),
                              (Ellipsis, slice(None, -1), every), axes))


@api("image.rgb_to_grayscale", "dot_general", tensors=("images",))
def _rgb_to_grayscale(images, name=None):
    """TF's weights, in float32 (integer pixels, which TF rescales, run eagerly)."""
    t = require(to_core(images), FLOAT, "rgb_to_grayscale")
    return num.cast(num.matmul(num.cast(t, np.float32), lc.constant(
        np.array([[0.2989], [0.5870], [0.1140]], np.float32))), t.dtype)


for _tf, _f in [("image.rgb_to_hsv", num.rgb_to_hsv), ("image.hsv_to_rgb", num.hsv_to_rgb)]:
    api(_tf, "max, min, div, select / abs, clamp, mul (TF's kernel)", tensors=("images",))(
        lambda images, name=None, *, f=_f: f(require(to_core(images), FLOAT, "rgb/hsv conversion")))


@api("image.per_image_standardization", "mean, std, max, sub, div", tensors=("image",))
def _per_image_standardization(image):
    """(x - mean) / max(std, 1/sqrt(pixels)) per image, in float32 (TF's composition)."""
    x, axes = num.cast(to_core(image), np.float32), (-3, -2, -1)
    if x.ndim < 3:
        raise ValueError(f"'image' must be at least three-dimensional, got shape {x.shape}")
    mean, std = (num.broadcast_to(f(x, axes, keepdims=True), x.shape) for f in (num.mean, num.std))
    return ops.div(ops.sub(x, mean), num.maximum(std, num.full(  # std, at least 1/sqrt(pixels)
        x.shape, _F32(1) / np.sqrt(_F32(np.prod(x.shape[-3:]))), np.float32)))


@unary("image.adjust_brightness", lowers_to="add (TF's composition)")
def _adjust_brightness(image, delta):
    t = require(to_core(image), _HALF_OR_SINGLE, "adjust_brightness")
    return ops.add(t, num.broadcast_to(num.cast(to_core(delta), t.dtype), t.shape))


@unary("image.adjust_gamma", lowers_to="pow, mul (TF's composition)")
def _adjust_gamma(image, gamma=1, gain=1):
    require(to_core(image), _HALF_OR_SINGLE, "adjust_gamma")
    if np.any(np.asarray(static(gamma)) < 0):
        raise ValueError("Gamma should be a non-negative real number.")
    return gain * image ** gamma


@api("image.adjust_contrast", "slice, add, mul, sub (TF's kernel)", tensors=("images",))
def _adjust_contrast(images, contrast_factor):
    """TF's CPU kernel in float32: each image's channel sums fold its pixels in halves
    (rows ``[:right]`` plus ``[left:]`` until one is left), times ``1 / pixels``; then
    ``mean + factor * (x - mean)``, the product rounded before the sum. TF has no
    gradient for it: an ``ltf.GradientTape`` differentiating the images raises TF's
    ``LookupError`` (here already when it records the call)."""
    from ._api_random import _affine

    t = require(to_core(images), lambda d: d == _F32, "adjust_contrast")  # (no float16 kernel)
    if any(tape.differentiates(images) for tape in _state.active_tapes):
        raise LookupError("gradient registry has no entry for: AdjustContrastv2")
    x = num.reshape(t, (-1, t.shape[-3] * t.shape[-2], t.shape[-1]))
    y, n = x, x.shape[1]
    while n > 1:
        right, n = n // 2, n - n // 2
        y = num.concatenate([ops.add(num.getitem(y, (slice(None), slice(n, n + right))),
                                     num.getitem(y, (slice(None), slice(0, right)))),
                             num.getitem(y, (slice(None), slice(right, n)))], 1)
    mean = num.broadcast_to(num.elementwise("mul", y, _F32(1) / _F32(x.shape[1])), x.shape)
    return num.reshape(_affine(num.elementwise("sub", x, mean), contrast_factor, mean), t.shape)


@patch("raw_ops.ImageProjectiveTransformV2", "gather, floor, mul, add, select (TF's kernel)")
@patch("raw_ops.ImageProjectiveTransformV3", "gather, floor, mul, add, select (TF's kernel)")
def _projective(*, images, transforms, output_shape, interpolation, fill_value=0.0,
                fill_mode="CONSTANT", name=None):
    """``tf.raw_ops.ImageProjectiveTransformV2/V3`` (Keras's ``affine_transform``, behind
    RandomRotation/Zoom/Translation/Shear), TF's kernel as the core's gathers. TF's
    gradient of it is the inverse transform of the output's gradient, not the gathers'
    adjoint: a tape differentiating through it refuses (and raises), as for a fallback."""
    t, m, fill, size = (to_core(images), to_core(transforms, np.float32),
                        to_core(fill_value, np.float32), static(output_shape))
    if t.ndim != 4 or 0 in t.shape or m.ndim != 2 or m.shape[1] != 8 or fill.ndim or \
            m.shape[0] not in (1, t.shape[0]) or np.shape(size) != (2,) or min(size) <= 0 or \
            interpolation not in ("NEAREST", "BILINEAR") or \
            fill_mode not in ("REFLECT", "WRAP", "CONSTANT", "NEAREST"):
        raise ValueError(f"ImageProjectiveTransform of {t.shape} by {m.shape} to {size}, "
                         f"{interpolation}, {fill_mode}")
    check_leaving("raw_ops.ImageProjectiveTransformV3",
                  [v for v in (images, transforms) if is_lazy_class(v.__class__)])
    return num.projective_transform(
        require(t, lambda d: FLOAT(d) or d in (np.uint8, np.int32, np.int64), "image transform"),
        m, tuple(size), fill, interpolation, fill_mode)


@api("ensure_shape", "(checked on the host)", tensors=("x",))
def _ensure_shape(x, shape, name=None):
    """Keras's ``affine_transform`` ends with it: the static shape answers it."""
    if not tf.TensorShape(to_core(x).shape).is_compatible_with(shape):
        raise ValueError(f"shape {to_core(x).shape} is not compatible with {shape}")  # TF's error
    return to_core(x)
