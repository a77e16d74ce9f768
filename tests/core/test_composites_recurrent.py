"""The recurrent composites: cells against NumPy formulas, their hand-written backwards
against the core's autodiff of the forward, gate orders as column permutations, and a
whole ``recurrent_layer`` (one scan) against an unrolled loop of cells."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore.composites.recurrent import STATES, elman_cell

R = np.random.default_rng(7)
B, H = 3, 4


def A(x):
    return lc.asarray(x)


def N(t):
    return lc.to_numpy(t)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _rand(*shape):
    return R.standard_normal(shape)


def test_lstm_cell_matches_numpy():
    xg, hg, c, bi, bh = _rand(B, 4 * H), _rand(B, 4 * H), _rand(B, H), _rand(4 * H), _rand(4 * H)
    h2, c2, ws = nm.lstm_cell(A(xg), A(hg), A(c), A(bi), A(bh))
    i, f, g, o = np.split(xg + hg + bi + bh, 4, axis=1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    want_c = f * c + i * g
    np.testing.assert_allclose(N(c2), want_c, rtol=1e-12)
    np.testing.assert_allclose(N(h2), o * np.tanh(want_c), rtol=1e-12)
    np.testing.assert_allclose(N(ws), np.concatenate([i, f, g, o], 1), rtol=1e-12)


def test_gru_cell_matches_numpy():
    xg, hg, h = _rand(B, 3 * H), _rand(B, 3 * H), _rand(B, H)
    h2, _ = nm.gru_cell(A(xg), A(hg), A(h))
    ir, iz, in_ = np.split(xg, 3, axis=1)
    hr, hz, hn = np.split(hg, 3, axis=1)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    np.testing.assert_allclose(N(h2), (1 - z) * n + z * h, rtol=1e-12)


@pytest.mark.parametrize("order", ["ifgo", "igfo", "oigf"])
def test_lstm_backward_is_the_gradient_of_the_forward(order):
    xg, hg, c = A(_rand(B, 4 * H)), A(_rand(B, 4 * H)), A(_rand(B, H))
    dh, dc = A(_rand(B, H)), A(_rand(B, H))
    h2, c2, ws = nm.lstm_cell(xg, hg, c, gate_order=order)
    d_gates, d_c = nm.lstm_cell_backward(dh, dc, c, c2, ws, gate_order=order)
    loss = lc.ops.add(lc.ops.reduce_sum(lc.ops.mul(h2, dh), axes=(0, 1)),
                      lc.ops.reduce_sum(lc.ops.mul(c2, dc), axes=(0, 1)))
    g_x, g_c = lc.grad([loss], [xg, c], [A(np.float64(1.0))])
    np.testing.assert_allclose(N(d_gates), N(g_x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(N(d_c), N(g_c), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("order", ["rzn", "zrn"])
def test_gru_backward_is_the_gradient_of_the_forward(order):
    xg, hg, h, dh = A(_rand(B, 3 * H)), A(_rand(B, 3 * H)), A(_rand(B, H)), A(_rand(B, H))
    h2, ws = nm.gru_cell(xg, hg, h, gate_order=order)
    d_in, d_hid, d_h = nm.gru_cell_backward(dh, ws, gate_order=order)
    loss = lc.ops.reduce_sum(lc.ops.mul(h2, dh), axes=(0, 1))
    want = lc.grad([loss], [xg, hg, h], [A(np.float64(1.0))])
    for got, w in zip((d_in, d_hid, d_h), want, strict=True):
        np.testing.assert_allclose(N(got), N(w), rtol=1e-10, atol=1e-12)


def _permute(x, order, canonical):
    """Columns of ``x`` (canonical gate blocks) rearranged into ``order``."""
    blocks = dict(zip(canonical, np.split(x, len(canonical), axis=-1), strict=True))
    return np.concatenate([blocks[k] for k in order], axis=-1)


def test_gate_order_is_a_column_permutation():
    xg, hg, c = _rand(B, 4 * H), _rand(B, 4 * H), _rand(B, H)
    want = nm.lstm_cell(A(xg), A(hg), A(c))
    got = nm.lstm_cell(A(_permute(xg, "gofi", "ifgo")), A(_permute(hg, "gofi", "ifgo")), A(c),
                       gate_order="gofi")
    for g, w in zip(got, want, strict=True):  # the workspace keeps one layout
        np.testing.assert_array_equal(N(g), N(w))
    xg, hg, h = _rand(B, 3 * H), _rand(B, 3 * H), _rand(B, H)
    want = nm.gru_cell(A(xg), A(hg), A(h))
    got = nm.gru_cell(A(_permute(xg, "zrn", "rzn")), A(_permute(hg, "zrn", "rzn")), A(h),
                      gate_order="zrn")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(N(g), N(w))
    with pytest.raises(ValueError, match="permutation"):
        nm.lstm_cell(A(_rand(B, 4 * H)), A(_rand(B, 4 * H)), A(h), gate_order="ifgx")


def _unrolled(kind, xw, w_hh, h0s, b_hh, reverse):
    """The layer as a Python loop of cells (T separate steps)."""
    t = xw.shape[0]
    steps = range(t - 1, -1, -1) if reverse else range(t)
    states, outs = list(h0s), {}
    for k in steps:
        x = lc.ops.reshape(lc.ops.slice(xw, start_indices=(k, 0, 0),
                                        limit_indices=(k + 1,) + xw.shape[1:]),
                           new_sizes=xw.shape[1:])
        hh = lc.ops.dot_general(states[0], w_hh, contracting=((1,), (1,)), batch=((), ()))
        if kind == "lstm":
            h, c, _ = nm.lstm_cell(x, hh, states[1])
            states = [h, c]
        elif kind == "gru":
            h, _ = nm.gru_cell(x, hh, states[0], None, b_hh)
            states = [h]
        else:
            states = [elman_cell(lc.ops.add(x, hh), relu=kind == "rnn_relu")]
        outs[k] = states[0]
    return nm.stack([outs[k] for k in range(t)], 0), states


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("reverse", [False, True])
def test_recurrent_layer_matches_an_unrolled_loop(kind, reverse):
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)
    t = 5
    xw, w_hh = A(_rand(t, B, gates * H)), A(_rand(gates * H, H) * 0.5)
    h0s = [A(_rand(B, H)) for _ in range(STATES[kind])]
    b_hh = A(_rand(gates * H)) if kind == "gru" else None
    out, finals, saved = nm.recurrent_layer(kind, xw, w_hh, h0s, b_hh=b_hh, reverse=reverse)
    want_out, want_finals = _unrolled(kind, xw, w_hh, h0s, b_hh, reverse)
    d_out = A(_rand(*out.shape))
    d_finals = [A(_rand(B, H)) for _ in h0s]
    d_xw, d_w, d_b, d_h0s = nm.recurrent_layer_backward(kind, d_out, d_finals, w_hh, h0s, saved,
                                                        b_hh=b_hh, reverse=reverse)
    loss = lc.ops.reduce_sum(lc.ops.mul(want_out, d_out), axes=(0, 1, 2))
    for f, d in zip(want_finals, d_finals, strict=True):
        loss = lc.ops.add(loss, lc.ops.reduce_sum(lc.ops.mul(f, d), axes=(0, 1)))
    wrt = [xw, w_hh, *h0s] + ([b_hh] if b_hh is not None else [])
    want = lc.grad([loss], wrt, [A(np.float64(1.0))])  # before any value is read back
    got = [d_xw, d_w, *d_h0s] + ([d_b] if b_hh is not None else [])
    for g, w in zip([out, *finals, *got], [want_out, *want_finals, *want], strict=True):
        np.testing.assert_allclose(N(g), N(w), rtol=1e-9, atol=1e-12)
