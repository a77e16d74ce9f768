"""Reductions of a lazy boolean selection over its selected axis (``X[labels == i]
.mean(0)``, ``x[x > 0].sum()``) need no count of ``True`` values: they are computed
as ``where=`` reductions without a sync, in every execution tier, with NumPy's values
and dtypes (sum, mean, var, std, max, min, any, all; keepdims either way). Other
reductions of a selection still settle it (one counted sync)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazy_numpy as lnp
import lazycore as lc

pytestmark = pytest.mark.usefixtures("tier")  # every test in each tier (tests/conftest.py)


RNG = np.random.RandomState(0)
X = RNG.randn(20, 3).astype(np.float32)
LABELS = RNG.randint(0, 4, 20)
B = RNG.randint(-5, 5, (6, 4))

CASES = {  # name: (array, mask of it, reduction of the selection)
    "kmeans_mean0": (X, lambda a, lab: lab == 1, lambda s: s.mean(0)),
    "np_mean_axis_none": (X, lambda a, lab: lab == 2, lambda s: np.mean(s, axis=None)),
    "sum0": (X, lambda a, lab: lab == 3, lambda s: s.sum(axis=0)),
    "sum_all_int": (B, lambda a, lab: a > 0, lambda s: s.sum()),
    "mean_int_is_float64": (B, lambda a, lab: a > 0, lambda s: s.mean()),
    "mean_dtype": (B, lambda a, lab: a != 0, lambda s: np.mean(s, dtype=np.float32)),
    "sum_both_axes": (X, lambda a, lab: lab == 0, lambda s: np.sum(s, axis=(0, 1))),
    "max0": (X, lambda a, lab: lab == 1, lambda s: s.max(0)),
    "min_int": (B, lambda a, lab: a < 3, lambda s: np.min(s)),
    "bool_sum": (B > 1, lambda a, lab: a, lambda s: s.sum()),
    "2d_mask": (B, lambda a, lab: a % 2 == 0, lambda s: s.sum()),
    "var0": (X, lambda a, lab: lab == 1, lambda s: s.var(0)),
    "std_ddof": (X, lambda a, lab: lab == 2, lambda s: np.std(s, axis=0, ddof=1)),
    "var_int_all": (B, lambda a, lab: a > -2, lambda s: s.var()),
    "std_bool": (B > 0, lambda a, lab: a | True, lambda s: s.std()),
    "var_dtype_f32": (X.astype(np.float64), lambda a, lab: lab == 0,
                      lambda s: np.var(s, axis=0, dtype=np.float32)),
    "var_correction": (X, lambda a, lab: lab == 3, lambda s: np.var(s, 0, correction=1)),
    "any0": (B, lambda a, lab: a > 2, lambda s: s.any(0)),
    "all_none": (X, lambda a, lab: lab == 1, lambda s: np.all(s > -1)),
    "all0_float": (X, lambda a, lab: lab < 2, lambda s: np.all(s, axis=0)),
    "sum_keepdims": (X, lambda a, lab: lab == 1, lambda s: s.sum(0, keepdims=1)),
    "mean_keepdims_all": (X, lambda a, lab: lab == 2, lambda s: s.mean(keepdims=True)),
    "std_keepdims_2d_mask": (B, lambda a, lab: a > 0, lambda s: s.std(keepdims=True)),
    "max_keepdims": (X, lambda a, lab: lab == 0, lambda s: s.max(axis=(0, 1), keepdims=True)),
    "any_keepdims": (B, lambda a, lab: a < 0, lambda s: np.any(s, 0, keepdims=True)),
}


@pytest.mark.parametrize("name", CASES)
def test_reduction_of_a_selection_matches_numpy_without_a_sync(name):
    array, mask, reduce = CASES[name]
    want = reduce(array[mask(array, LABELS)])
    lazy, labels = lnp.asarray(array), lnp.asarray(LABELS)
    before = lc.metrics.counters()["syncs"]
    got = reduce(lazy[mask(lazy, labels)])
    assert lc.metrics.counters()["syncs"] == before, "the reduction synced"
    assert isinstance(got, lnp.LazyArray)
    g = np.asarray(got)
    assert (g.shape, g.dtype) == (np.shape(want), np.asarray(want).dtype)
    np.testing.assert_allclose(g, want, rtol=1e-6)


@pytest.mark.parametrize("reduce", [lambda s: s.mean(0), lambda s: s.var(0), np.std])
def test_mean_var_std_of_an_empty_selection_are_nan(reduce):
    lazy, labels = lnp.asarray(X), lnp.asarray(LABELS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = reduce(X[LABELS == 9])
    got = np.asarray(reduce(lazy[labels == 9]))
    assert got.shape == np.shape(want) and got.dtype == want.dtype
    assert np.isnan(got).all() and np.isnan(want).all()


def test_any_all_of_an_empty_selection_are_numpys_identities():
    lazy, labels = lnp.asarray(B), lnp.asarray(LABELS[:6])
    for reduce in (lambda s: s.any(0), lambda s: s.all(0), np.any, np.all):
        want = reduce(B[LABELS[:6] == 9])
        got = np.asarray(reduce(lazy[labels == 9]))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_var_with_ddof_past_the_count_is_numpys_inf_or_nan():
    lazy, labels = lnp.asarray(X), lnp.asarray(LABELS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = X[LABELS == 1].var(0, ddof=50)
    np.testing.assert_array_equal(np.asarray(lazy[labels == 1].var(0, ddof=50)), want)


def test_max_of_an_empty_selection_raises_numpys_error_at_the_barrier():
    lazy, labels = lnp.asarray(X), lnp.asarray(LABELS)
    with pytest.raises(ValueError, match="zero-size array"):
        X[LABELS == 9].max(0)
    result = lazy[labels == 9].max(0)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        np.asarray(result)


def test_a_reduction_keeping_the_selected_axis_settles_the_selection():
    lazy, labels = lnp.asarray(X), lnp.asarray(LABELS)
    before = lc.metrics.counters().get("data_dependent_syncs", 0)
    got = np.asarray(lazy[labels == 1].sum(1))
    assert lc.metrics.counters().get("data_dependent_syncs", 0) == before + 1
    np.testing.assert_allclose(got, X[LABELS == 1].sum(1), rtol=1e-6)


@pytest.mark.parametrize("reduce", [lambda s: s.cumsum(0),
                                    lambda s: np.var(s, 0, mean=np.zeros((1, 3), np.float32)),
                                    lambda s: s.astype(np.float16).var(0)])
def test_other_forms_settle_and_match_numpy(reduce):
    lazy, labels = lnp.asarray(X), lnp.asarray(LABELS)
    got = np.asarray(reduce(lazy[labels == 1]))
    want = reduce(X[LABELS == 1])
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3)
