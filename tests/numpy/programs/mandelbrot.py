"""Mandelbrot escape-time iteration with masks (where-based and boolean-index variants)."""

import numpy as np


def grid(n=48):
    re = np.linspace(-2.0, 0.6, n)
    im = np.linspace(-1.2, 1.2, n)
    return re[None, :] + 1j * im[:, None]


def step(z, c, counts):
    inside = np.abs(z) <= 2.0
    z = np.where(inside, z * z + c, z)
    counts = counts + inside
    return z, counts


def masked_iterations(c, iterations=10):
    """The textbook version: update only the points that have not escaped (boolean masks)."""
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(iterations):
        mask = np.abs(z) <= 2.0
        z[mask] = z[mask] ** 2 + c[mask]
        counts[mask] += 1
    return counts
