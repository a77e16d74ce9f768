"""``tf.signal`` 1-D transforms over the innermost axis on the core's ``fft`` op.

``fft``/``ifft`` are dispatchable; ``rfft``/``irfft`` have no dispatch hook and are
wrapped symbols (``_table.patch``). ``fft_length`` crops or zero-pads the innermost
axis first, as TF does.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._convert import static, to_core
from ._table import api, patch

_COMPLEX = {np.dtype(np.complex64), np.dtype(np.complex128)}
_REAL = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _fit_last(t: lc.Tensor, n: int) -> lc.Tensor:
    """Crop or zero-pad the innermost axis to ``n``."""
    m = t.shape[-1]
    if m > n:
        return lc.numeric.getitem(t, (Ellipsis, slice(0, n)))
    if m < n:
        zero = lc.scalar(0, t.dtype)
        return lc.ops.pad(t, zero, padding_config=((0, 0, 0),) * (t.ndim - 1) + ((0, n - m, 0),))
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
    return lc.ops.fft(_fit_last(t, n), fft_type="RFFT", fft_lengths=(n,))


@patch("signal.irfft", "pad/slice, fft (IRFFT)")
def _irfft(input_tensor, fft_length=None, name=None):
    t = _complex(input_tensor, "irfft")
    n = _length(fft_length, 2 * (t.shape[-1] - 1))
    return lc.ops.fft(_fit_last(t, n // 2 + 1), fft_type="IRFFT", fft_lengths=(n,))
