"""Composites shared by the frontends, each against a NumPy (or direct) reference."""

import numpy as np
import pytest
from scipy import special

import lazycore as lc
from lazycore import numeric as nm
from lazycore.composites import bits

R = np.random.default_rng(3)
X = R.standard_normal((3, 4, 5))
M = R.standard_normal((4, 6))
K = R.standard_normal((5, 6))
I = R.integers(-4, 9, size=(3, 5)).astype(np.int32)  # noqa: E741


def A(x):
    return lc.asarray(x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CASES = {
    "sum_axis_keepdims": (lambda: nm.sum(A(X), (0, 2), keepdims=True),
                          lambda: X.sum((0, 2), keepdims=True)),
    "sum_int_promotes": (lambda: nm.sum(A(I)), lambda: I.sum()),
    "prod_neg_axis": (lambda: nm.prod(A(X), -1), lambda: X.prod(-1)),
    "max_min": (lambda: nm.elementwise("sub", nm.max(A(X), 1), nm.min(A(X), 1)),
                lambda: X.max(1) - X.min(1)),
    "any_all": (lambda: nm.elementwise("and", nm.any(A(I > 3), 0), nm.all(A(I > -5), 0)),
                lambda: (I > 3).any(0) & (I > -5).all(0)),
    "mean_int_is_float64": (lambda: nm.mean(A(I), 1), lambda: I.mean(1)),
    "var_ddof1": (lambda: nm.var(A(X), 2, correction=1), lambda: X.var(2, ddof=1)),
    "std": (lambda: nm.std(A(X), None), lambda: X.std()),
    "logsumexp": (lambda: nm.logsumexp(A(X), 1), lambda: special.logsumexp(X, 1)),
    "argmax_flat": (lambda: nm.argmax(A(X)), lambda: X.argmax()),
    "argmin_axis_keepdims": (lambda: nm.argmin(A(X), 1, keepdims=True),
                             lambda: X.argmin(1, keepdims=True)),
    "cumsum_flat": (lambda: nm.cumulative("cumsum", A(I)), lambda: np.cumsum(I)),
    "cumprod_axis": (lambda: nm.cumulative("cumprod", A(X), 1), lambda: np.cumprod(X, 1)),
    "matmul_2d": (lambda: nm.matmul(A(X[0]), A(K)), lambda: X[0] @ K),
    "matmul_batched_broadcast": (lambda: nm.matmul(A(X), A(K)), lambda: X @ K),
    "matmul_vec_mat": (lambda: nm.matmul(A(M[:, 0]), A(M)), lambda: M[:, 0] @ M),
    "matmul_mat_vec": (lambda: nm.matmul(A(X), A(K[:, 0])), lambda: X @ K[:, 0]),
    "matmul_vec_vec": (lambda: nm.matmul(A(M[:, 0]), A(M[:, 1])), lambda: M[:, 0] @ M[:, 1]),
    "tensordot": (lambda: nm.tensordot(A(X), A(X[0]), ([1, 2], [0, 1])),
                  lambda: np.tensordot(X, X[0], ([1, 2], [0, 1]))),
    "einsum": (lambda: nm.einsum("abc,bd->acd", A(X), A(M)),
               lambda: np.einsum("abc,bd->acd", X, M)),
    "softmax": (lambda: nm.softmax(A(X), 1), lambda: _softmax(X, 1)),
    "log_softmax": (lambda: nm.log_softmax(A(X), -1), lambda: np.log(_softmax(X, -1))),
    "relu": (lambda: nm.relu(A(X)), lambda: np.maximum(X, 0)),
    "gelu": (lambda: nm.gelu(A(X)), lambda: X * 0.5 * (1 + special.erf(X / np.sqrt(2)))),
    "silu": (lambda: nm.silu(A(X)), lambda: X * special.expit(X)),
    "layer_norm": (lambda: nm.layer_norm(A(X), 1, A(np.arange(5.0)), A(np.ones(5))),
                   lambda: (X - X.mean(-1, keepdims=True)) / np.sqrt(
                       X.var(-1, keepdims=True) + 1e-5) * np.arange(5.0) + 1),
    "reshape_infer": (lambda: nm.reshape(A(X), (-1, 10)), lambda: X.reshape(-1, 10)),
    "expand_squeeze": (lambda: nm.squeeze(nm.expand_dims(A(X), (0, 2))), lambda: X),
    "transpose_default": (lambda: nm.transpose(A(X)), lambda: X.T),
    "moveaxis": (lambda: nm.moveaxis(A(X), 0, -1), lambda: np.moveaxis(X, 0, -1)),
    "concatenate": (lambda: nm.concatenate([A(X), A(X)], 1), lambda: np.concatenate([X, X], 1)),
    "stack": (lambda: nm.stack([A(M), A(M)], -1), lambda: np.stack([M, M], -1)),
    "split_sections": (lambda: nm.split(A(M), 3, 1)[1], lambda: np.split(M, 3, 1)[1]),
    "split_indices": (lambda: nm.split(A(M), [1, 3], 0)[2], lambda: np.split(M, [1, 3], 0)[2]),
    "flip": (lambda: nm.flip(A(X), (0, 2)), lambda: np.flip(X, (0, 2))),
    "roll": (lambda: nm.roll(A(X), (2, -1), (1, 2)), lambda: np.roll(X, (2, -1), (1, 2))),
    "roll_flat": (lambda: nm.roll(A(X), 7), lambda: np.roll(X, 7)),
    "tile": (lambda: nm.tile(A(M), (2, 1, 3)), lambda: np.tile(M, (2, 1, 3))),
    "repeat": (lambda: nm.repeat(A(M), 3, 1), lambda: np.repeat(M, 3, 1)),
    "diagonal": (lambda: nm.diagonal(A(X), 1, 1, 2), lambda: np.diagonal(X, 1, 1, 2)),
    "take": (lambda: nm.take(A(X), A(np.array([[0, 4], [1, 1]])), 2),
             lambda: np.take(X, [[0, 4], [1, 1]], 2)),
    "take_along_axis": (lambda: nm.take_along_axis(A(X), A(np.argsort(X, 1)), 1),
                        lambda: np.take_along_axis(X, np.argsort(X, 1), 1)),
    "where": (lambda: nm.where(A(X > 0), A(X), 0.0), lambda: np.where(X > 0, X, 0.0)),
    "arange": (lambda: nm.arange(2, 11, 3), lambda: np.arange(2, 11, 3)),
    "arange_float": (lambda: nm.arange(0.5, 2.0, 0.25), lambda: np.arange(0.5, 2.0, 0.25)),
    "arange_length": (lambda: nm.arange(-1.5, step=0.5, length=5, dtype=np.float32),
                      lambda: np.arange(-1.5, 1.0, 0.5, dtype=np.float32)),
    "linspace": (lambda: nm.linspace(-1, 2, 7), lambda: np.linspace(-1, 2, 7)),
    "eye": (lambda: nm.eye(3, 4, 1), lambda: np.eye(3, 4, 1)),
    "triu": (lambda: nm.triangle(A(M), 1, upper=True), lambda: np.triu(M, 1)),
    "tril": (lambda: nm.triangle(A(M), -1), lambda: np.tril(M, -1)),
    "sort": (lambda: nm.sort(A(X), 1), lambda: np.sort(X, 1)),
    "sort_descending": (lambda: nm.sort(A(I), 0, descending=True), lambda: -np.sort(-I, 0)),
    "argsort_stable": (lambda: nm.argsort(A(I), -1), lambda: np.argsort(I, -1, kind="stable")),
    "top_k_axis0": (lambda: nm.top_k(A(X), 2, 0)[0], lambda: -np.sort(-X, 0)[:2]),
    "unique": (lambda: nm.unique(A(I)), lambda: np.unique(I)),
    "nonzero": (lambda: nm.nonzero(A(I > 2))[1], lambda: np.nonzero(I > 2)[1]),
    "mse": (lambda: nm.mse_loss(A(X), A(X * 0.5)), lambda: ((X * 0.5) ** 2).mean()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_matches_numpy(name):
    lazy, ref = CASES[name]
    got = lc.to_numpy(lazy())
    want = np.asarray(ref())
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _ref_cross_entropy(logits, target, weight=None, ignore_index=-100, smoothing=0.0):
    logp = np.log(_softmax(logits, 1))
    n, c = logits.shape
    w = np.ones(c) if weight is None else weight
    losses, weights = [], []
    for i in range(n):
        if target[i] == ignore_index:
            continue
        nll = -logp[i, target[i]] * w[target[i]]
        smooth = -(logp[i] * w).sum() / c
        losses.append((1 - smoothing) * nll + smoothing * smooth)
        weights.append(w[target[i]])
    return np.sum(losses) / np.sum(weights)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy(weighted, smoothing):
    logits = R.standard_normal((6, 4))
    target = np.array([0, 3, -100, 1, 2, 3])
    weight = np.array([1.0, 2.0, 0.5, 1.5]) if weighted else None
    got = nm.cross_entropy(A(logits), A(target), None if weight is None else A(weight),
                           ignore_index=-100, label_smoothing=smoothing)
    want = _ref_cross_entropy(logits, target, weight, smoothing=smoothing)
    np.testing.assert_allclose(lc.to_numpy(got), want, rtol=1e-10)


def test_cross_entropy_with_probabilities():
    logits = R.standard_normal((5, 3))
    probs = _softmax(R.standard_normal((5, 3)), 1)
    got = lc.to_numpy(nm.cross_entropy(A(logits), A(probs)))
    np.testing.assert_allclose(got, -(np.log(_softmax(logits, 1)) * probs).sum(1).mean())


def test_batch_norm():
    x = R.standard_normal((4, 3, 2, 2))
    mean, var = nm.moments(A(x), (0, 2, 3))
    w, b = np.array([1.0, 2.0, 0.5]), np.array([0.0, -1.0, 3.0])
    y = nm.batch_norm(A(x), mean, var, A(w), A(b))
    m = x.mean((0, 2, 3), keepdims=True)
    v = x.var((0, 2, 3), keepdims=True)
    want = (x - m) / np.sqrt(v + 1e-5) * w[:, None, None] + b[:, None, None]
    np.testing.assert_allclose(lc.to_numpy(y), want, rtol=1e-10)
    # statistics that broadcast against x (channel_axis=None), kept dims
    mk, vk = nm.moments(A(x), (0, 2, 3), keepdims=True)
    y2 = nm.batch_norm(A(x), mk, vk, A(w[:, None, None]), A(b[:, None, None]),
                       channel_axis=None)
    np.testing.assert_allclose(lc.to_numpy(y2), want, rtol=1e-10)


def test_layer_norm_returns_its_statistics():
    y, m, rstd = nm.layer_norm(A(X), 2, return_stats=True)
    assert m.shape == rstd.shape == (3, 1, 1)
    np.testing.assert_allclose(lc.to_numpy(m), X.mean((1, 2), keepdims=True), rtol=1e-10)
    np.testing.assert_allclose(lc.to_numpy(rstd), 1 / np.sqrt(X.var((1, 2), keepdims=True)
                                                               + 1e-5), rtol=1e-10)


def test_pooling_and_transposed_conv():
    x = R.standard_normal((2, 3, 6, 6))
    mp = lc.to_numpy(nm.max_pool(A(x), 2))
    np.testing.assert_allclose(mp, x.reshape(2, 3, 3, 2, 3, 2).max((3, 5)))
    ap = lc.to_numpy(nm.avg_pool(A(x), 3, 3))
    np.testing.assert_allclose(ap, x.reshape(2, 3, 2, 3, 2, 3).mean((3, 5)))
    apad = lc.to_numpy(nm.avg_pool(A(x), 3, 1, padding=1, count_include_pad=False))
    np.testing.assert_allclose(apad[0, 0, 0, 0], x[0, 0, :2, :2].mean())
    # transposed conv is the adjoint of conv: <conv(x), y> == <x, conv_T(y)>
    w = R.standard_normal((4, 3, 3, 3))
    y = R.standard_normal((2, 4, 3, 3))
    cx = lc.to_numpy(nm.conv(A(x), A(w), stride=2, padding=1))
    assert cx.shape == y.shape
    ty = lc.to_numpy(nm.conv(A(y), A(w), stride=2, padding=1, transposed=True,
                             output_padding=1))
    assert ty.shape == x.shape
    np.testing.assert_allclose((cx * y).sum(), (x * ty).sum(), rtol=1e-10)


def test_channels_last_conv_matches_channels_first():
    x = R.standard_normal((1, 3, 5, 5))
    w = R.standard_normal((2, 3, 3, 3))
    first = lc.to_numpy(nm.conv(A(x), A(w), padding="SAME"))
    last = lc.to_numpy(nm.conv(A(x.transpose(0, 2, 3, 1).copy()),
                               A(w.transpose(2, 3, 1, 0).copy()), padding="SAME",
                               channels_last=True))
    np.testing.assert_allclose(last.transpose(0, 3, 1, 2), first, rtol=1e-10)


def test_dropout_keeps_expectation():
    x = A(np.ones(20000, np.float32))
    y, keep = nm.dropout(x, 0.25, lc.random.Generator(1).next_key(), return_mask=True)
    y, keep = lc.to_numpy(y), lc.to_numpy(keep)
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    np.testing.assert_array_equal(keep, y != 0)


def test_dropout_noise_shape_shares_one_draw_per_row():
    x = A(np.ones((400, 5), np.float32))
    y = lc.to_numpy(nm.dropout(x, 0.5, lc.random.Generator(2).next_key(), noise_shape=(400, 1)))
    assert (y == y[:, :1]).all() and 0 < (y[:, 0] == 0).sum() < 400


@pytest.mark.parametrize("call, exc", [
    (lambda: nm.sum(A(X), 3), lc.AxisError),
    (lambda: nm.matmul(A(X), A(M)), lc.ShapeError),
    (lambda: nm.reshape(A(X), (7, -1)), lc.ShapeError),
    (lambda: nm.concatenate([A(X), A(M)], 0), lc.ShapeError),
    (lambda: nm.squeeze(A(X), 0), lc.ShapeError),
    (lambda: nm.split(A(M), 4, 1), ValueError),
])
def test_composite_errors(call, exc):
    with pytest.raises(exc):
        call()


@pytest.mark.parametrize("shape, axis", [((3, 0), 1), ((0, 5), 1), ((0, 5), 0), ((2, 0, 3), 1)])
def test_softmax_family_over_empty_axes(shape, axis):
    """No max exists over an empty axis; the results are NumPy's/SciPy's (empty, or -inf
    for logsumexp), not an error."""
    x = np.zeros(shape, np.float32)
    with np.errstate(divide="ignore"):
        want_lse = special.logsumexp(x, axis=axis) if x.shape[axis] else np.log(x.sum(axis))
    assert nm.softmax(A(x), axis).numpy().shape == shape
    assert nm.log_softmax(A(x), axis).numpy().shape == shape
    np.testing.assert_array_equal(nm.logsumexp(A(x), axis).numpy(), want_lse)


def test_softmax_family_with_infinities_matches_the_shifted_formula():
    """softmax and log_softmax subtract the raw max, as PyTorch and JAX do: a row with
    +inf, or only -inf, is NaN (TF's softmax kernel differs on +inf rows); logsumexp of
    only -inf is -inf."""
    x = np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 1.0]],
                 np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - x.max(1, keepdims=True)
        want_log = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        np.testing.assert_allclose(nm.softmax(A(x), 1).numpy(), np.exp(want_log), rtol=1e-6)
        np.testing.assert_allclose(nm.log_softmax(A(x), 1).numpy(), want_log, rtol=1e-6)
    assert np.isnan(want_log[:2]).all()
    assert nm.logsumexp(A(x[1:2]), 1).numpy()[0] == -np.inf


# -- bit reinterpretation: NumPy's ``view(dtype)`` is the reference ---------------------------
BIT_SOURCES = {
    "float32": np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.5, 1e30], np.float32),
    "complex64": np.array([complex(-0.0, np.inf), complex(np.nan, -0.0), 1 + 2j, -1e30j],
                          np.complex64),
    "bool": np.array([True, False, False, True]),
    "uint64": np.array([0, 2 ** 64 - 1, 2 ** 63, 1], np.uint64),
}


@pytest.mark.parametrize("name", sorted(BIT_SOURCES))
def test_as_bits_are_numpy_bytes_and_from_bits_inverts(name):
    x = BIT_SOURCES[name]
    u = bits.as_bits(A(x))
    unit = x.dtype.itemsize // 2 if x.dtype.kind == "c" else x.dtype.itemsize
    want = x.view(f"u{unit}")
    got = lc.to_numpy(u)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    back = lc.to_numpy(bits.from_bits(u, x.dtype))
    assert back.dtype == x.dtype and back.tobytes() == x.tobytes()


@pytest.mark.parametrize("width", [1, 2, 4, 8])
def test_regroup_is_little_endian(width):
    u = np.array([[0x0123456789ABCDEF, 0xFEDCBA9876543210]], np.uint64)
    narrow = bits.regroup(A(u), width)
    want = u.view(f"u{width}")
    assert lc.to_numpy(narrow).tobytes() == want.tobytes()
    assert lc.to_numpy(bits.regroup(narrow, 8)).tobytes() == u.tobytes()


def test_reinterpret_zero_d_and_shape_errors():
    x = np.array(np.pi, np.complex64)  # a 0-d complex: its two halves regroup into one item
    got = lc.to_numpy(nm.reinterpret(A(x), np.float64))
    assert got.shape == () and got.tobytes() == x.view(np.float64).tobytes()
    with pytest.raises(lc.ShapeError):
        nm.reinterpret(A(np.float32(1.0)), np.float64)  # 0-d: item sizes must agree
    with pytest.raises(lc.ShapeError):
        nm.reinterpret(A(np.zeros(3, np.float32)), np.float64)  # 12 bytes into 8-byte items


# -- random composites: distributions (lazycore's bits are its own) ------------------------------
@pytest.mark.parametrize("low, high, dtype", [(-2.0, 2.0, np.float32), (-1.0, 3.0, np.float64),
                                              (0.5, 4.0, np.float32), (-2.0, 2.0, np.float16)])
def test_truncated_normal_is_the_truncated_distribution(low, high, dtype):
    from scipy import stats

    key = lc.random.Generator(5).next_key()
    z = lc.to_numpy(nm.truncated_normal(key, (20000,), dtype, low=low, high=high))
    assert z.dtype == dtype and z.shape == (20000,)
    assert z.min() >= low and z.max() <= high  # rounding never crosses a bound
    ref = stats.truncnorm(low, high)
    np.testing.assert_allclose([z.mean(), z.std()], [ref.mean(), ref.std()], atol=0.03)
    if dtype != np.float16:  # a 16-bit grid is not a continuous sample
        assert stats.kstest(z.astype(np.float64), ref.cdf).pvalue > 1e-3


def test_truncated_normal_rejects_an_empty_interval():
    with pytest.raises(ValueError, match="low < high"):
        nm.truncated_normal(lc.random.Generator(0).next_key(), (3,), np.float32, low=1.0,
                            high=1.0)


def test_matmul_of_a_batch_by_one_matrix_is_one_dot_without_copies():
    """``[b, m, k] @ [k, n]`` is one dot over all rows (TF's, Keras' EinsumDense): the
    matrix is not broadcast to a per-batch copy and no batched dot is recorded."""
    x, w = np.arange(24.0).reshape(2, 3, 4), np.arange(8.0).reshape(4, 2)
    out = nm.matmul(lc.asarray(x), lc.asarray(w))
    assert out.node.op == "dot_general" and dict(out.node.attrs)["batch"] == ((), ())
    assert all(o.op == "data" for o in out.node.operands)
    np.testing.assert_allclose(lc.to_numpy(out), x @ w)
