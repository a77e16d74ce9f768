"""Shared helpers: run the same code eagerly (NumPy) and lazily, compare everything."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np

import lazy_numpy as lnp

TOLERANCE = {  # (rtol, atol) by result dtype
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (2e-5, 1e-6),
    np.dtype(np.complex64): (2e-5, 1e-6),
    np.dtype(np.float64): (1e-12, 1e-13),
    np.dtype(np.complex128): (1e-12, 1e-13),
}


def lazify(x):
    """NumPy arrays (also in lists/tuples/dicts) -> LazyArrays; other values unchanged."""
    if isinstance(x, np.ndarray):
        return lnp.asarray(x)
    if isinstance(x, list):
        return [lazify(v) for v in x]
    if isinstance(x, tuple):
        return tuple(lazify(v) for v in x)
    if isinstance(x, dict):
        return {k: lazify(v) for k, v in x.items()}
    return x


def assert_same(lazy, eager, rtol=None, atol=None, check_dtype=True):
    """Values (NaN-aware, with a per-dtype tolerance), dtypes and shapes agree."""
    if isinstance(eager, tuple | list):
        assert isinstance(lazy, tuple | list), f"expected a sequence, got {type(lazy)}"
        assert len(lazy) == len(eager)
        for lv, ev in zip(lazy, eager, strict=True):
            assert_same(lv, ev, rtol, atol, check_dtype)
        return
    if isinstance(eager, np.dtype | str | type(None)):
        assert lazy == eager
        return
    if isinstance(eager, bool | int | float | complex) and not isinstance(eager, np.generic):
        assert not isinstance(lazy, lnp.LazyArray) or lazy.ndim == 0
        np.testing.assert_allclose(np.asarray(lazy), eager, rtol=rtol or 1e-12)
        return
    eager = np.asarray(eager)
    assert isinstance(lazy, lnp.LazyArray), f"expected a LazyArray, got {type(lazy)}"
    got = np.asarray(lazy)
    assert got.shape == eager.shape, f"shape {got.shape} != {eager.shape}"
    if check_dtype:
        assert got.dtype == eager.dtype, f"dtype {got.dtype} != {eager.dtype}"
    if eager.dtype.kind in "fc":
        r, a = TOLERANCE.get(eager.dtype, (1e-12, 1e-13))
        # the looser of the caller's and the dtype's tolerance
        np.testing.assert_allclose(got, eager, rtol=max(rtol or 0, r), atol=max(atol or 0, a),
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, eager)


def run_both(fn, *args, **kwargs):
    """(lazy result or exception type, eager result or exception type)."""
    results = []
    for data in (lazify(args), args):
        kw = lazify(kwargs) if data is not args else kwargs
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(fn(*data, **kw))
        except Exception as e:  # noqa: BLE001 - we compare the exception types
            results.append(e)
    return results


def check(fn, *args, rtol=None, atol=None, check_dtype=True, **kwargs):
    """``fn`` on lazy inputs behaves as ``fn`` on the NumPy inputs (results or errors)."""
    lazy, eager = run_both(fn, *args, **kwargs)
    if isinstance(eager, Exception):
        assert isinstance(lazy, Exception), f"NumPy raised {eager!r}, lazy returned"
        assert isinstance(lazy, type(eager)) or _same_family(lazy, eager), \
            f"NumPy raised {type(eager).__name__}, lazy raised {type(lazy).__name__}: {lazy}"
        return
    if isinstance(lazy, Exception):
        raise lazy
    assert_same(lazy, eager, rtol, atol, check_dtype)


def _same_family(lazy, eager) -> bool:
    for base in (np.exceptions.AxisError, np.linalg.LinAlgError, OverflowError, IndexError,
                 ValueError, TypeError):
        if isinstance(eager, base):
            return isinstance(lazy, base)
    return False


def check_many(fn, cases, rtol=None, atol=None, check_dtype=True):
    """``check`` for many argument tuples with ONE sync (one compile) for all of them.

    Each case is ``args`` or ``(args, {"rtol": .., "atol": ..})``."""
    pending = []
    for case in cases:
        args, tol = (case if isinstance(case, tuple) and len(case) == 2 and
                     isinstance(case[1], dict) else (case, {}))
        pending.append((args, tol, *run_both(fn, *args)))
    lnp.sync()
    for args, tol, lazy, eager in pending:
        dtypes = [getattr(a, "dtype", type(a).__name__) for a in args]
        try:
            if isinstance(eager, Exception):
                assert isinstance(lazy, Exception), f"NumPy raised {eager!r}, lazy returned"
                assert isinstance(lazy, type(eager)) or _same_family(lazy, eager), \
                    f"NumPy raised {type(eager).__name__}, lazy raised {type(lazy).__name__}"
                continue
            if isinstance(lazy, Exception):
                raise AssertionError(f"lazy raised {lazy!r}") from lazy
            assert_same(lazy, eager, tol.get("rtol", rtol), tol.get("atol", atol),
                        check_dtype)
        except AssertionError as e:
            raise AssertionError(f"case with input dtypes {dtypes}: {e}") from e


def assert_program_matches_numpy(program, rtol, atol, seed=None):
    """``program(np)`` run with NumPy and with lazy_numpy as ``np`` (the global random
    state reseeded with ``seed`` first, if given): the same printed output, and its
    returned arrays with the same shapes, dtypes and values."""
    results = []
    for module in (np, lnp):
        if seed is not None:
            np.random.seed(seed)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            values = program(module)
        results.append(([np.asarray(v) for v in values], out.getvalue()))
    (want, want_out), (got, got_out) = results
    assert got_out == want_out
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
