"""NumPy's view semantics, copies and masked writes: every case runs the same code on
NumPy and on lazy_numpy and compares the arrays it wrote into (issue 18), and the masked
writes of issue 19 record no sync."""

from __future__ import annotations

import numpy as np
import pytest
from lnp_testing import assert_same

import lazy_numpy as lnp


def _both(program, *inputs):
    """Run ``program`` on NumPy copies and on LazyArrays; compare every input after."""
    eager = [np.array(x) for x in inputs]
    lazy = [lnp.asarray(np.array(x)) for x in inputs]
    e_out = program(np, *eager)
    l_out = program(lnp, *lazy)
    for lv, ev in zip(lazy, eager, strict=True):
        assert_same(lv, ev)
    if e_out is not None:
        assert_same(l_out, e_out)


def _w_slice(xp, a):
    b = a[2:5]
    b[:] = 0
    return b


def _w_chained(xp, a):
    a[0][1] = -1


def _w_transpose(xp, a):
    a.T[...] = np.arange(12.0).reshape(4, 3)


def _w_copyto(xp, a):
    np.copyto(a[1:], 5)


def _w_ufunc_out(xp, a):
    np.add(a[:2], 1, out=a[:2])


def _w_inplace_strided(xp, a):
    v = a[::2]
    v += 1
    v *= 3


def _w_reshape(xp, a):
    r = a.reshape(4, 3)
    r[1, :] = 7
    a.ravel()[0] = -2


def _w_view_of_view(xp, a):
    b = a[1:]
    c = b[:, ::-1]
    c[0, 0] = 99
    d = c.T
    d[1] += 10


def _w_base_then_view(xp, a):
    b = a[:, 1]
    a[...] = 3
    b[0] = -1
    return b * 2


def _w_swap_move(xp, a):
    np.swapaxes(a, 0, 1)[0] = 1
    np.moveaxis(a[None], 0, -1)[..., 0] = np.moveaxis(a[None], 0, -1)[..., 0] + 1
    np.expand_dims(a, 0)[0, 2] = 8
    a[None, :, None][0, 1, 0, 2] = -5


def _w_flip(xp, a):
    np.flip(a, 1)[0] = [1, 2, 3, 4]
    np.fliplr(a)[2, :2] = 0


def _w_mask_on_view(xp, a):
    v = a[1:, 1:-1]
    v[v > 5] = 0
    v[v < 2] += 100


def _w_int_index_copy(xp, a):
    s = a[0, 0]  # a NumPy scalar: a copy
    s += 5
    return s


def _w_advanced_copy(xp, a):
    b = a[[0, 2]]  # advanced indexing copies
    b[:] = 0
    return b


def _w_shape_setter(xp, a):
    b = a[:]
    b.shape = (2, 6)
    b[1] = 4


def _w_split(xp, a):
    top, bottom = np.split(a, [1], axis=0)
    bottom[:, 0] = -7
    left, right = np.array_split(a, 3, axis=1)[0], np.hsplit(a, [3])[1]
    left += 1
    right[0] = 0


def _w_real_imag(xp, a):
    z = a * (1 + 1j)
    z.real[0] = 5
    np.imag(z)[1:, 1] = -2
    a[2] = z.imag[2] + z.real[2]
    np.real(a)[0, 0] = 42  # a real array's real part is the array itself
    return z


@pytest.mark.parametrize("program", [
    _w_split, _w_real_imag, _w_slice, _w_chained, _w_transpose, _w_copyto, _w_ufunc_out, _w_inplace_strided,
    _w_reshape, _w_view_of_view, _w_base_then_view, _w_swap_move, _w_flip,
    _w_mask_on_view, _w_int_index_copy, _w_advanced_copy, _w_shape_setter,
], ids=lambda f: f.__name__[3:])
def test_writes_through_views(program):
    _both(program, np.arange(12.0).reshape(3, 4))


# -- .flat, view(dtype), as_strided, sliding_window_view: views, never silent copies ----------

def _w_flat(xp, a):
    a.flat[[1, 5]] = -1
    a.T.flat[2] = 55  # a transpose's flat order, written into a
    b = a[:, 1:3]
    b.flat[1] = -7
    b.flat[2:] = [10, 20, 30]  # a shorter value repeats, as NumPy's flatiter does
    c = a.flat[1:4]  # a copy: writes to it stay there
    c[0] = 1000
    return [a.flat[3], c, next(iter(a.T.flat)), len(a.flat), np.cumsum(a.T.flat),
            np.add(a.flat, 1)]  # functions of a flatiter see its 1-D copy


def _w_flat_setter(xp, a):
    a[1:].flat = [9, 8]
    a.T[0].flat = 4.5


def _w_view_dtype(xp, a):
    ints = a.view(np.int64)
    ints[0, 0] = 0x7FF0000000000000  # +inf's bits
    halves = a[1].view(np.int32)  # a different item size: twice the items
    halves[::2] = 0  # low words of row 1
    pairs = a[2:].view(np.complex128)  # two float64s per complex
    pairs.imag[0, 1] = -3.0
    a[2, 0] = 8.5
    return [ints.copy(), halves.copy(), pairs.copy(), a.view(np.float32)[0, :2].copy()]


def _w_as_strided(xp, a):
    flat = a.reshape(-1)
    win = np.lib.stride_tricks.as_strided(flat, shape=(4, 3), strides=(24, 8))
    win[1, 2] = -1.0  # flat[5]
    diag = np.lib.stride_tricks.as_strided(a, shape=(3,), strides=(40,))
    diag += 100
    over = np.lib.stride_tricks.as_strided(a[1], shape=(2, 3), strides=(8, 8))  # overlaps
    over[1, 1] = 7.0  # a[1, 2]: the one element changed wins
    over[0] *= 2  # each of a[1, 0:3] doubled once
    return [win.copy(), diag.copy(), over.copy()]


def _w_sliding_window(xp, a):
    view = np.lib.stride_tricks.sliding_window_view(a, (2, 2))
    a[0, 0] = -5  # the read-only view follows its base
    writable = np.lib.stride_tricks.sliding_window_view(a[2], 3, writeable=True)
    writable[1, 2] = 99
    return [view[0, 0].copy(), view.sum(), writable.copy()]


@pytest.mark.parametrize("program", [_w_flat, _w_flat_setter, _w_view_dtype, _w_as_strided,
                                     _w_sliding_window], ids=lambda f: f.__name__[3:])
def test_strided_and_reinterpreting_views(program):
    _both(program, np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("dtype, to", [("i4", "u1"), ("u1", "i2"), ("f4", "c8"), ("c8", "i8"),
                                       ("i8", "f8"), ("f2", "u2"), ("?", "u1"), ("u8", "u2")])
def test_view_dtype_bytes_match_numpy(dtype, to):
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=64, dtype=np.uint8)
    if dtype == "?":
        raw = raw % 2
    e = raw.view(dtype).reshape(2, -1).copy()
    a = lnp.asarray(e)
    lv, ev = a.view(to), e.view(to)
    assert lv.shape == ev.shape and lv.dtype == ev.dtype and lv.strides == ev.strides
    np.testing.assert_array_equal(np.asarray(lv).view(np.uint8), ev.view(np.uint8))
    assert np.shares_memory(lv, a) and lv.base is a


def test_strided_layout_and_errors_match_numpy():
    e = np.arange(10.0)
    a = lnp.asarray(e)
    for fn in (lambda x: np.lib.stride_tricks.sliding_window_view(x, 4),
               lambda x: np.lib.stride_tricks.as_strided(x[2:], shape=(3, 2), strides=(16, 8))):
        lv, ev = fn(a), fn(e)
        assert lv.strides == ev.strides and lv.shape == ev.shape
        assert lv.flags.writeable == ev.flags.writeable
        assert np.shares_memory(lv, a)
        assert np.shares_memory(lv, a[8:]) == np.shares_memory(ev, e[8:])
        assert_same(lv, ev)
    with pytest.raises(ValueError, match="read-only"):
        np.lib.stride_tricks.sliding_window_view(a, 3)[0, 0] = 1
    with pytest.raises(ValueError, match="outside"):  # NumPy would read past the buffer
        np.lib.stride_tricks.as_strided(a, shape=(20,), strides=(8,))
    with pytest.raises(ValueError, match="whole items"):
        np.lib.stride_tricks.as_strided(a, shape=(2,), strides=(4,))
    with pytest.raises(ValueError, match="contiguous"):  # NumPy's own error
        lnp.asarray(np.zeros((4, 4), np.int32)).T.view(np.int16)
    host = np.arange(6.0)  # NumPy arrays keep NumPy's own function
    assert np.lib.stride_tricks.as_strided(host, shape=(2,), strides=(24,)).base is not None


def test_write_1d_slice():
    _both(_w_slice, np.arange(10.0))


def test_layout_attributes_match_numpy():
    e = np.arange(24.0).reshape(4, 6).copy()
    a = lnp.asarray(e)
    for key in [np.s_[1:3], np.s_[::2, 1::3], np.s_[..., None], np.s_[:, ::-1], np.s_[2]]:
        ev, lv = e[key], a[key]
        assert lv.strides == ev.strides
        assert lv.base is a and ev.base is e
        for flag in ("c_contiguous", "f_contiguous", "owndata", "writeable"):
            assert getattr(lv.flags, flag) == getattr(ev.flags, flag), (key, flag)
        assert np.shares_memory(lv, a) == np.shares_memory(ev, e)
    assert a.T.strides == e.T.strides and a.strides == e.strides
    assert a.flags.owndata and a.base is None
    assert not np.shares_memory(a[:2], a[2:]) and np.shares_memory(a[:3], a[2:])
    assert np.may_share_memory(a, a.T)
    assert not np.shares_memory(a, a.copy())
    assert not np.shares_memory(a.T.reshape(-1), a)  # a copy, as in NumPy
    assert not np.shares_memory(e.T.reshape(-1), e)
    assert np.reshape(a, (6, 4)).base is a


def test_read_only_views_raise():
    a = lnp.asarray(np.arange(6.0).reshape(2, 3))
    b = np.broadcast_to(a[0], (4, 3))
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 1
    d = np.diagonal(a)
    with pytest.raises(ValueError, match="read-only"):
        d += 1
    a[0, 0] = 7  # the views follow their base
    assert b[3, 0] == 7 and d[0] == 7
    a.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        a[1] = 0
    assert_same(a, np.array([[7.0, 1, 2], [3, 4, 5]]))


def test_array_copies_asarray_does_not():
    x = lnp.asarray(np.arange(4.0))
    y = lnp.array(x)
    y += 1
    assert_same(x, np.arange(4.0))
    assert lnp.asarray(x) is x
    z = lnp.asarray(x, copy=True)
    z[0] = 10
    w = x.copy()
    w[1] = 10
    assert_same(x, np.arange(4.0))
    with pytest.raises(ValueError):
        lnp.asarray(x, dtype=np.float32, copy=False)
    xp = x.__array_namespace__()
    c = xp.asarray(x, copy=True)
    c += 1
    assert_same(x, np.arange(4.0))
    assert xp.asarray(x) is x


def test_range_index_softmax_loss():
    """cs231n's softmax loss, verbatim: ``probs[range(N), y]``."""
    rng = np.random.default_rng(0)
    scores_e, y = rng.normal(size=(5, 3)), np.array([0, 2, 1, 1, 0])

    def loss(scores, N=5):
        exp_scores = np.exp(scores - np.max(scores, axis=1, keepdims=True))
        probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
        correct_logprobs = -np.log(probs[range(N), y])
        dscores = probs.copy()
        dscores[range(N), y] -= 1
        return np.sum(correct_logprobs) / N, dscores

    assert_same(loss(lnp.asarray(scores_e)), loss(scores_e))


def test_scalar_format_and_round():
    e = np.array([1.23456, 2.5])
    a = lnp.asarray(e)
    assert f"{a.sum():.3f}" == f"{e.sum():.3f}"
    assert format(a.mean(), "8.2e") == format(e.mean(), "8.2e")
    assert round(a.mean(), 2) == round(e.mean(), 2)
    assert round(a.sum()) == round(e.sum()) and isinstance(round(a.sum()), int)
    assert f"{a}" == f"{e}"
    with pytest.raises(TypeError):
        round(a)
    with pytest.raises(TypeError):
        f"{a:.2f}"  # noqa: B018 - NumPy arrays take no format spec


# -- masked writes without a sync (issue 19) ------------------------------------------------

def _masked(xp, x, y):
    x[x > 0] *= 2
    x[y < 0] = 0
    x[x[:, 0] > 0] += y[0]  # a per-element broadcast value (a row per selected row)
    y[y > 0.5] -= 1
    y[(y < 0)[:, 0]] = xp.asarray(np.array([9.0, 8.0, 7.0]))  # broadcast over the rows
    x[x < -1] = -1.5


def test_masked_writes_do_not_sync(counters):
    rng = np.random.default_rng(1)
    xe, ye = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    x, y = lnp.asarray(xe.copy()), lnp.asarray(ye.copy())
    before = counters().get("syncs", 0)
    _masked(lnp, x, y)
    assert counters().get("syncs", 0) == before  # all recorded, nothing computed
    _masked(np, xe, ye)
    assert_same(x, xe)
    assert_same(y, ye)


def test_masked_int_inplace_keeps_numpy_casting_error():
    x = lnp.asarray(np.arange(6))
    with pytest.raises(TypeError):  # NumPy: UFuncTypeError (a TypeError) for int *= float
        x[x > 2] *= 1.5


def test_masked_write_with_one_value_per_element():
    """Values per True element need the count: the counted data-dependent sync."""
    e = np.arange(8.0)
    a = lnp.asarray(e.copy())
    lnp.metrics.reset()
    a[a > 4] = lnp.asarray(np.array([10.0, 20.0, 30.0]))
    e[e > 4] = np.array([10.0, 20.0, 30.0])
    assert lnp.metrics.counters().get("data_dependent_syncs", 0) == 1
    assert_same(a, e)
    with pytest.raises(ValueError):
        a[a > 100] = np.array([1.0, 2.0])


def test_masked_selection_read_is_numpy():
    e = np.arange(10.0)
    a = lnp.asarray(e)
    s = a[a > 6]
    assert s.dtype == e.dtype and s.ndim == 1
    assert_same(s, e[e > 6])
    t = a[a % 2 == 0]
    t += 1  # a selection is a copy: ``a`` is unchanged
    assert_same(a, e)
    assert_same(t, e[e % 2 == 0] + 1)


def test_list_of_lazy_scalars_stacks_without_sync(counters):
    x = lnp.asarray(np.arange(5.0))
    parts = [x[i] * 2 for i in range(5)] + [x.sum()]
    before = counters().get("syncs", 0)
    s = lnp.array(parts)
    t = lnp.asarray([[x.min(), x.max()], [x.mean(), 1.0]])
    assert counters().get("syncs", 0) == before
    e = np.arange(5.0)
    assert_same(s, np.array([v * 2 for v in e] + [e.sum()]))
    assert_same(t, np.array([[e.min(), e.max()], [e.mean(), 1.0]]))


# -- a published program, verbatim --------------------------------------------------------

def _game_of_life(np, Z, steps):  # noqa: N803 - N. Rougier, "From Python to NumPy", ch. 4
    def iterate(Z):  # noqa: N803
        # Count neighbours
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +  # noqa: N806
             Z[1:-1, 0:-2] + Z[1:-1, 2:] +
             Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        # Apply rules
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
        return Z

    for _ in range(steps):
        iterate(Z)
    return Z


def test_game_of_life_matches_numpy(counters):
    Z0 = np.random.default_rng(3).integers(0, 2, size=(16, 16))  # noqa: N806
    eager = _game_of_life(np, Z0.copy(), 6)
    lazy = _game_of_life(np, lnp.asarray(Z0.copy()), 6)
    assert counters().get("syncs", 0) == 0
    assert_same(lazy, eager)


def _mandelbrot(np, xn, yn, maxiter, horizon=2.0):  # Rougier, "From Python to NumPy"
    X = np.linspace(-2.25, 0.75, xn, dtype=np.float32)  # noqa: N806
    Y = np.linspace(-1.25, 1.25, yn, dtype=np.float32)  # noqa: N806
    C = X + Y[:, None] * 1j  # noqa: N806
    N = np.zeros(C.shape, dtype=int)  # noqa: N806
    Z = np.zeros(C.shape, np.complex64)  # noqa: N806
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)  # noqa: N806, E741
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N


def test_masked_expressions_stay_lazy(counters):
    """``Z[I] = Z[I]**2 + C[I]``: elementwise work on selections under one mask, stored
    back under it, is a ``where`` -- no count, no sync."""
    lazy_np = _LazyLinspace()
    z, n = _mandelbrot(lazy_np, 12, 10, 8)
    assert counters().get("syncs", 0) == 0
    ez, en = _mandelbrot(np, 12, 10, 8)
    assert_same(n, en)
    np.testing.assert_allclose(np.asarray(z), ez, rtol=1e-5, atol=1e-5)


class _LazyLinspace:
    """``np`` with the program's inputs (linspace grids) created lazily."""

    def __getattr__(self, name):
        if name in ("linspace", "zeros"):
            return getattr(lnp, name)
        return getattr(np, name)


def _nbody_mask(xp, r):
    inv_r3 = r**2 + 0.1
    inv_r3[inv_r3 > 0.5] = inv_r3[inv_r3 > 0.5] ** (-1.5)  # the mask built twice
    return inv_r3


def test_equal_masks_built_twice_do_not_sync(counters):
    e = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    lazy = _nbody_mask(lnp, lnp.asarray(e))
    assert counters().get("syncs", 0) == 0
    assert_same(lazy, _nbody_mask(np, e))


def _other_mask(xp, x):
    x[x > 0] = x[x < 0] * 2  # a different mask with the same count: NumPy's order


def test_selection_under_another_mask_is_numpy():
    _both(_other_mask, np.array([-1.0, 2.0, -3.0, 4.0]))
    _both(_other_mask, np.array([-1.0, 2.0, 3.0, 4.0]))  # one value broadcasts
    with pytest.raises(ValueError):
        _other_mask(np, np.array([-1.0, 2.0, -3.0, 4.0, 5.0]))
    x = lnp.asarray(np.array([-1.0, 2.0, -3.0, 4.0, 5.0]))
    with pytest.raises(ValueError):
        _other_mask(lnp, x)
    assert_same(x, np.array([-1.0, 2.0, -3.0, 4.0, 5.0]))  # unchanged after the error


def test_element_writes_in_a_loop_are_one_scatter():
    """Heat diffusion's initial condition (``u0[i, j] = Thot`` in a double loop): one
    scatter of every position written, later writes winning, values as NumPy casts them."""
    e = np.zeros((12, 12))
    a = lnp.zeros((12, 12))
    for u in (e, a):
        for i in range(12):
            for j in range(12):
                if (i - 6) ** 2 + (j - 6) ** 2 < 16:
                    u[i, j] = 700.0
        u[6, -1] = 1.5
        u[6, -1] = 2.5
        u[np.int64(0), 0] = True
    assert a._t.node.op == "reshape" and a._t.node.operands[0].op == "scatter"
    assert_same(a, e)
    i = lnp.zeros(3, dtype=np.int8)
    with pytest.raises(OverflowError):
        i[0] = 300
    with pytest.raises(IndexError):
        a[12, 0] = 1.0


# -- checked indices: a lazy index out of range is NumPy's IndexError at the barrier ----------

def _index_cases(a, i):
    return {
        "getitem": lambda: a[i],
        "getitem_axis1": lambda: a[:, i],
        "getitem_0d": lambda: a[i[0]],
        "setitem": lambda: a.__setitem__((Ellipsis, i), 0.0),
        "take": lambda: np.take(a, i, axis=1),
        "take_along_axis": lambda: np.take_along_axis(a[0], i, 0),
    }


@pytest.mark.parametrize("name", ["getitem", "getitem_axis1", "getitem_0d", "setitem", "take",
                                  "take_along_axis"])
@pytest.mark.parametrize("index", [[0, 2], [-3, 1], [0, 3], [-4, 0], [5, 1]])
def test_lazy_index_out_of_range_raises_numpys_error(name, index):
    """XLA clamps an out-of-range gather index; NumPy raises IndexError. An index array
    computed lazily is checked inside the next compiled program (one fused reduction)."""
    host = np.arange(9.0).reshape(3, 3)
    outcomes = []
    for xp_a, xp_i in ((host.copy(), np.array(index) * 1),
                       (lnp.asarray(host), lnp.asarray(np.array(index)) * 1)):
        try:
            out = _index_cases(xp_a, xp_i)[name]()
            outcomes.append(np.asarray(out if out is not None else xp_a).tolist())
        except IndexError:
            outcomes.append(IndexError)
    assert outcomes[1] == outcomes[0]


def test_mask_indices_need_no_program_check():
    import lazycore as lc

    b = lnp.asarray(np.arange(6.0).reshape(3, 2))
    lnp.sync()
    picked = b[b[:, 0] > 1, 1]  # the mask's nonzero indices: in range by construction
    assert not lc.checks.pending()
    assert np.asarray(picked).tolist() == [3.0, 5.0]


def _t_and_slices(xp, a, v):
    """``.T`` and basic reads of every rank (the fast paths skip NumPy's dispatch and
    ``view``'s checks): views where NumPy has views, scalars where it has scalars."""
    out = [a.T, a[1:3].T, a[:, 0:1].T, v.T, v[1:3].T, a[2, 1] * 1, a[1][2] * 1, a[...].T]
    col = a[:, 0:1]
    col.T[0, 1] = -7.0  # through a transposed column into a
    a[1:3, 1:3].T[0] = 9.0
    v[1:].T[0] = 5.0
    out.append(xp.asarray(a[0, 0]).T)  # 0-d: .T is itself
    return out + [a.T.T, (a.T[1:, :2] + 1).T]


def test_transpose_and_basic_index_views():
    _both(_t_and_slices, np.arange(20.0).reshape(4, 5), np.arange(6.0))


def test_transpose_records_what_np_transpose_records():
    a = lnp.asarray(np.arange(24.0).reshape(2, 3, 4))
    for x in (a, a[1:], a[0]):
        assert x.T._t.node.hash == np.transpose(x)._t.node.hash
        assert x.T.shape == np.transpose(x).shape and x.T.base is np.transpose(x).base
