"""``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` as loops: one ``scan`` node per layer and direction.

``aten::lstm.input`` (and ``gru``/``rnn_tanh``/``rnn_relu``) is CompositeImplicitAutograd:
PyTorch decomposes it above ``__torch_dispatch__`` into one fused cell and one matmul per
time step, so the trace grows with the sequence (~5,000 ops per step for a small LSTM
language model). Kernels registered here for the lazy device's autograd key take the
whole layer instead: the input projection of every step is one matmul (ordinary lazy
ops, differentiated by PyTorch's autograd), and the recurrence is one
``torch.autograd.Function`` whose forward is a core ``scan`` of the cell and whose
backward is a reverse ``scan`` of the cell's gradient (the formulas of ``rnn.py``),
with the recurrent weight's gradient taken afterwards as one matmul over all steps.

Cases these kernels do not cover (projections, non-lazy or mixed tensors such as
Dynamo's fake tensors, empty sequences) run PyTorch's own decomposition, as before.
Packed sequences (``lstm.data``) are not intercepted: they keep the decomposition.
"""

from __future__ import annotations

import torch

from lazycore.ops.control import scan

from .._tensor import LazyTensor, read, wrap
from .common import full_like, ops
from .rnn import gru_cell, gru_cell_backward, lstm_cell_backward

aten = torch.ops.aten


# -- the cells: forward step and backward step on core tensors ----------------------------------

def _matmul_t(h, w):
    """h @ w.T for h (B, H), w (G, H)."""
    return ops.dot_general(h, w, contracting=((1,), (1,)), batch=((), ()))


def _matmul(g, w):
    """g @ w for g (B, G), w (G, H)."""
    return ops.dot_general(g, w, contracting=((1,), (0,)), batch=((), ()))


def _chunks(x, n):
    size = x.shape[1] // n
    return [ops.slice(x, start_indices=(0, k * size), limit_indices=(x.shape[0], (k + 1) * size))
            for k in range(n)]


class _LSTM:
    """carry (h, c); saved per step: h, c and the activated gates [i, f, g, o]."""

    n_state = 2

    @staticmethod
    def step(carry, x, consts):
        (h, c), (xw,), (w_hh,) = carry, x, consts
        gates = ops.add(xw, _matmul_t(h, w_hh))
        i, f, g, o = _chunks(gates, 4)
        i, f, g, o = ops.logistic(i), ops.logistic(f), ops.tanh(g), ops.logistic(o)
        c2 = ops.add(ops.mul(f, c), ops.mul(i, g))
        h2 = ops.mul(o, ops.tanh(c2))
        return [h2, c2], [h2, c2, ops.concatenate(i, f, g, o, dimension=1)]

    @staticmethod
    def back(carry, x, consts):
        (dh, dc), (dy, c_prev, c, acts), (w_hh,) = carry, x, consts
        dgates, dc_prev, _ = lstm_cell_backward(ops.add(dh, dy), dc, c_prev, c, acts, False)
        return [_matmul(dgates, w_hh), dc_prev], [dgates]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        hs, cs, acts = saved
        return [_previous(cs, h0s[1], reverse), cs, acts]


class _GRU:
    """carry h; saved per step: h and the workspace [r, z, n, h_prev, hn]."""

    n_state = 1

    @staticmethod
    def step(carry, x, consts):
        (h,), (xw,), (w_hh, *b_hh) = carry, x, consts
        gh = _matmul_t(h, w_hh)
        if b_hh:
            gh = ops.add(gh, ops.broadcast_in_dim(b_hh[0], shape=gh.shape,
                                                  broadcast_dimensions=(1,)))
        h2, workspace = gru_cell(xw, gh, h)
        return [h2], [h2, workspace]

    @staticmethod
    def back(carry, x, consts):
        (dh,), (dy, workspace), (w_hh, *_) = carry, x, consts
        d_input, d_hidden, dh_prev, _, _ = gru_cell_backward(ops.add(dh, dy), workspace, False)
        return [ops.add(dh_prev, _matmul(d_hidden, w_hh))], [d_input, d_hidden]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        return [saved[1]]


class _Elman:
    """``nn.RNN``: carry h; saved per step: h."""

    n_state = 1

    def __init__(self, relu: bool):
        self.relu = relu

    def _act(self, x):
        return ops.max(x, full_like(x, 0)) if self.relu else ops.tanh(x)

    def step(self, carry, x, consts):
        (h,), (xw,), (w_hh,) = carry, x, consts
        h2 = self._act(ops.add(xw, _matmul_t(h, w_hh)))
        return [h2], [h2]

    def back(self, carry, x, consts):
        (dh,), (dy, h), (w_hh,) = carry, x, consts
        g = ops.add(dh, dy)
        if self.relu:
            dpre = ops.select(ops.gt(h, full_like(h, 0)), g, full_like(g, 0))
        else:
            dpre = ops.mul(g, ops.sub(full_like(h, 1), ops.mul(h, h)))
        return [_matmul(dpre, w_hh)], [dpre]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        return [saved[0]]


def _previous(stack, first, reverse):
    """The value each step started from: ``first`` then the stack shifted by one step
    (the other way round for a reverse direction)."""
    t = stack.shape[0]
    one = ops.reshape(first, new_sizes=(1,) + first.shape)
    if t == 1:
        return one
    rest = stack.shape[1:]
    if reverse:
        tail = ops.slice(stack, start_indices=(1,) + (0,) * len(rest),
                         limit_indices=(t,) + rest)
        return ops.concatenate(tail, one, dimension=0)
    head = ops.slice(stack, start_indices=(0,) * stack.ndim, limit_indices=(t - 1,) + rest)
    return ops.concatenate(one, head, dimension=0)


# -- the recurrence as one autograd node ---------------------------------------------------------

class _Recurrence(torch.autograd.Function):
    """(xw (T, B, G), w_hh, b_hh or None, *h0) -> (outputs (T, B, H), *final states)."""

    @staticmethod
    def forward(ctx, cell, reverse, xw, w_hh, b_hh, *h0):
        consts = [read(w_hh)] + ([read(b_hh)] if b_hh is not None else [])
        h0s = [read(h) for h in h0]
        finals, saved = scan(cell.step, h0s, [read(xw)], consts, reverse=reverse)
        ctx.cell, ctx.reverse, ctx.has_b = cell, reverse, b_hh is not None
        ctx.core = (consts, h0s, saved)
        return (wrap(saved[0]), *[wrap(f, fresh=True) for f in finals])  # saved[0] is kept

    @staticmethod
    def backward(ctx, d_out, *d_finals):
        if torch.is_grad_enabled():  # create_graph=True: the scan has no derivative of its own
            raise RuntimeError("lazy_torch: a second derivative through nn.LSTM/GRU/RNN "
                               "(autograd.grad(..., create_graph=True) over a recurrent layer) "
                               "is not supported on the lazy device")
        cell, reverse = ctx.cell, ctx.reverse
        consts, h0s, saved = ctx.core
        out = saved[0]
        d_out = read(d_out) if d_out is not None else full_like(out, 0)
        d_carry = [read(d) if d is not None else full_like(h, 0) for d, h in zip(d_finals, h0s, strict=True)]
        xs = [d_out] + cell.back_inputs(h0s, saved, reverse)
        d_h0, d_steps = scan(cell.back, d_carry, xs, consts, reverse=not reverse)
        d_pre = d_steps[-1]  # gradient of the hidden-side pre-activations, (T, B, G)
        h_prev = _previous(out, h0s[0], reverse)
        d_w = ops.dot_general(d_pre, h_prev, contracting=((0, 1), (0, 1)), batch=((), ()))
        d_b = ops.reduce_sum(d_pre, axes=(0, 1)) if ctx.has_b else None
        d_xw = d_steps[0]
        ctx.core = None
        return (None, None, wrap(d_xw, fresh=True), wrap(d_w, fresh=True),
                wrap(d_b, fresh=True) if d_b is not None else None,
                *[wrap(d, fresh=True) for d in d_h0])


# -- the layer stack (ordinary lazy torch ops around the recurrences) -----------------------------

def _layers(cell, input, states, params, has_biases, num_layers, dropout, train,
            bidirectional, batch_first, fold_hidden_bias):
    """Run the stack; ``states``: one (L * D, B, H) tensor per carried state.
    Returns (output, final states)."""
    x = input.transpose(0, 1) if batch_first else input
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    finals: list[list] = [[] for _ in states]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh = params[k * per], params[k * per + 1]
            b_ih = params[k * per + 2] if has_biases else None
            b_hh = params[k * per + 3] if has_biases else None
            if fold_hidden_bias and b_hh is not None:
                b_ih, b_hh = b_ih + b_hh, None
            xw = torch.nn.functional.linear(x, w_ih, b_ih)
            out, *last = _Recurrence.apply(cell, d == 1, xw, w_hh, b_hh,
                                           *[s[k] for s in states])
            outs.append(out)
            for f, v in zip(finals, last, strict=True):
                f.append(v)
        x = outs[0] if dirs == 1 else torch.cat(outs, dim=2)
        if dropout and train and layer < num_layers - 1:
            x = torch.nn.functional.dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first else x
    return output, [torch.stack(f, 0) for f in finals]


def _covered(input, states, params, has_biases, num_layers, bidirectional) -> bool:
    tensors = [input, *states, *params]
    expected = num_layers * (2 if bidirectional else 1) * (4 if has_biases else 2)
    return (all(isinstance(t, LazyTensor) for t in tensors)
            and len(params) == expected and input.dim() == 3 and input.numel() > 0
            and input.shape[0] > 0 and input.shape[1] > 0)


def _lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
          batch_first):
    if not _covered(input, hx, params, has_biases, num_layers, bidirectional):
        return aten.lstm.input.decompose(input, hx, params, has_biases, num_layers, dropout,
                                         train, bidirectional, batch_first)
    out, (h, c) = _layers(_LSTM, input, list(hx), params, has_biases, num_layers, dropout,
                          train, bidirectional, batch_first, True)
    return out, h, c


def _single_state(op, cell, fold):
    def kernel(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
        if not _covered(input, [hx], params, has_biases, num_layers, bidirectional):
            return op.decompose(input, hx, params, has_biases, num_layers, dropout, train,
                                bidirectional, batch_first)
        out, (h,) = _layers(cell, input, [hx], params, has_biases, num_layers, dropout,
                            train, bidirectional, batch_first, fold)
        return out, h
    return kernel


_LIB = torch.library.Library("aten", "IMPL")
_LIB.impl("lstm.input", _lstm, "AutogradPrivateUse1")
_LIB.impl("gru.input", _single_state(aten.gru.input, _GRU(), False), "AutogradPrivateUse1")
_LIB.impl("rnn_tanh.input", _single_state(aten.rnn_tanh.input, _Elman(False), True),
          "AutogradPrivateUse1")
_LIB.impl("rnn_relu.input", _single_state(aten.rnn_relu.input, _Elman(True), True),
          "AutogradPrivateUse1")
