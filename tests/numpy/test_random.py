"""``lnp.random``: NumPy's own streams (the same draws, values and dtypes as NumPy for a
seed, scalars where NumPy gives scalars), arrays lazily, lazy arrays permuted, shuffled
and chosen from lazily, and no recompiles when drawing in a loop."""

from __future__ import annotations

import numpy as np
import pytest

import lazy_numpy as lnp

DRAWS = [
    lambda g: g.random((3, 4)), lambda g: g.random(5, dtype=np.float32), lambda g: g.random(),
    lambda g: g.uniform(-2.0, 3.0, size=7), lambda g: g.normal(1.0, 2.0, 6),
    lambda g: g.standard_normal((2,)), lambda g: g.integers(0, 10, size=6),
    lambda g: g.integers(5, size=4, endpoint=True, dtype=np.uint8), lambda g: g.integers(3),
    lambda g: g.exponential(2.0, 5), lambda g: g.poisson(3.0, 4), lambda g: g.permutation(10),
    lambda g: g.choice(5, size=(3, 2)), lambda g: g.choice(6, size=4, replace=False),
    lambda g: g.choice(3, size=40, p=[0.1, 0.0, 0.9]), lambda g: g.choice([-1, 1], 8),
]


def test_generator_draws_are_numpys():
    g, want = lnp.random.default_rng(7), np.random.default_rng(7)
    for draw in DRAWS:  # one stream: every draw must consume NumPy's numbers
        got, exp = draw(g), draw(want)
        if isinstance(exp, np.ndarray):
            assert isinstance(got, lnp.LazyArray)
            got = np.asarray(got)
        assert type(got) is type(exp) and np.asarray(got).dtype == np.asarray(exp).dtype
        np.testing.assert_array_equal(got, exp)
    with pytest.raises(ValueError):
        g.integers(5, 5)
    with pytest.raises(ValueError):
        g.choice(3, size=5, replace=False)


@pytest.mark.parametrize("make", [lambda s: s.default_rng(1), lambda s: s.RandomState(1)])
def test_lazy_arrays_permuted_shuffled_and_chosen_lazily(make):
    g, want = make(lnp.random), make(np.random)
    x = np.arange(24.0).reshape(6, 4)
    lx = lnp.asarray(x)
    got = g.permutation(lx)
    assert isinstance(got, lnp.LazyArray)
    np.testing.assert_array_equal(np.asarray(got), want.permutation(x))
    np.testing.assert_array_equal(np.asarray(g.choice(lx[:, 0], 3, replace=False)),
                                  want.choice(x[:, 0], 3, replace=False))
    g.shuffle(lx[::2])  # through a view, as NumPy's in-place shuffle
    want.shuffle(x[::2])
    np.testing.assert_array_equal(np.asarray(lx), x)


def test_axis_and_shuffle_options():
    g, want = lnp.random.default_rng(2), np.random.default_rng(2)
    x = np.arange(15.0).reshape(3, 5)
    lx = lnp.asarray(x)
    np.testing.assert_array_equal(np.asarray(g.permutation(lx, axis=1)),
                                  want.permutation(x, axis=1))
    np.testing.assert_array_equal(np.asarray(g.choice(lx, 2, replace=False, shuffle=False)),
                                  want.choice(x, 2, replace=False, shuffle=False))
    np.testing.assert_array_equal(np.asarray(g.choice(lx, 4, axis=1)), want.choice(x, 4, axis=1))
    g.shuffle(lx, axis=1)
    want.shuffle(x, axis=1)
    np.testing.assert_array_equal(np.asarray(lx), x)


def test_module_level_functions_are_numpys_global_state():
    lnp.random.seed(5)
    got = [lnp.random.rand(2, 3), lnp.random.randn(4), lnp.random.randint(0, 3, size=2),
           lnp.random.choice([-1, 1], 6), lnp.random.normal(size=3), lnp.random.random()]
    np.random.seed(5)
    want = [np.random.rand(2, 3), np.random.randn(4), np.random.randint(0, 3, size=2),
            np.random.choice([-1, 1], 6), np.random.normal(size=3), np.random.random()]
    for a, b in zip(got, want, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), b)


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


def test_module_protocol_names_are_not_draws():
    """``lnp.random``'s module ``__getattr__`` forwards names to NumPy's global stream;
    ``__all__`` (which Sphinx and ``import *`` read) must not come back as a draw."""
    import lazy_numpy.random as lr

    assert not hasattr(lr, "__all__")
    assert callable(lr.rand)
