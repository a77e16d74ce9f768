"""Factories that fill a fresh ``empty(0)`` through ``out=`` (ATen's ``native::arange``
inside the window functions, ``range``, ``arange(out=)``), factories whose device kernels
are per-backend stubs (``triu_indices``, ``kaiser_window``), and ``resize_``: each against
eager CPU, values, dtype and shape. The spectrogram of a hann window (``stft``/``istft``)
crashed on the lazy device before."""

from __future__ import annotations

import warnings

import pytest
import torch

FACTORIES = {
    "hann_window": lambda d: torch.hann_window(16, device=d),
    "hamming_window": lambda d: torch.hamming_window(9, periodic=False, device=d),
    "blackman_window": lambda d: torch.blackman_window(12, dtype=torch.float64, device=d),
    "bartlett_window": lambda d: torch.bartlett_window(7, device=d),
    "kaiser_window": lambda d: torch.kaiser_window(10, False, 8.0, device=d),
    "triu_indices": lambda d: torch.triu_indices(4, 5, 1, device=d),
    "tril_indices": lambda d: torch.tril_indices(5, 3, -1, device=d),
    "range": lambda d: torch.range(0, 4, 0.5, device=d),
    "arange out=": lambda d: torch.arange(5, out=torch.empty(0, device=d)),
    "linspace out=": lambda d: torch.linspace(0, 1, 5, out=torch.empty(0, device=d)),
    "add out= empty": lambda d: torch.add(torch.ones(2, 3, device=d), 1,
                                          out=torch.empty(0, device=d)),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factory_matches_eager(dev, name):
    got, want = FACTORIES[name](dev), FACTORIES[name]("cpu")
    assert got.device.type == "lazy" and got.dtype == want.dtype and got.shape == want.shape
    # windows are cosines of the lazy arange: XLA's cos, to the ulp of torch's
    torch.testing.assert_close(got.cpu(), want, **({} if want.is_floating_point() else
                                                   dict(rtol=0, atol=0)))


def test_stft_istft_round_trip(dev):
    x = torch.randn(2, 400, generator=torch.Generator().manual_seed(0))
    window = torch.hann_window(64)

    def spectrogram(x, d):
        w = torch.hann_window(64, device=d)
        spec = torch.stft(x.to(d), 64, hop_length=16, window=w, return_complex=True)
        return spec, torch.istft(spec, 64, hop_length=16, window=w, length=400)

    (spec, back), (spec_cpu, back_cpu) = spectrogram(x, dev), spectrogram(x, "cpu")
    assert torch.equal(window, torch.hann_window(64))
    torch.testing.assert_close(spec.cpu(), spec_cpu, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(back.cpu(), back_cpu, rtol=1e-5, atol=1e-5)


def test_out_with_elements_is_resized_with_eagers_warning(dev):
    def run(d):
        out = torch.full((2, 3), 7.0, device=d)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.add(torch.arange(4.0, device=d), 1, out=out)
        return out, [str(w.message) for w in caught if w.category is UserWarning]

    (got, msgs), (want, want_msgs) = run(dev), run("cpu")
    assert got.shape == want.shape == (4,)
    torch.testing.assert_close(got.cpu(), want)
    assert any("was resized since it had shape [2, 3]" in m for m in msgs), msgs
    assert any("was resized since it had shape [2, 3]" in m for m in want_msgs)


@pytest.mark.parametrize("sizes", [((2, 3), (3, 2)), ((2, 3), (2,)), ((4,), (4,)), ((0,), (2, 2))])
def test_resize_keeps_the_leading_elements(dev, sizes):
    old, new = sizes
    n_old = torch.Size(old).numel()
    base = torch.arange(float(n_old)).reshape(old)
    t = base.to(dev)
    t.resize_(new)
    ref = base.clone().resize_(new)
    assert t.shape == ref.shape and t.stride() == ref.stride()
    kept = min(n_old, ref.numel())  # eager's further elements are uninitialized memory
    torch.testing.assert_close(t.cpu().flatten()[:kept], ref.flatten()[:kept])
    t.add_(1)  # the resized tensor keeps working as a tensor of its new shape
    torch.testing.assert_close(t.cpu().flatten()[:kept], ref.flatten()[:kept] + 1)


def test_resizing_a_view_raises(dev):
    view = torch.arange(6.0, device=dev)[1:3]
    with pytest.raises(NotImplementedError, match="resizing a view"):
        view.resize_(5)
