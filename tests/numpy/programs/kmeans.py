"""k-means (Lloyd's algorithm) with broadcasting, argmin and one-hot sums."""

import numpy as np


def step(x, centroids):
    d2 = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels = np.argmin(d2, axis=1)
    onehot = (labels[:, None] == np.arange(centroids.shape[0])).astype(x.dtype)
    counts = onehot.sum(axis=0)
    sums = onehot.T @ x
    new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centroids)
    inertia = np.min(d2, axis=1).sum()
    return new, labels, inertia


def data(n=200, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=5.0, size=(k, 2))
    x = np.concatenate([c + rng.normal(size=(n // k, 2)) for c in centers])
    return x, x[rng.choice(len(x), k, replace=False)]
