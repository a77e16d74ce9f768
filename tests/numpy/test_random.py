"""``lnp.random``: a Generator-like API on the core RNG (shapes, dtypes, ranges,
reproducibility, sensible statistics, and no recompiles when drawing in a loop)."""

from __future__ import annotations

import numpy as np
import pytest

import lazy_numpy as lnp


def test_shapes_dtypes_and_reproducibility():
    g1, g2 = lnp.random.default_rng(7), lnp.random.default_rng(7)
    a, b = g1.random((3, 4)), g2.random((3, 4))
    assert isinstance(a, lnp.LazyArray) and a.shape == (3, 4) and a.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert g1.random(5, dtype=np.float32).dtype == np.float32
    assert g1.standard_normal((2,)).dtype == np.float64
    assert g1.integers(0, 10, size=6).dtype == np.int64
    assert g1.random().shape == ()
    c = lnp.random.default_rng(8).random((3, 4))
    assert not np.array_equal(np.asarray(a), np.asarray(c))
    # successive draws differ
    assert not np.array_equal(np.asarray(g1.random(4)), np.asarray(g1.random(4)))


def test_distributions_statistics():
    g = lnp.random.default_rng(0)
    u = np.asarray(g.uniform(-2.0, 3.0, size=5000))
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    z = np.asarray(g.normal(1.0, 2.0, size=5000))
    assert abs(z.mean() - 1.0) < 0.15 and abs(z.std() - 2.0) < 0.1
    e = np.asarray(g.exponential(2.0, size=5000))
    assert e.min() >= 0 and abs(e.mean() - 2.0) < 0.2
    i = np.asarray(g.integers(3, 7, size=5000))
    assert set(np.unique(i)) == {3, 4, 5, 6}
    j = np.asarray(g.integers(5, size=100, endpoint=True))
    assert j.min() >= 0 and j.max() <= 5


def test_permutation_shuffle_choice():
    g = lnp.random.default_rng(1)
    p = np.asarray(g.permutation(10))
    assert sorted(p.tolist()) == list(range(10))
    x = np.arange(12.0).reshape(4, 3)
    px = np.asarray(g.permutation(lnp.asarray(x)))
    assert sorted(px[:, 0].tolist()) == x[:, 0].tolist()
    a = lnp.asarray(np.arange(8))
    g.shuffle(a)
    assert sorted(np.asarray(a).tolist()) == list(range(8))
    c = np.asarray(g.choice(5, size=(3, 2)))
    assert c.shape == (3, 2) and c.min() >= 0 and c.max() < 5
    c = np.asarray(g.choice(6, size=4, replace=False))
    assert len(set(c.tolist())) == 4
    c = np.asarray(g.choice(lnp.asarray(np.array([10, 20, 30])), size=2, replace=False))
    assert len(set(c.tolist())) == 2 and set(c.tolist()) <= {10, 20, 30}
    w = np.asarray(g.choice(3, size=4000, p=[0.1, 0.0, 0.9]))
    assert 1 not in set(w.tolist()) and abs((w == 2).mean() - 0.9) < 0.03
    with pytest.raises(ValueError):
        g.choice(3, size=5, replace=False)
    with pytest.raises(ValueError):
        g.integers(5, 5)


def test_loop_draws_compile_once(counters):
    g = lnp.random.default_rng(3)
    x = lnp.asarray(np.zeros(100))
    compiles = []
    for _ in range(5):
        before = counters()["compiles"]
        x = 0.9 * x + g.standard_normal(100)
        lnp.sync()
        compiles.append(counters()["compiles"] - before)
    assert compiles[0] == 1 and sum(compiles[1:]) == 0, compiles


def test_module_level_helpers():
    lnp.random.seed(5)
    a = np.asarray(lnp.random.rand(2, 3))
    lnp.random.seed(5)
    b = np.asarray(lnp.random.rand(2, 3))
    np.testing.assert_array_equal(a, b)
    assert lnp.random.randn(4).shape == (4,)
    assert lnp.random.randint(0, 3, size=2).dtype == np.int64
