"""``tf.signal`` 1-D transforms over the innermost axis on the core's ``fft`` op, and
``frame``/``stft`` (audio features inside a model: Keras's ``ops.stft`` ends in
``tf.signal.stft``; without entries they ran eagerly and a compiled step fell back).

``fft``/``ifft`` are dispatchable; ``rfft``/``irfft`` have no dispatch hook and are
wrapped symbols (``_table.patch``). ``fft_length`` crops or zero-pads the innermost
axis first, as TF does.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import lazycore as lc

from ._convert import static, static_int, to_core
from ._table import api, patch

_COMPLEX = {np.dtype(np.complex64), np.dtype(np.complex128)}
_REAL = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _fit(t: lc.Tensor, n: int, axis: int = -1, fill=0) -> lc.Tensor:
    """Crop ``axis`` to ``n``, or pad it there with ``fill``."""
    axis, m = axis % t.ndim, t.shape[axis]
    if m > n:
        return lc.numeric.getitem(t, (slice(None),) * axis + (slice(0, n),))
    if m < n:
        return lc.ops.pad(t, to_core(fill, t.dtype), padding_config=tuple(
            (0, n - m if d == axis else 0, 0) for d in range(t.ndim)))
    return t


def _complex(x, what: str) -> lc.Tensor:
    t = to_core(x)
    if t.dtype not in _COMPLEX or t.ndim < 1:
        raise lc.DTypeError(f"{what} expects a complex tensor of rank >= 1, got {t.dtype}")
    return t


def _length(fft_length, default: int) -> int:
    n = default if fft_length is None else static(fft_length)
    n = n[0] if isinstance(n, list) and len(n) == 1 else n
    if not isinstance(n, int) or n < 0:
        raise lc.ShapeError(f"fft_length must be one non-negative length, got {fft_length!r}")
    if n == 0:
        raise NotImplementedError("a transform of length 0")
    return n


def _transform(fft_type: str, what: str):
    def impl(input, name=None):  # noqa: A002
        t = _complex(input, what)
        return lc.ops.fft(t, fft_type=fft_type, fft_lengths=(t.shape[-1],))
    return impl


api("signal.fft", "fft (FFT)", tensors=("input",))(_transform("FFT", "fft"))
api("signal.ifft", "fft (IFFT)", tensors=("input",))(_transform("IFFT", "ifft"))


@patch("signal.rfft", "pad/slice, fft (RFFT)")
def _rfft(input_tensor, fft_length=None, name=None):
    t = to_core(input_tensor)
    if t.dtype not in _REAL or t.ndim < 1:
        raise lc.DTypeError(f"rfft expects a float32/float64 tensor of rank >= 1, got {t.dtype}")
    n = _length(fft_length, t.shape[-1])
    return lc.ops.fft(_fit(t, n), fft_type="RFFT", fft_lengths=(n,))


@patch("signal.irfft", "pad/slice, fft (IRFFT)")
def _irfft(input_tensor, fft_length=None, name=None):
    t = _complex(input_tensor, "irfft")
    n = _length(fft_length, 2 * (t.shape[-1] - 1))
    return lc.ops.fft(_fit(t, n // 2 + 1), fft_type="IRFFT", fft_lengths=(n,))


@api("signal.frame", "pad, gather (frame positions)", tensors=("signal",))
def _frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    t = to_core(signal)
    length, step, axis = static_int(frame_length), static_int(frame_step), static_int(axis) % t.ndim
    count = -(-t.shape[axis] // step) if pad_end else max(0, 1 + (t.shape[axis] - length) // step)
    if pad_end and count:  # to the last frame's end (a crop past it: nothing reads there)
        t = _fit(t, (count - 1) * step + length, axis, pad_value)
    return lc.numeric.take(t, lc.constant(
        (np.arange(count)[:, None] * step + np.arange(length)).astype(np.int64)), axis)


@api("signal.stft", "frame, mul, pad/slice, fft (RFFT)", tensors=("signals",))
def _stft(signals, frame_length, frame_step, fft_length=None,
          window_fn=tf.signal.hann_window, pad_end=False, name=None):
    """TF's composition: frames, times the window, each frame's RFFT (its default
    ``fft_length`` is the power of 2 enclosing ``frame_length``)."""
    framed = tf.signal.frame(signals, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed *= window_fn(frame_length, dtype=framed.dtype)
    return to_core(tf.signal.rfft(framed, [fft_length if fft_length is not None else
                                           2 ** int(np.ceil(np.log2(static_int(frame_length))))]))
