"""Table-driven conformance of the ``__array_function__`` implementations against NumPy.

Each row: a name, a callable using NumPy's API, and argument tuples. Every row is run
on NumPy inputs and on LazyArrays; values, dtypes, shapes and exception types must
agree. The rows of one test are synced together (one compile per row).
"""

from __future__ import annotations

import numpy as np
import pytest
from lnp_testing import check, check_many

import lazy_numpy as lnp
from lazy_numpy._registry import FUNCTIONS

RNG = np.random.default_rng(1)
F = RNG.standard_normal((3, 4, 5))
M = RNG.standard_normal((4, 4))
V = RNG.standard_normal(6)
I = RNG.integers(-5, 6, size=(3, 4))  # noqa: E741 - an integer sample
B = RNG.random((3, 4)) > 0.5
F32 = F.astype(np.float32)
NAN = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [4.0, 5.0, 6.0]])
SPD = M @ M.T + 4 * np.eye(4)
C = (RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4)))

TABLE = [
    # reductions
    ("sum", np.sum, [(F,), (I,), (B,), (F32,)], {}),
    ("sum-axis", lambda a: np.sum(a, axis=(0, 2), keepdims=True), [(F,), (I,)], {}),
    ("sum-dtype", lambda a: np.sum(a, axis=1, dtype=np.float32), [(I,)], {}),
    ("prod", lambda a: np.prod(a, axis=-1), [(F,), (I,)], {}),
    ("max", lambda a: np.max(a, axis=1), [(F,), (I,), (NAN,)], {}),
    ("min", lambda a: (np.min(a), np.amin(a, axis=1)), [(F,), (I,), (NAN,)], {}),
    ("amax", lambda a: np.amax(a, axis=0, keepdims=True), [(F,)], {}),
    ("any-all", lambda a: (np.any(a, axis=0), np.all(a)), [(B,), (I,), (F,)], {}),
    ("mean", lambda a: np.mean(a, axis=1), [(F,), (I,), (F32,), (B,)], {}),
    ("mean-f16", lambda a: np.mean(a), [(F.astype(np.float16),)], {"rtol": 5e-3}),
    ("var-std", lambda a: (np.var(a, axis=0), np.std(a, ddof=1)), [(F,), (I,), (C,)], {}),
    ("ptp", lambda a: np.ptp(a, axis=1), [(F,), (I,)], {}),
    ("argmax", lambda a: (np.argmax(a), np.argmax(a, axis=1), np.argmin(a, axis=0)),
     [(F,), (I,), (NAN,)], {}),
    ("argmax-keepdims", lambda a: np.argmax(a, axis=1, keepdims=True), [(F,)], {}),
    ("cumsum", lambda a: (np.cumsum(a), np.cumsum(a, axis=1), np.cumprod(a, axis=0)),
     [(F,), (I,), (B,)], {}),
    ("cumulative_sum", lambda a: (np.cumulative_sum(a, axis=0, include_initial=True),
                                  np.cumulative_prod(a, axis=1)), [(F,)], {}),
    ("nan-reductions", lambda a: (np.nansum(a), np.nanmax(a, axis=1), np.nanmin(a, axis=0),
                                  np.nanmean(a, axis=1), np.nanprod(a, axis=0)),
     [(NAN,)], {}),
    ("nanvar", lambda a: (np.nanvar(a, axis=1), np.nanstd(a, axis=0, ddof=1)), [(NAN,)], {}),
    ("median", lambda a: (np.median(a), np.median(a, axis=1)), [(F,), (I,), (NAN,)], {}),
    ("quantile", lambda a: (np.quantile(a, 0.3), np.quantile(a, [0.1, 0.9], axis=0),
                            np.percentile(a, 75, axis=1, keepdims=True)), [(F,), (I,)], {}),
    ("average", lambda a: (np.average(a, axis=1, weights=np.arange(1.0, 5.0)),
                           np.average(a)), [(F[0],), (I,)], {}),
    ("count_nonzero", lambda a: (np.count_nonzero(a, axis=0),), [(I,), (B,)], {}),
    # sorting / searching
    ("sort", lambda a: (np.sort(a), np.sort(a, axis=0), np.sort(a, axis=None)),
     [(F,), (I,), (NAN,)], {}),
    ("argsort", lambda a: (np.argsort(a, kind="stable"), np.argsort(a, axis=0, stable=True)),
     [(F,), (I,)], {}),
    ("searchsorted", lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right")),
     [(np.array([1.0, 2.0, 2.0, 5.0]), np.array([0.5, 2.0, 7.0, 2.0]))], {}),
    ("partition-kth", lambda a: np.partition(a, 2)[..., 2], [(F,)], {}),
    # shape manipulation
    ("reshape", lambda a: (np.reshape(a, (4, -1)), a.reshape(2, 6), np.ravel(a)), [(I,)], {}),
    ("reshape-bad", lambda a: np.reshape(a, (5, 5)), [(I,)], {}),
    ("transpose", lambda a: (np.transpose(a), np.transpose(a, (1, 0, 2)), a.T),
     [(F,)], {}),
    ("swap-move", lambda a: (np.swapaxes(a, 0, 2), np.moveaxis(a, 0, -1),
                             np.rollaxis(a, 2)), [(F,)], {}),
    ("squeeze-expand", lambda a: (np.squeeze(np.expand_dims(a, (0, 2))),
                                  np.expand_dims(a, -1)), [(I,)], {}),
    ("squeeze-bad", lambda a: np.squeeze(a, axis=0), [(I,)], {}),
    ("atleast", lambda a: (np.atleast_1d(a), np.atleast_2d(a), np.atleast_3d(a)),
     [(V,), (I,), (np.array(3.0),)], {}),
    ("broadcast", lambda a, b: (np.broadcast_to(a, (2, 3, 4)), *np.broadcast_arrays(a, b)),
     [(I, V[:4]), (I, I[:1])], {}),
    ("broadcast-bad", lambda a: np.broadcast_to(a, (3, 5)), [(I,)], {}),
    ("concatenate", lambda a, b: (np.concatenate([a, b]), np.concatenate([a, b], axis=1),
                                  np.concatenate([a, b], axis=None)), [(I, F[0, :3]), (I, B)],
     {}),
    ("concatenate-bad", lambda a, b: np.concatenate([a, b]), [(I, V)], {}),
    ("stack", lambda a, b: (np.stack([a, b]), np.stack([a, b], axis=-1), np.vstack([a, b]),
                            np.hstack([a, b]), np.dstack([a, b]), np.column_stack([a, b])),
     [(I, I * 2.5)], {}),
    ("stack-1d", lambda a: (np.vstack([a, a]), np.hstack([a, a]), np.column_stack([a, a])),
     [(V,)], {}),
    ("split", lambda a: (np.split(a, 2, axis=1), np.array_split(a, 3, axis=1),
                         np.split(a, [1, 3], axis=1), np.hsplit(a, 2), np.vsplit(a, 3)),
     [(I,)], {}),
    ("split-bad", lambda a: np.split(a, 3, axis=1), [(I,)], {}),
    ("flip-roll", lambda a: (np.flip(a), np.flip(a, 1), np.fliplr(a), np.flipud(a),
                             np.roll(a, 2), np.roll(a, -1, axis=1),
                             np.roll(a, (1, 2), axis=(0, 1))), [(I,)], {}),
    ("rot90", lambda a: (np.rot90(a), np.rot90(a, 2), np.rot90(a, 3), np.rot90(a, -1, (1, 0))),
     [(I,)], {}),
    ("tile-repeat", lambda a: (np.tile(a, 2), np.tile(a, (2, 1, 2)), np.repeat(a, 3),
                               np.repeat(a, 2, axis=1), np.repeat(a, [1, 0, 2], axis=0)),
     [(I,)], {}),
    ("diag", lambda a: (np.diagonal(a), np.diagonal(a, 1), np.diag(a), np.diag(a, -1),
                        np.trace(a), np.tril(a), np.triu(a, 1), np.diag(a[0]),
                        np.diag(a[0], 2), np.diagflat(a[:2, :2])), [(M,), (I,)], {}),
    ("pad", lambda a: (np.pad(a, 1), np.pad(a, ((1, 2), (0, 1)), constant_values=7),
                       np.pad(a, 2, mode="edge"), np.pad(a, (1, 3), mode="wrap"),
                       np.pad(a, ((1, 5), (7, 0)), mode="reflect"),
                       np.pad(a, ((4, 1), (2, 9)), mode="symmetric")),
     [(I,)], {}),
    ("append", lambda a: (np.append(a, a), np.append(a, a, axis=0)), [(I,)], {}),
    ("meshgrid", lambda a, b: (*np.meshgrid(a, b), *np.meshgrid(a, b, indexing="ij"),
                               *np.meshgrid(a, b, sparse=True)), [(V[:3], V[:4])], {}),
    # selection
    ("where", lambda c, a, b: (np.where(c, a, b), np.where(c, a, 0.5), np.where(c, 1, 2)),
     [(B, I, F[0, :3, :4]), (B, I, I)], {}),
    ("select", lambda a: np.select([a < 0, a > 2], [a, a * 10], default=-1), [(I,), (F,)],
     {}),
    ("take", lambda a: (np.take(a, [0, 2, -1]), np.take(a, [[0, 1]], axis=1),
                        np.take(a, [5, -7], mode="wrap"), np.take(a, [9, -9], mode="clip")),
     [(I,)], {}),
    ("take-bad", lambda a: np.take(a, [100]), [(I,)], {}),
    ("take_along_axis", lambda a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1),
     [(F[0],)], {}),
    ("compress-extract", lambda a: (np.compress([True, False, True], a, axis=0),
                                    np.extract(a > 0, a)), [(I,)], {}),
    ("clip", lambda a: (np.clip(a, -1, 2), np.clip(a, None, 0.5), np.clip(a, min=0),
                        a.clip(-2, 2)), [(F,), (I,)], {}),
    ("round", lambda a: (np.round(a), np.round(a, 2), np.around(a, -1), a.round(1)),
     [(F * 100,), (I,)], {}),
    ("real-imag", lambda a: (np.real(a), np.imag(a), np.angle(a), np.conj(a),
                             np.angle(a, deg=True)), [(C,), (F,)], {}),
    ("isclose", lambda a, b: (np.isclose(a, b), np.isclose(a, b, atol=0.5),
                              np.isclose(a, a, equal_nan=True)), [(F, F + 1e-9), (NAN, NAN)],
     {}),
    ("allclose", lambda a, b: (np.allclose(a, b), np.array_equal(a, b),
                               np.array_equal(a, a)), [(F, F + 1e-9), (I, I + 1)], {}),
    ("nan_to_num", lambda a: (np.nan_to_num(a), np.nan_to_num(a, nan=-1.0, posinf=9.0)),
     [(np.array([1.0, np.nan, np.inf, -np.inf]),)], {}),
    ("sinc", np.sinc, [(V,), (np.array([0.0, 0.5]),)], {}),
    ("diff", lambda a: (np.diff(a), np.diff(a, n=2, axis=0), np.diff(a, prepend=0),
                        np.diff(a > 0)), [(I,), (F[0],)], {}),
    ("cov", lambda a: (np.cov(a), np.cov(a, rowvar=False), np.cov(a, bias=True),
                       np.corrcoef(a)), [(F[0],), (I,)], {}),
    ("like", lambda a: (np.zeros_like(a), np.ones_like(a, dtype=np.float32),
                        np.full_like(a, 7), np.full_like(a, 2.5, dtype=float),
                        np.empty_like(a).shape, np.copy(a)), [(I,), (F,)], {}),
    ("shape-size", lambda a: (np.shape(a), np.ndim(a), np.size(a)), [(F,)], {}),
    # products and linalg
    ("dot", lambda a, b: (np.dot(a, b), a @ b, np.matmul(a, b), np.inner(a, b),
                          np.tensordot(a, b, 1), np.einsum("ij,jk->ik", a, b)),
     [(M, M), (I[:, :3], I[:3])], {}),
    ("dot-nd", lambda a, b: (np.dot(a, b), np.tensordot(a, b, axes=([1, 2], [0, 1]))),
     [(F, F.transpose(1, 2, 0))], {}),
    ("dot-vector", lambda a, b: (np.dot(a, b), np.vdot(a, b), np.outer(a, b), np.inner(a, b),
                                 np.kron(a, b)), [(V, V * 2), (C[0], C[1])], {}),
    ("dot-bad", lambda a, b: np.dot(a, b), [(M, V)], {}),
    ("einsum", lambda a, b: (np.einsum("ijk->kj", a), np.einsum("ijk,jl->ikl", a, b),
                             np.einsum("ii", b), np.einsum("ij,ij->", b, b)),
     [(F[:, :4], M)], {}),
    ("cross", lambda a, b: np.cross(a, b), [(F[:, :, :3].reshape(-1, 3),
                                             F[:, :, 2:].reshape(-1, 3))], {}),
    ("linalg", lambda a: (np.linalg.inv(a), np.linalg.det(a), *np.linalg.slogdet(a),
                          np.linalg.solve(a, a[0]), np.linalg.solve(a, a),
                          np.linalg.matrix_power(a, 3), np.linalg.matrix_power(a, -2),
                          np.linalg.matrix_power(a, 0), np.linalg.pinv(a),
                          np.linalg.matrix_rank(a), np.linalg.multi_dot([a, a, a])),
     [(SPD,), (I[:3, :3] + 10 * np.eye(3, dtype=int),)], {"rtol": 1e-9, "atol": 1e-10}),
    ("cholesky", lambda a: (np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True),
                            np.linalg.eigvalsh(a), np.linalg.svd(a, compute_uv=False),
                            np.abs(np.linalg.eigh(a).eigenvectors),
                            np.linalg.eigh(a).eigenvalues),
     [(SPD,)], {"rtol": 1e-9, "atol": 1e-10}),
    ("qr-svd-reconstruct", lambda a: (np.matmul(*np.linalg.qr(a)),
                                      (np.linalg.svd(a).U * np.linalg.svd(a).S) @
                                      np.linalg.svd(a).Vh, np.abs(np.linalg.qr(a, "r"))),
     [(M,)], {"rtol": 1e-9, "atol": 1e-10}),
    ("linalg-bad", lambda a: np.linalg.inv(a), [(F[0],), (V,)], {}),
    ("norm", lambda a: (np.linalg.norm(a), np.linalg.norm(a, axis=1),
                        np.linalg.norm(a, ord=1, axis=0), np.linalg.norm(a, np.inf, axis=1),
                        np.linalg.norm(a, 3, axis=1), np.linalg.norm(a, "fro"),
                        np.linalg.norm(a, 1), np.linalg.norm(a, -np.inf),
                        np.linalg.norm(a, axis=1, keepdims=True)), [(M,), (I,), (C,)], {}),
    ("fft", lambda a: (np.fft.fft(a), np.fft.ifft(a), np.fft.fft(a, n=8, axis=0),
                       np.fft.fft(a, norm="ortho"), np.fft.ifft(a, norm="forward"),
                       np.fft.fft2(a), np.fft.ifft2(a), np.fft.fftn(a)),
     [(M,), (C,), (M.astype(np.float32),)], {"rtol": 1e-9, "atol": 1e-9}),
    ("rfft", lambda a: (np.fft.rfft(a), np.fft.irfft(np.fft.rfft(a)), np.fft.rfft(a, n=7),
                        np.fft.irfft(np.fft.rfft(a), n=5), np.fft.rfft2(a),
                        np.fft.irfft2(np.fft.rfft2(a)), np.fft.rfftn(a, axes=(0,))),
     [(M,), (F,)], {"rtol": 1e-9, "atol": 1e-9}),
    ("fftshift", lambda a: (np.fft.fftshift(a), np.fft.ifftshift(a, axes=1)), [(I,)], {}),
    # data-dependent shapes
    ("nonzero", lambda a: (np.nonzero(a), np.argwhere(a), np.flatnonzero(a)), [(I,), (B,)],
     {}),
    ("unique", lambda a: (np.unique(a), *np.unique(a, return_index=True, return_inverse=True,
                                                   return_counts=True),
                          np.sort(np.unique_values(a))), [(I,), (B,)], {}),
]


@pytest.mark.parametrize("name,fn,cases,tol", TABLE, ids=[row[0] for row in TABLE])
def test_function(name, fn, cases, tol):
    check_many(fn, cases, **tol)


def test_table_covers_registered_functions():
    """Every function in the dispatch table appears in some conformance row."""
    import inspect

    source = inspect.getsource(inspect.getmodule(test_table_covers_registered_functions))
    missing = []
    for func in FUNCTIONS:
        name = func.__name__
        if f"{name}(" not in source and f"np.{name}," not in source:
            missing.append(name)
    allowed = {"result_type", "can_cast", "iscomplexobj", "isrealobj", "shares_memory",
               "may_share_memory", "astype", "matrix_transpose", "copyto", "putmask",
               "place", "isreal", "iscomplex", "dsplit", "svdvals", "outer", "tensordot",
               "matmul", "vecdot", "trace", "diagonal", "unique_inverse", "unique_all",
               "row_stack", "argpartition", "irfftn", "ifftn", "rfftn", "irfft2"}
    assert sorted(set(missing) - allowed) == []


def test_small_functions():
    check(lambda a: (np.result_type(a, 1.5), np.can_cast(a, np.float32),
                     np.iscomplexobj(a), np.isrealobj(a)), np.arange(3, dtype=np.int8))
    check(lambda a: (np.isreal(a), np.iscomplex(a)), np.array([1 + 0j, 2j]))
    check(lambda a: np.astype(a, np.float32), np.arange(3))
    check(lambda a: np.matrix_transpose(a), F)
    check(lambda a: np.linalg.svdvals(a), M, rtol=1e-9)
    check(lambda a: (np.fft.ifftn(a), np.fft.irfftn(np.fft.rfftn(a))), F, rtol=1e-9,
          atol=1e-9)
    check(lambda a: np.argpartition(a, 1)[..., :1], np.array([[3, 1, 2], [0, -1, 5]]))
    check(lambda a: np.dsplit(a, 5), F)
    check(lambda a: np.lib.stride_tricks.sliding_window_view(a, (2, 3), axis=(0, -1)), F)
    # NumPy 2.3+ leaves unique_* unsorted; compare sorted values and consistent parts
    values, index, inverse, counts = np.unique_all(lnp.asarray(I))
    ref = np.unique(I, return_index=True, return_inverse=True, return_counts=True)
    for got, want in zip((values, index, inverse, counts), ref, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    values, counts = np.unique_counts(lnp.asarray(I))
    np.testing.assert_array_equal(np.asarray(counts), ref[3])
    values, inverse = np.unique_inverse(lnp.asarray(I))
    np.testing.assert_array_equal(np.asarray(values)[np.asarray(inverse)], I)


def test_nep35_like_creation(counters):
    proto = lnp.asarray(np.ones(2))
    cases = [(np.zeros((2, 3), like=proto), np.zeros((2, 3))),
             (np.ones(3, dtype=np.int8, like=proto), np.ones(3, dtype=np.int8)),
             (np.empty(2, like=proto).shape, (2,)), (np.full(2, 7.5, like=proto), np.full(2, 7.5)),
             (np.arange(1, 7, 2, like=proto), np.arange(1, 7, 2)),
             (np.eye(3, k=1, like=proto), np.eye(3, k=1)), (np.identity(2, like=proto),
                                                            np.identity(2)),
             (np.array([1, 2], like=proto), np.array([1, 2])),
             (np.asarray([1.5], like=proto), np.asarray([1.5])),
             (np.asanyarray([[1]], like=proto), np.asanyarray([[1]])),
             (np.tri(3, like=proto), np.tri(3))]
    for got, want in cases:
        if isinstance(want, tuple):
            assert got == want
        else:
            assert isinstance(got, lnp.LazyArray)
            np.testing.assert_array_equal(np.asarray(got), want)
            assert got.dtype == want.dtype
    assert counters()["fallbacks"] == 0


def test_copyto_and_putmask_are_in_place():
    a = lnp.asarray(np.zeros(4))
    np.copyto(a, np.arange(4.0), where=np.array([True, False, True, False]))
    np.testing.assert_array_equal(np.asarray(a), [0, 0, 2, 0])
    np.putmask(a, np.asarray(a) == 0, 9.0)
    np.testing.assert_array_equal(np.asarray(a), [9, 9, 2, 9])
    with pytest.raises(TypeError):
        np.copyto(lnp.asarray(np.zeros(2, int)), np.ones(2))


def test_axis_errors_are_numpy_axiserror():
    a = lnp.asarray(F)
    for call in (lambda: np.sum(a, axis=3), lambda: np.argmax(a, axis=-4),
                 lambda: np.cumsum(a, axis=5), lambda: np.concatenate([a, a], axis=3),
                 lambda: np.sort(a, axis=3), lambda: np.expand_dims(a, 5)):
        with pytest.raises(np.exceptions.AxisError):
            call()


def test_mirror_padding_is_traced():
    """``reflect``/``symmetric`` (image borders) are gathers in the trace, not a fallback."""
    import lazycore as lc

    a = np.arange(12.0).reshape(3, 4)
    before = lc.metrics.counters().get("fallbacks", 0)
    for mode in ("reflect", "symmetric"):
        got = lnp.pad(lnp.asarray(a), ((2, 5), (3, 1)), mode=mode)
        np.testing.assert_array_equal(np.asarray(got), np.pad(a, ((2, 5), (3, 1)), mode=mode))
    assert lc.metrics.counters().get("fallbacks", 0) == before
