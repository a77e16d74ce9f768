"""Primitives that need bespoke checks: multi-output, random, indexing, conv, fft, linalg."""

import numpy as np
import pytest

import lazycore as lc
from lazycore import ops


def A(x):
    return lc.asarray(np.asarray(x))


def N(t):
    return lc.to_numpy(t)


def test_sort_multi_operand_and_descending(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.broadcast_to(np.arange(5), (3, 5)).copy()
    s, i = ops.sort(A(x), A(idx), dimension=1, num_keys=1)
    np.testing.assert_array_equal(N(s), np.sort(x, axis=1))
    np.testing.assert_array_equal(N(i), np.argsort(x, axis=1, kind="stable"))
    (d,) = ops.sort(A(x), dimension=0, descending=True)
    np.testing.assert_array_equal(N(d), -np.sort(-x, axis=0))
    ints = np.array([3, -2, 7, 0], dtype=np.int32)
    (di,) = ops.sort(A(ints), dimension=0, descending=True)
    np.testing.assert_array_equal(N(di), [7, 3, 0, -2])


def test_top_k(rng):
    x = rng.standard_normal((2, 6)).astype(np.float64)
    v, i = ops.top_k(A(x), k=3)
    np.testing.assert_array_equal(N(v), -np.sort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(x, N(i), 1), N(v))


def test_gather_and_scatter_family(rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    rows = np.array([[4], [0], [2]], dtype=np.int64)
    g = ops.gather(A(x), A(rows), offset_dims=(1,), collapsed_slice_dims=(0,),
                   start_index_map=(0,), slice_sizes=(1, 3))
    np.testing.assert_array_equal(N(g), x[[4, 0, 2]])
    upd = np.ones((3, 3), np.float32)
    dnums = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                 scatter_dims_to_operand_dims=(0,))
    dup = np.array([[1], [1], [3]], dtype=np.int64)
    expected_add = x.copy()
    np.add.at(expected_add, [1, 1, 3], upd)
    np.testing.assert_allclose(N(ops.scatter_add(A(x), A(dup), A(upd), **dnums)), expected_add)
    expected_set = x.copy()
    expected_set[[4, 0, 2]] = upd
    np.testing.assert_array_equal(N(ops.scatter(A(x), A(rows), A(upd), **dnums)), expected_set)
    expected_max = x.copy()
    np.maximum.at(expected_max, [1, 1, 3], upd)
    np.testing.assert_array_equal(N(ops.scatter_max(A(x), A(dup), A(upd), **dnums)),
                                  expected_max)
    expected_min = x.copy()
    np.minimum.at(expected_min, [1, 1, 3], upd)
    np.testing.assert_array_equal(N(ops.scatter_min(A(x), A(dup), A(upd), **dnums)),
                                  expected_min)
    expected_mul = x.copy()
    np.multiply.at(expected_mul, [1, 1, 3], upd * 2)
    np.testing.assert_allclose(N(ops.scatter_mul(A(x), A(dup), A(upd * 2), **dnums)),
                               expected_mul)


def test_dynamic_slice_and_update(rng):
    x = rng.standard_normal((4, 5))
    start = [lc.scalar(1, np.int64), lc.scalar(2, np.int64)]
    np.testing.assert_array_equal(N(ops.dynamic_slice(A(x), *start, slice_sizes=(2, 3))),
                                  x[1:3, 2:5])
    upd = np.zeros((2, 2))
    out = x.copy()
    out[1:3, 2:4] = 0
    np.testing.assert_array_equal(N(ops.dynamic_update_slice(A(x), A(upd), *start)), out)


def test_iota_convert_bitcast_select():
    np.testing.assert_array_equal(N(ops.iota(dtype=np.int32, shape=(2, 3), dimension=1)),
                                  np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))
    z = np.array([1.5 + 2j, -3 + 0j])
    np.testing.assert_array_equal(N(ops.convert(A(z), dtype=np.float64)), [1.5, -3.0])
    f = np.array([0.0, -0.0, 2.5, np.nan])
    np.testing.assert_array_equal(N(ops.convert(A(f), dtype=np.bool_)), f.astype(bool))
    np.testing.assert_array_equal(N(ops.convert(A(np.array([2.7, -2.7])), dtype=np.int32)),
                                  [2, -2])
    b = N(ops.bitcast_convert(A(np.array([1.0], np.float32)), dtype=np.int32))
    assert b[0] == np.array([1.0], np.float32).view(np.int32)[0]
    p = np.array([True, False])
    np.testing.assert_array_equal(N(ops.select(A(p), A(np.array([1, 2])), A(np.array([3, 4])))),
                                  [1, 4])
    np.testing.assert_array_equal(N(ops.clz(A(np.array([1, 255], np.uint8)))), [7, 0])


def test_conv_matches_direct_loop(rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float64)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float64)
    out = N(ops.conv_general_dilated(A(x), A(w), window_strides=(1, 1), padding=((0, 0), (0, 0)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW")))
    ref = np.zeros((1, 3, 3, 3))
    for o in range(3):
        for i in range(3):
            for j in range(3):
                ref[0, o, i, j] = np.sum(x[0, :, i:i + 3, j:j + 3] * w[o])
    np.testing.assert_allclose(out, ref, rtol=1e-10)


def test_fft(rng):
    from jax import lax

    x = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    out = N(ops.fft(A(x), fft_type=lax.FftType.FFT, fft_lengths=(8,)))
    np.testing.assert_allclose(out, np.fft.fft(x), rtol=1e-10, atol=1e-10)
    r = rng.standard_normal(8)
    np.testing.assert_allclose(N(ops.fft(A(r), fft_type=lax.FftType.RFFT, fft_lengths=(8,))),
                               np.fft.rfft(r), rtol=1e-10, atol=1e-10)


def test_random_ops_are_deterministic_per_key():
    key = ops.rng_key(lc.scalar(7, np.int64), lc.scalar(3, np.int64))
    a = N(ops.random_normal(key, shape=(1000,), dtype=np.float32))
    b = N(ops.random_normal(ops.rng_key(lc.scalar(7, np.int64), lc.scalar(3, np.int64)),
                            shape=(1000,), dtype=np.float32))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and abs(a.mean()) < 0.15 and abs(a.std() - 1) < 0.1
    u = N(ops.random_uniform(key, shape=(1000,), dtype=np.float64))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    bits = N(ops.random_bits(key, shape=(4,), dtype=np.uint32))
    assert bits.dtype == np.uint32
    ints = N(ops.random_randint(key, lc.scalar(2, np.int64), lc.scalar(5, np.int64),
                                shape=(100,), dtype=np.int64))
    assert set(np.unique(ints)) <= {2, 3, 4}
    perm = N(ops.random_permutation(key, n=10))
    assert sorted(perm.tolist()) == list(range(10))


def test_generator_stream_and_reseed():
    g = lc.random.Generator(5)
    first = [N(g.normal((3,))) for _ in range(2)]
    assert not np.array_equal(first[0], first[1])
    g.manual_seed(5)
    again = N(g.normal((3,)))
    np.testing.assert_array_equal(first[0], again)


def test_nonzero_and_unique():
    m = np.array([[True, False], [True, True]])
    i, j = ops.nonzero(A(m), size=3)
    np.testing.assert_array_equal(N(i), np.nonzero(m)[0])
    np.testing.assert_array_equal(N(j), np.nonzero(m)[1])
    x = np.array([3, 1, 3, 2, 1])
    np.testing.assert_array_equal(N(ops.unique(A(x), size=3)), [1, 2, 3])
    values, first, inverse, counts = ops.unique_all(A(x), size=3)
    ref = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, want in zip((values, first, inverse, counts), ref, strict=True):
        np.testing.assert_array_equal(N(got), want)


def test_linalg_decompositions(rng):
    a = rng.standard_normal((4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    q, r = ops.linalg_qr(A(a))
    np.testing.assert_allclose(N(q) @ N(r), a, atol=1e-10)
    w, v = ops.linalg_eigh(A(spd))
    np.testing.assert_allclose(N(v) @ np.diag(N(w)) @ N(v).T, spd, atol=1e-8)
    u, s, vt = ops.linalg_svd(A(a), full_matrices=False)
    np.testing.assert_allclose(N(u) @ np.diag(N(s)) @ N(vt), a, atol=1e-10)
    sign, logdet = ops.linalg_slogdet(A(a))
    ref = np.linalg.slogdet(a)
    np.testing.assert_allclose([N(sign), N(logdet)], [ref.sign, ref.logabsdet], rtol=1e-10)
    c = N(ops.linalg_cholesky(A(spd)))
    np.testing.assert_allclose(c, np.linalg.cholesky(spd), rtol=1e-10)
    b = rng.standard_normal((4, 2))
    sol = N(ops.linalg_triangular_solve(A(c), A(b), left_side=True, lower=True))
    np.testing.assert_allclose(c @ sol, b, atol=1e-10)
    x, *_ = ops.linalg_lstsq(A(a), A(b))
    np.testing.assert_allclose(N(x), np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-8)
    assert int(N(ops.linalg_matrix_rank(A(a)))) == 4


def test_multi_output_projection_shares_one_node():
    x = A(np.array([3.0, 1.0, 2.0]))
    v, i = ops.top_k(x, k=2)
    assert v.node.operands[0] is i.node.operands[0]
    lc.sync()
    np.testing.assert_array_equal(N(v), [3.0, 2.0])


@pytest.mark.parametrize("bad", [
    lambda: ops.add(A(np.ones(3)), A(np.ones(4))),
    lambda: ops.add(A(np.ones(3)), A(np.ones(3, np.float32))),
    lambda: ops.dot_general(A(np.ones((2, 3))), A(np.ones((4, 2))), contracting=((1,), (0,)),
                            batch=((), ())),
    lambda: ops.reshape(A(np.ones(6)), new_sizes=(4, 2)),
    lambda: ops.exp(A(np.ones(3, np.int32))),
    lambda: ops.conv_general_dilated(A(np.ones((1, 2, 5, 5))), A(np.ones((3, 4, 3, 3))),
                                     window_strides=(1, 1), padding=((0, 0), (0, 0)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW")),
])
def test_bad_input_raises_at_the_call(bad):
    before = lc.metrics.counters()["traced_ops"]
    with pytest.raises(lc.LazyError) as info:
        bad()
    assert info.value.op is not None and info.value.op in str(info.value)
    assert lc.metrics.counters()["traced_ops"] == before  # nothing was recorded
