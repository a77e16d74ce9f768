"""``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` as loops: one ``scan`` node per layer and direction.

``aten::lstm.input`` (and ``gru``/``rnn_tanh``/``rnn_relu``) is CompositeImplicitAutograd:
PyTorch decomposes it above ``__torch_dispatch__`` into one fused cell and one matmul per
time step, so the trace grows with the sequence (~5,000 ops per step for a small LSTM
language model). Kernels registered here for the lazy device's autograd key take the
whole layer instead: the input projection of every step is one matmul (ordinary lazy
ops, differentiated by PyTorch's autograd), and the recurrence is one
``torch.autograd.Function`` whose forward is a core ``scan`` of the cell and whose
backward is a reverse ``scan`` of the cell's gradient, with the recurrent weight's
gradient taken afterwards as one matmul over all steps -- both the core's
``lazycore.composites.recurrent.recurrent_layer(_backward)``.

Cases these kernels do not cover (projections, non-lazy or mixed tensors such as
Dynamo's fake tensors, empty sequences) run PyTorch's own decomposition, as before.
Packed sequences (``lstm.data``) are not intercepted: they keep the decomposition.
"""

from __future__ import annotations

import torch

from .._tensor import LazyTensor, read, wrap
from .common import num

aten = torch.ops.aten


# -- the recurrence as one autograd node ---------------------------------------------------------

class _Recurrence(torch.autograd.Function):
    """(xw (T, B, G), w_hh, b_hh or None, *h0) -> (outputs (T, B, H), *final states); the
    forward and backward scans are the core's ``recurrent_layer`` pair."""

    @staticmethod
    def forward(ctx, kind, reverse, xw, w_hh, b_hh, *h0):
        core = dict(w_hh=read(w_hh), h0s=[read(h) for h in h0],
                    b_hh=read(b_hh) if b_hh is not None else None)
        out, finals, saved = num.recurrent_layer(kind, read(xw), core["w_hh"], core["h0s"],
                                                 b_hh=core["b_hh"], reverse=reverse)
        ctx.kind, ctx.reverse, ctx.core = kind, reverse, dict(core, saved=saved)
        return (wrap(out), *[wrap(f, fresh=True) for f in finals])  # out is kept in saved

    @staticmethod
    def backward(ctx, d_out, *d_finals):
        if torch.is_grad_enabled():  # create_graph=True: the scan has no derivative of its own
            raise RuntimeError("lazy_torch: a second derivative through nn.LSTM/GRU/RNN "
                               "(autograd.grad(..., create_graph=True) over a recurrent layer) "
                               "is not supported on the lazy device")
        core, ctx.core = ctx.core, None
        d_xw, d_w, d_b, d_h0 = num.recurrent_layer_backward(
            ctx.kind, read(d_out) if d_out is not None else None,
            [read(d) if d is not None else None for d in d_finals], core["w_hh"],
            core["h0s"], core["saved"], b_hh=core["b_hh"], reverse=ctx.reverse)
        return (None, None, wrap(d_xw, fresh=True), wrap(d_w, fresh=True),
                wrap(d_b, fresh=True) if d_b is not None else None,
                *[wrap(d, fresh=True) for d in d_h0])


# -- the layer stack (ordinary lazy torch ops around the recurrences) -----------------------------

def layer_stack(recurrence, kind, input, states, params, has_biases, num_layers, dropout,
                train, bidirectional, batch_first):
    """(output, final states) of a stacked, maybe bidirectional recurrent layer built from
    ordinary torch ops around ``recurrence(kind, reverse, xw, w_hh, b_hh, states) ->
    (out, *finals)`` -- the lazy path's autograd function here, the compile backend's
    custom op in ``dynamo/_recurrent.py``. ``states``: one (L * D, B, H) tensor per carried
    state. A GRU keeps its hidden bias inside the cell (``r`` scales it); the others fold
    it into the input projection."""
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
            if kind != "gru" and b_hh is not None:
                b_ih, b_hh = b_ih + b_hh, None
            xw = torch.nn.functional.linear(x, w_ih, b_ih)
            out, *last = recurrence(kind, d == 1, xw, w_hh, b_hh, [s[k] for s in states])
            outs.append(out)
            for f, v in zip(finals, last[:len(states)], strict=True):
                f.append(v)
        x = outs[0] if dirs == 1 else torch.cat(outs, dim=2)
        if dropout and train and layer < num_layers - 1:
            x = torch.nn.functional.dropout(x, dropout, True)
    return x.transpose(0, 1) if batch_first else x, [torch.stack(f, 0) for f in finals]


def _recurrence(kind, reverse, xw, w_hh, b_hh, states):
    return _Recurrence.apply(kind, reverse, xw, w_hh, b_hh, *states)


def _covered(input, states, params, has_biases, num_layers, bidirectional) -> bool:
    tensors = [input, *states, *params]
    expected = num_layers * (2 if bidirectional else 1) * (4 if has_biases else 2)
    return (all(isinstance(t, LazyTensor) for t in tensors)
            and len(params) == expected and input.dim() == 3 and input.numel() > 0
            and input.shape[0] > 0 and input.shape[1] > 0)


def layer_kernel(kind, recurrence, covered, fallback):
    """A recurrent layer's entry with ATen's signature (``hx``: lstm's (h, c) list, one
    tensor for the others): ``layer_stack`` over ``recurrence`` where ``covered`` says
    so, else ``fallback`` with the same arguments. The lazy path and the compile backend
    differ only in those three."""
    def kernel(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
        states = list(hx) if kind == "lstm" else [hx]
        if not covered(input, states, params, has_biases, num_layers, bidirectional):
            return fallback(input, hx, params, has_biases, num_layers, dropout, train,
                            bidirectional, batch_first)
        out, finals = layer_stack(recurrence, kind, input, states, params, has_biases,
                                  num_layers, dropout, train, bidirectional, batch_first)
        return (out, *finals)
    kernel.__name__ = kind
    return kernel


def _kernel(kind):
    return layer_kernel(kind, _recurrence, _covered, getattr(aten, kind).input.decompose)


_LIB = torch.library.Library("aten", "IMPL")
for _kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    _LIB.impl(f"{_kind}.input", _kernel(_kind), "AutogradPrivateUse1")
