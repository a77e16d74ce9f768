"""``torch.fft`` and ``stft``: ATen's three FFT primitives, on ``lazycore.numeric.fftn``.
Their ``normalization`` (0: none, 1: 1/sqrt(n), 2: 1/n) is NumPy's norm by direction."""

from __future__ import annotations

import numpy as np

from .common import num, wrap_dims
from .registry import lower

_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def _dims(x, dim):
    return wrap_dims(dim, x.ndim)


@lower("_fft_r2c.default")
def fft_r2c(x, dim, normalization, onesided):
    dims = _dims(x, dim)
    if not onesided:  # the whole spectrum: a complex transform of the real input
        x = num.cast(x, np.complex64 if x.dtype == np.float32 else np.complex128)
    return num.fftn(x, "rfft" if onesided else "fft", dims, [x.shape[d] for d in dims],
                    _FORWARD_NORM[normalization])


@lower("_fft_c2c.default")
def fft_c2c(x, dim, normalization, forward):
    dims = _dims(x, dim)
    return num.fftn(x, "fft" if forward else "ifft", dims, [x.shape[d] for d in dims],
                    (_FORWARD_NORM if forward else _INVERSE_NORM)[normalization])


@lower("_fft_c2r.default")
def fft_c2r(x, dim, normalization, last_dim_size):
    dims = _dims(x, dim)
    return num.fftn(x, "irfft", dims, [x.shape[d] for d in dims[:-1]] + [last_dim_size],
                    _INVERSE_NORM[normalization])
