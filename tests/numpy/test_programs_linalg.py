"""Linear-algebra programs (least squares, PCA, power iteration, factorizations): what a
published program meets when a matrix is singular, indefinite or NaN. NumPy raises
``LinAlgError`` where LAPACK reports it; lazily the same error is raised at the next
barrier (XLA gives inf/NaN silently), and only where NumPy raises."""

from __future__ import annotations

import numpy as np
import pytest

import lazy_numpy as lnp

L = np.linalg
CASES = {
    "inv singular": lambda m: L.inv(m(np.ones((3, 3)))),
    "inv exact-zero pivot": lambda m: L.inv(m(np.arange(9.0).reshape(3, 3))),
    "inv nan": lambda m: L.inv(m(np.array([[np.nan, 1.0], [1.0, 1.0]]))),
    "inv inf": lambda m: L.inv(m(np.array([[np.inf, 1.0], [1.0, 1.0]]))),
    "inv near-singular": lambda m: L.inv(m(np.array([[1.0, 2.0], [1.0, 2.0 + 1e-15]]))),
    "inv one of a batch": lambda m: L.inv(m(np.stack([np.eye(2), np.zeros((2, 2))]))),
    "solve singular": lambda m: L.solve(m(np.zeros((2, 2))), m(np.ones(2))),
    "solve nan right side": lambda m: L.solve(m(np.eye(2)), m(np.array([np.nan, 1.0]))),
    "solve matrix right side": lambda m: L.solve(m(np.ones((2, 2))), m(np.eye(2))),
    "cholesky indefinite": lambda m: L.cholesky(m(-np.eye(2))),
    "cholesky semidefinite": lambda m: L.cholesky(m(np.ones((2, 2))), upper=True),
    "cholesky nan": lambda m: L.cholesky(m(np.full((2, 2), np.nan))),
    "svd nan": lambda m: L.svd(m(np.full((2, 2), np.nan)))[1],
    "svd values nan": lambda m: L.svd(m(np.full((2, 3), np.nan)), compute_uv=False),
    "svd singular": lambda m: L.svd(m(np.ones((3, 2))))[1],
    "matrix_power -1": lambda m: L.matrix_power(m(np.ones((2, 2))), -1),
    "det singular": lambda m: L.det(m(np.ones((3, 3)))),
}


def _outcome(fn, lazy):
    try:
        return np.asarray(fn(lnp.asarray if lazy else np.asarray))  # observing syncs
    except L.LinAlgError as e:
        return e


@pytest.mark.parametrize("name", CASES)
def test_failures_raise_where_numpy_raises(name):
    with np.errstate(all="ignore"):
        eager, lazy = _outcome(CASES[name], False), _outcome(CASES[name], True)
    if isinstance(eager, Exception):
        assert isinstance(lazy, L.LinAlgError), f"NumPy raised {eager}, lazy returned {lazy}"
        assert str(lazy).startswith(str(eager))
    else:
        assert not isinstance(lazy, Exception), lazy
        np.testing.assert_allclose(lazy, eager, rtol=1e-9)


def test_program_catching_the_error_at_its_barrier():
    """A program that inverts, then reads a value, sees the error at the read; values that
    do not depend on the failed inverse are still computed."""
    a = lnp.asarray(np.ones((2, 2)))
    other = a.sum() * 2
    bad = L.inv(a) @ a
    with pytest.raises(L.LinAlgError, match="Singular matrix"):
        lnp.sync()
    assert float(other) == 8.0
    with pytest.raises(L.LinAlgError):
        np.asarray(bad)


def test_regular_least_squares_and_pca_unchanged():
    r = np.random.RandomState(1)
    a, b = r.randn(20, 4), r.randn(20)
    x = r.randn(50, 5) @ r.randn(5, 5)

    def program(eye, a, b, x):  # eye: the program's np.eye (lazy_numpy's, lazily)
        normal = np.linalg.solve(a.T @ a, a.T @ b)
        via_inv = np.linalg.inv(a.T.dot(a)).dot(a.T).dot(b)
        c = np.cov(x - x.mean(axis=0), rowvar=False)
        chol = np.linalg.cholesky(c + 5 * eye(5))
        s = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)[1]
        return normal, via_inv, chol, s**2 / np.sum(s**2)

    eager = program(np.eye, a, b, x)
    lazy = program(lnp.eye, lnp.asarray(a), lnp.asarray(b), lnp.asarray(x))
    for got, want in zip(lazy, eager, strict=True):
        assert isinstance(got, lnp.LazyArray)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
