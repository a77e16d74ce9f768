"""``torch.fft`` and ``stft`` on the lazy device: ATen's ``_fft_r2c``/``_fft_c2c``/
``_fft_c2r`` lower to ``lazycore.numeric.fftn`` (NumPy's FFTs share it), so spectral
layers (FNet, spectrograms) trace instead of syncing to the CPU. Each case against eager:
values, dtype, shape, gradients, and no fallback."""

from __future__ import annotations

import pytest
import torch

import lazycore as lc

_G = torch.Generator().manual_seed(0)
REAL = torch.randn(3, 8, 6, generator=_G, dtype=torch.float64)
CPLX = torch.randn(3, 8, 6, generator=_G, dtype=torch.complex128)

CASES = {
    "rfft dim": lambda r, c: torch.fft.rfft(r, dim=1),
    "rfft n": lambda r, c: torch.fft.rfft(r, n=11),
    "fft of real": lambda r, c: torch.fft.fft(r),
    "fft ortho": lambda r, c: torch.fft.fft(c, dim=0, norm="ortho"),
    "ifft": lambda r, c: torch.fft.ifft(c),
    "ifft forward": lambda r, c: torch.fft.ifft(c, norm="forward"),
    "irfft": lambda r, c: torch.fft.irfft(c),
    "irfft n ortho": lambda r, c: torch.fft.irfft(c, n=7, norm="ortho"),
    "fft2": lambda r, c: torch.fft.fft2(c),
    "rfftn": lambda r, c: torch.fft.rfftn(r),
    "irfftn s": lambda r, c: torch.fft.irfftn(c, s=(4, 5)),
    "ifftn ortho": lambda r, c: torch.fft.ifftn(c, norm="ortho"),
    "hfft": lambda r, c: torch.fft.hfft(c),
    "ihfft2": lambda r, c: torch.fft.ihfft2(r),
    "stft float32": lambda r, c: torch.stft(r.reshape(-1).float(), 16, return_complex=True,
                                            window=torch.hann_window(16, device=r.device)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fft_matches_eager_without_fallback(dev, name):
    lc.metrics.reset()
    got = CASES[name](REAL.to(dev), CPLX.to(dev)).cpu()
    want = CASES[name](REAL, CPLX)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert not [k for k, v in lc.metrics.counters().items() if k.startswith("fallback::") and v]


@pytest.mark.parametrize("name", ["rfft dim", "ifft", "irfft", "fft2", "ihfft2"])
def test_fft_gradients_match_eager(dev, name):
    grads = []
    for device in ("cpu", dev):
        r, c = (t.to(device, copy=True).requires_grad_() for t in (REAL, CPLX))
        CASES[name](r, c).abs().pow(2).sum().backward()
        grads.append([None if t.grad is None else t.grad.cpu() for t in (r, c)])
    for got, want in zip(grads[1], grads[0], strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-8)
