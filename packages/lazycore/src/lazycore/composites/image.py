"""Image resampling: TensorFlow's projective transform (``ImageProjectiveTransformV3``,
behind Keras's RandomRotation/Zoom/Translation/Shear) as gathers, in float32 in the
order of TF's CPU kernel, so values match it (``NEAREST``: exactly); and TF's RGB <-> HSV
conversions (``tf.image.rgb_to_hsv``, behind Keras's RandomHue/RandomSaturation)."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_to, cast, elementwise, where
from .elementwise import trunc
from .indexing import getitem, take

_e = elementwise


def _fold(c: Tensor, n: int, fill_mode: str) -> Tensor:
    """TF's ``MapCoordinate``: a coordinate outside ``[0, n - 1]`` reflected
    (``dcba|abcd|dcba``, period ``2 n``) or wrapped (TF's: shifted by ``n`` per ``n - 1``),
    then clamped into the image; ``NEAREST`` only clamps, ``CONSTANT`` keeps it."""
    if fill_mode == "REFLECT":
        low = _e("add", _e("mul", trunc(_e("div", ops.neg(c), 2 * n)), 2 * n), c)
        high = _e("sub", c, _e("mul", trunc(_e("div", c, 2 * n)), 2 * n))
        c = where(_e("lt", c, 0), where(_e("lt", low, -n), _e("add", low, 2 * n),
                                        _e("sub", ops.neg(low), 1)),
                  where(_e("gt", c, n - 1), where(_e("ge", high, n), _e(
                      "sub", _e("sub", 2 * n, high), 1), high), c))
    if fill_mode == "WRAP":
        c = where(_e("lt", c, 0), _e("add", c, _e("mul", _e(
            "add", trunc(_e("div", ops.neg(c), n - 1)), 1), n)), where(
            _e("gt", c, n - 1), _e("sub", c, _e("mul", trunc(_e("div", c, n - 1)), n)), c))
    return c if fill_mode == "CONSTANT" else _e("min", _e("max", c, 0), n - 1)


def projective_transform(images: Tensor, transforms: Tensor, size, fill_value: Tensor,
                         interpolation: str = "BILINEAR", fill_mode: str = "CONSTANT"):
    """``images`` ``[batch, height, width, channels]`` resampled to ``size`` (output
    height, width): output pixel ``(x, y)`` of image ``b`` reads the input point
    ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``, of
    its row ``[a0 a1 a2 b0 b1 b2 c0 c1]`` of ``transforms`` (float32, ``[batch, 8]`` or
    ``[1, 8]``). The point is folded by ``fill_mode`` (``REFLECT``, ``WRAP``,
    ``NEAREST``, ``CONSTANT``) and read ``NEAREST`` (rounded half away from zero) or
    ``BILINEAR`` (four neighbours, weights and sums in float32); neighbours outside
    the image, and points with ``k == 0``, read ``fill_value`` in the images' dtype."""
    b, h, w, channels = images.shape
    grid = (b, *size, 1)  # coordinates per pixel, broadcast over its channels
    x, y = (ops.iota(dtype=np.float32, shape=grid, dimension=d) for d in (2, 1))
    t = [broadcast_to(ops.reshape(getitem(transforms, (slice(None), k)), new_sizes=(
        transforms.shape[0], 1, 1, 1)), grid) for k in range(8)]

    def plane(p, q, r):  # p x + q y + r, rounded as TF's kernel rounds it
        return _e("add", ops.add(ops.mul(p, x), ops.mul(q, y)), r)

    k = plane(t[6], t[7], 1)
    px, py = (_fold(ops.div(plane(*t[i:i + 3]), k), n, fill_mode) for i, n in ((0, w), (3, h)))
    flat, fill = ops.reshape(images, new_sizes=(b * h * w, channels)), cast(fill_value, images.dtype)
    first_row = _e("mul", ops.iota(dtype=np.int64, shape=grid, dimension=0), h)

    def read(yy, xx):  # the pixels at integral coordinates; outside the image: the fill
        at = [_e("min", _e("max", v, 0), n - 1) for v, n in ((yy, h), (xx, w))]
        return where(_e("and", _e("eq", at[0], yy), _e("eq", at[1], xx)), ops.reshape(take(
            flat, _e("add", _e("mul", _e("add", first_row, cast(at[0], np.int64)), w),
                     cast(at[1], np.int64)), 0), new_sizes=grid[:3] + (channels,)), fill)

    if interpolation == "NEAREST":
        out = read(ops.round_half_away(py), ops.round_half_away(px))
    else:
        (y0, y1), (x0, x1) = ((f, _e("add", f, 1)) for f in (ops.floor(py), ops.floor(px)))

        def across(yy):  # TF's (x1 - x) f(x0) + (x - x0) f(x1), in float32
            return ops.add(_e("mul", ops.sub(x1, px), cast(read(yy, x0), np.float32)),
                           _e("mul", ops.sub(px, x0), cast(read(yy, x1), np.float32)))
        out = cast(ops.add(_e("mul", ops.sub(y1, py), across(y0)),
                           _e("mul", ops.sub(py, y0), across(y1))), images.dtype)
    return where(_e("eq", k, 0), fill, out)


def _channels(x: Tensor) -> list:
    """The 3 channels of an image's last axis, each keeping the axis."""
    if x.ndim == 0 or x.shape[-1] != 3:
        raise ShapeError(f"an image's last axis must hold 3 channels, got shape {x.shape}")
    return [getitem(x, (Ellipsis, slice(c, c + 1))) for c in range(3)]


def rgb_to_hsv(x: Tensor) -> Tensor:
    """TF's ``RGBToHSV`` kernel on the last axis (r, g, b -> h, s, v), its roundings in
    its order: v the largest channel, s its range over v (0 where v is 0), h from the
    channel that is v, in [0, 1) (0 where the pixel is grey)."""
    r, g, b = _channels(x)
    v = _e("max", _e("max", r, g), b)
    spread = _e("sub", v, _e("min", _e("min", r, g), b))
    norm = _e("mul", _e("div", 1, spread), 1 / 6)
    h = where(_e("eq", r, v), _e("mul", norm, _e("sub", g, b)), where(
        _e("eq", g, v), _e("add", _e("mul", norm, _e("sub", b, r)), 2 / 6),
        _e("add", _e("mul", norm, _e("sub", r, g)), 4 / 6)))
    h = where(_e("gt", spread, 0), h, 0)
    return ops.concatenate(where(_e("lt", h, 0), _e("add", h, 1), h), where(
        _e("gt", v, 0), _e("div", spread, v), 0), v, dimension=x.ndim - 1)


def hsv_to_rgb(x: Tensor) -> Tensor:
    """TF's ``HSVToRGB`` kernel on the last axis: channel c is ``(1 - s + s d_c) v``, with
    ``d_c`` a clipped tent of ``6 h`` (red ``|6h - 3| - 1``, green/blue ``2 - |6h - 2|``,
    ``2 - |6h - 4|``)."""
    h, s, v = _channels(x)
    tents = [_e("sub", ops.abs(_e("sub", _e("mul", h, 6), 3)), 1)] + [
        _e("sub", 2, ops.abs(_e("sub", _e("mul", h, 6), c))) for c in (2, 4)]
    return ops.concatenate(*[_e("mul", _e("add", _e("sub", 1, s), _e("mul", s, _e(
        "min", _e("max", d, 0), 1))), v) for d in tents], dimension=x.ndim - 1)
