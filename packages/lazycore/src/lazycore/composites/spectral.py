"""N-dimensional FFTs over any axes with NumPy's lengths and norms, on XLA's FFT (at most
three trailing axes per call): the one definition NumPy's ``np.fft`` and PyTorch's
``_fft_r2c``/``_fft_c2c``/``_fft_c2r`` share."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensor import Tensor
from .broadcasting import full
from .manipulation import transpose

_XLA_TYPE = {"fft": "FFT", "ifft": "IFFT", "rfft": "RFFT", "irfft": "IRFFT"}
_INVERSE = frozenset({"ifft", "irfft"})


def fit(x: Tensor, axis: int, n: int) -> Tensor:
    """Truncate or zero-pad ``x`` along ``axis`` to length ``n``."""
    size = x.shape[axis]
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    if n < size:
        hi = list(x.shape)
        hi[axis] = n
        return ops.slice(x, start_indices=(0,) * x.ndim, limit_indices=tuple(hi), strides=None)
    if n > size:
        config = tuple((0, n - size if i == axis else 0, 0) for i in range(x.ndim))
        return ops.pad(x, full((), 0, x.dtype), padding_config=config)
    return x


def fftn(x: Tensor, kind: str, axes, lengths, norm: str | None = None) -> Tensor:
    """``kind`` (fft / ifft / rfft / irfft) over ``axes`` (distinct, non-negative; the last
    is the real one of rfft/irfft) with ``lengths`` the transform's sizes (irfft: the real
    output's), ``x`` truncated or zero-padded to them, scaled as NumPy's ``norm``
    (backward / ortho / forward). ``x`` must already be complex (real for rfft)."""
    axes, lengths = list(axes), [int(n) for n in lengths]
    if len(lengths) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    inner = axes[:-1] if kind == "irfft" else axes
    for ax, n in zip(inner, lengths, strict=False):
        x = fit(x, ax, n)
    if kind == "irfft":
        x = fit(x, axes[-1], lengths[-1] // 2 + 1)
    order = [i for i in range(x.ndim) if i not in axes] + axes
    x = transpose(x, order)
    k, lead = len(axes), x.ndim - len(axes)
    chunks = [(s, min(3, k - s)) for s in range(0, k, 3)]  # XLA: up to 3 trailing axes
    for start, take in (chunks if kind == "irfft" else reversed(chunks)):
        moved = [i for i in range(k) if not start <= i < start + take] + list(range(start, start + take))
        perm = list(range(lead)) + [lead + i for i in moved]
        fft_type = _XLA_TYPE[kind]
        if kind in ("rfft", "irfft") and start + take != k:  # the real axis is the last chunk's
            fft_type = "FFT" if kind == "rfft" else "IFFT"
        x = ops.fft(transpose(x, perm), fft_type=fft_type,
                    fft_lengths=tuple(lengths[start:start + take]))
        x = transpose(x, list(np.argsort(perm)))
    x = transpose(x, list(np.argsort(order)))
    return _scaled(x, int(np.prod(lengths)), norm, kind in _INVERSE)


def _scaled(x: Tensor, total: int, norm: str | None, inverse: bool) -> Tensor:
    # XLA's inverse transforms already divide by n (NumPy's "backward")
    if norm == "ortho":
        factor = np.sqrt(total) if inverse else 1 / np.sqrt(total)
    elif norm == "forward":
        factor = float(total) if inverse else 1.0 / total
    elif norm in (None, "backward"):
        return x
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         f'"forward".')
    return ops.mul(x, full(x.shape, factor, x.dtype))
