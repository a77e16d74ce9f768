"""FFTs (XLA's FFT: complex-to-complex, real-to-complex and back)."""

from __future__ import annotations

from jax import lax

from .registry import defop
from .rules import jax_rule

FAMILY = "spectral"


def _fft(x, *, fft_type, fft_lengths):
    return lax.fft(x, fft_type, fft_lengths)


fft = defop("fft", FAMILY, jax_rule(_fft), _fft)
