"""Black-Scholes European option prices (classic vectorized NumPy benchmark)."""

import numpy as np

A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429


def cnd(d):
    """Cumulative normal distribution (Abramowitz-Stegun 26.2.17), vectorized with where."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))))
    w = 1.0 - 1.0 / np.sqrt(2 * np.pi) * np.exp(-0.5 * d * d) * poly
    return np.where(d < 0, 1.0 - w, w)


def price(s, x, t, r=0.02, v=0.3):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    discount = np.exp(-r * t)
    call = s * cnd(d1) - x * discount * cnd(d2)
    put = x * discount * cnd(-d2) - s * cnd(-d1)
    return call, put


def inputs(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(5, 30, n), rng.uniform(1, 100, n), rng.uniform(0.25, 10, n)
