"""Array API fidelity (issue 18): every function's signature as ``array-api-strict``'s,
``vecdot``'s argument checks, and complex special values and signed zeros as NumPy."""

from __future__ import annotations

import inspect
import warnings

import array_api_strict as xs
import numpy as np
import pytest

import lazy_numpy as lnp

xs.set_array_api_strict_flags(api_version="2024.12")
NS = lnp.asarray(np.zeros(1)).__array_namespace__(api_version="2024.12")

# array-api-strict's own helpers and names the 2024.12 standard does not have
NOT_STANDARD = {"get_array_api_strict_flags", "reset_array_api_strict_flags",
                "set_array_api_strict_flags", "ArrayAPIStrictFlags", "Literal", "NamedTuple",
                "normalize_axis_tuple", "requires_api_version", "requires_extension",
                "device_supports_dtype", "finfo", "reshape", "conj", "astype", "eig", "eigvals"}


def _functions():
    for prefix, strict, lazy in (("", xs, NS), ("linalg.", xs.linalg, NS.linalg),
                                 ("fft.", xs.fft, NS.fft)):
        for name in sorted(dir(strict)):
            f = getattr(strict, name)
            if (name.startswith("_") or (prefix and name in NOT_STANDARD) or
                    name in NOT_STANDARD or not inspect.isfunction(f)):
                continue
            yield prefix + name, f, lazy


FUNCTIONS = list(_functions())


def _shape(sig):
    """Names, kinds and defaults (array-api-strict's ``Undef`` sentinel reads as None)."""
    return [(p.name, p.kind, None if type(p.default).__name__ == "Undef" else p.default)
            for p in sig.parameters.values()]


@pytest.mark.parametrize("name,strict,lazy", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_signature_matches_array_api_strict(name, strict, lazy):
    mine = getattr(lazy, name.split(".")[-1], None)
    assert mine is not None, f"{name} missing"
    assert _shape(inspect.signature(mine)) == _shape(inspect.signature(strict))


def test_every_standard_function_is_covered():
    assert len(FUNCTIONS) > 150


def test_elementwise_arity_is_enforced():
    x = lnp.asarray(np.ones(2))
    with pytest.raises(TypeError):
        NS.exp(x, x)
    with pytest.raises(TypeError):
        NS.add(x)


@pytest.mark.parametrize("shapes,axis", [(((3, 4), (3, 5)), -1), (((2, 3), (1, 3)), -2),
                                         (((3,), (3,)), 0), (((3,), (3,)), -2)])
def test_vecdot_rejects_as_array_api_strict(shapes, axis):
    a, b = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError):
        xs.vecdot(xs.asarray(a), xs.asarray(b), axis=axis)
    with pytest.raises(ValueError):
        NS.vecdot(lnp.asarray(a), lnp.asarray(b), axis=axis)


def test_vecdot_values():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))
    b = rng.normal(size=(3, 4))
    got = NS.vecdot(lnp.asarray(a), lnp.asarray(b), axis=-2)
    want = xs.vecdot(xs.asarray(a), xs.asarray(b), axis=-2)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -3.0]
COMPLEX = np.array([complex(a, b) for a in SPECIAL for b in SPECIAL])
# NumPy's (C99 Annex G) special values where XLA's complex kernels differ are matched for
# these in lazy_numpy's kernels; expm1, sqrt and the trigonometric/hyperbolic families
# (lazycore.ops.complex_c99) are checked in tests/numpy/test_array_api.py
COMPLEX_UNARY = ["exp", "log", "log1p", "log2", "log10", "square", "sign", "reciprocal",
                 "absolute", "negative"]


@pytest.fixture(params=["compile", "interpret"])
def tier(request):
    """Both execution tiers (the compiled program and the interpreter) give NumPy's."""
    import lazycore as lc

    if "tier" not in lc.config.CHOICES:
        yield
        return
    old = lc.settings.tier
    lc.configure(tier=request.param)
    try:
        yield
    finally:
        lc.configure(tier=old)


def _same_bits(got, want):
    """Equal, NaN where NumPy has NaN, and the same sign on zeros and infinities."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan)
        np.testing.assert_allclose(g[~nan], w[~nan], rtol=1e-12, atol=0)
        assert np.array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]))


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_special_values_match_numpy(name, tier):
    f = getattr(np, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(COMPLEX)
        got = np.asarray(f(lnp.asarray(COMPLEX)))
    assert got.dtype == want.dtype
    _same_bits(got.astype(complex), want.astype(complex))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sign_of_signed_zeros(dtype, tier):
    x = np.array([-0.0, 0.0, -2.0, 3.0, np.nan, -np.inf], dtype=dtype)
    got, want = np.asarray(NS.sign(lnp.asarray(x))), np.sign(x)
    assert got.dtype == want.dtype
    _same_bits(got.astype(complex), want.astype(complex))
