"""Image resampling: TensorFlow's projective transform (``ImageProjectiveTransformV3``,
behind Keras's RandomRotation/Zoom/Translation/Shear) as gathers, in float32 in the
order of TF's CPU kernel, so values match it (``NEAREST``: exactly)."""

from __future__ import annotations

import numpy as np

from .. import ops
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
        index = _e("add", _e("mul", _e("add", first_row, cast(at[0], np.int64)), w),
                   cast(at[1], np.int64))
        return where(_e("and", _e("eq", at[0], yy), _e("eq", at[1], xx)), ops.reshape(
            take(flat, index, 0), new_sizes=grid[:3] + (channels,)), fill)

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
