"""``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` under the backend: one core ``scan`` per layer and
direction, as on the plain lazy path, instead of one cell per time step.

AOTAutograd traces ``aten::lstm`` (``gru``, ``rnn_tanh``, ``rnn_relu``) with fake tensors,
which take PyTorch's per-step decomposition: the graph held every step's cell (a 60 s
first step for a 64-step LSTM language model). The backend rewrites the Dynamo graph's
calls of the unpacked-sequence overloads into ``layers`` below, which AOTAutograd traces
instead: the input projection of every step is one ``linear`` (differentiated by AOT
like any op), the recurrence one ``lazy_torch::recurrence`` op, and its gradient one
``lazy_torch::recurrence_backward`` op. Both are lowered through lazy_torch's one table
to the core's ``recurrent_layer`` / ``recurrent_layer_backward``
(``lazycore.composites.recurrent``) -- the scans the plain path records
(``lowerings/recurrent.py``). What ``layers`` does not cover (projections, symbolic
shapes, empty sequences) runs PyTorch's own op, as before.
"""

from __future__ import annotations

import functools

import torch

import lazycore as lc

from .._convert import np_dtype, torch_dtype
from ..lowerings import LOWERINGS
from ..lowerings.recurrent import layer_kernel

num = lc.numeric

_LIB = torch.library.Library("lazy_torch", "FRAGMENT")
_LIB.define("recurrence(str kind, bool reverse, Tensor xw, Tensor w_hh, Tensor? b_hh, "
            "Tensor[] h0) -> Tensor[]")
_LIB.define("recurrence_backward(str kind, bool reverse, Tensor d_out, Tensor[] d_finals, "
            "Tensor w_hh, Tensor? b_hh, Tensor[] h0, Tensor out, Tensor[] saved) -> Tensor[]")
_ops = torch.ops.lazy_torch

#: carried states per cell kind
_STATES = {"lstm": 2, "gru": 1, "rnn_tanh": 1, "rnn_relu": 1}


# -- lowerings (the lazy tensors' kernels: lazy_torch's table) --------------------------------

def _forward(kind, reverse, xw, w_hh, b_hh, h0):
    """[outputs, *final states, *saved]: ``saved`` less the outputs (saved[0])."""
    out, finals, saved = num.recurrent_layer(kind, xw, w_hh, list(h0), b_hh=b_hh,
                                             reverse=reverse)
    return [out, *finals, *saved[1:]]


def _backward(kind, reverse, d_out, d_finals, w_hh, b_hh, h0, out, saved):
    d_xw, d_w, d_b, d_h0 = num.recurrent_layer_backward(
        kind, d_out, list(d_finals), w_hh, list(h0), [out, *saved], b_hh=b_hh,
        reverse=reverse)
    return [d_xw, d_w, *([d_b] if d_b is not None else []), *d_h0]


LOWERINGS[_ops.recurrence.default] = _forward
LOWERINGS[_ops.recurrence_backward.default] = _backward


# -- shapes (fake tensors) --------------------------------------------------------------------

def _aval(t: torch.Tensor):
    return lc.Aval(tuple(t.shape), np_dtype(t.dtype))


@functools.cache
def _forward_avals(kind, reverse, xw, w_hh, b_hh, h0) -> tuple:
    """The outputs' avals, from the core composite traced on placeholders (the saved
    workspace's layout is the composite's business)."""
    holder = lc.subprogram.placeholder
    with lc.subprogram.capturing():
        outs = _forward(kind, reverse, holder(xw), holder(w_hh),
                        holder(b_hh) if b_hh is not None else None, [holder(h) for h in h0])
        return tuple(o.aval for o in outs)


@torch.library.register_fake("lazy_torch::recurrence")
def _forward_fake(kind, reverse, xw, w_hh, b_hh, h0):
    avals = _forward_avals(kind, reverse, _aval(xw), _aval(w_hh),
                           _aval(b_hh) if b_hh is not None else None,
                           tuple(_aval(h) for h in h0))
    return [xw.new_empty(a.shape, dtype=torch_dtype(a.dtype)) for a in avals]


@torch.library.register_fake("lazy_torch::recurrence_backward")
def _backward_fake(kind, reverse, d_out, d_finals, w_hh, b_hh, h0, out, saved):
    steps, batch = out.shape[0], out.shape[1]
    grads = [d_out.new_empty((steps, batch, w_hh.shape[0])), torch.empty_like(w_hh)]
    if b_hh is not None:
        grads.append(torch.empty_like(b_hh))
    return grads + [torch.empty_like(h) for h in h0]


# -- autograd ---------------------------------------------------------------------------------

def _setup(ctx, inputs, output):
    kind, reverse, _, w_hh, b_hh, h0 = inputs
    n = _STATES[kind]
    ctx.kind, ctx.reverse, ctx.has_bias, ctx.n_states = kind, reverse, b_hh is not None, n
    saved = output[1 + n:]
    ctx.mark_non_differentiable(*saved)
    ctx.save_for_backward(w_hh, b_hh, output[0], *h0, *saved)


def _gradient(ctx, grads):
    w_hh, b_hh, out, *rest = ctx.saved_tensors
    n = ctx.n_states
    h0, saved = rest[:n], rest[n:]
    d_out = grads[0] if grads[0] is not None else torch.zeros_like(out)
    d_finals = [g if g is not None else torch.zeros_like(h)
                for g, h in zip(grads[1:1 + n], h0, strict=True)]
    got = _ops.recurrence_backward(ctx.kind, ctx.reverse, d_out, d_finals, w_hh,
                                   b_hh if ctx.has_bias else None, list(h0), out, list(saved))
    d_xw, d_w = got[0], got[1]
    d_b = got[2] if ctx.has_bias else None
    return None, None, d_xw, d_w, d_b, list(got[3 if ctx.has_bias else 2:])


torch.library.register_autograd("lazy_torch::recurrence", _gradient, setup_context=_setup)


# -- the layer stack (what AOTAutograd traces in place of aten::lstm/gru/rnn_*) ---------------

def _covered(input, states, params, has_biases, num_layers, bidirectional) -> bool:
    expected = num_layers * (2 if bidirectional else 1) * (4 if has_biases else 2)
    tensors = [input, *states, *params]
    return (len(params) == expected and input.dim() == 3 and input.numel() > 0
            and all(type(s) is int for t in tensors for s in t.shape))


def _recurrence(kind, reverse, xw, w_hh, b_hh, states):
    return _ops.recurrence(kind, reverse, xw, w_hh, b_hh, states)


#: Dynamo's target -> (what replaces it, the argument that is a list only in the
#: unpacked-sequence overload: ``hx`` of lstm, ``params`` of the others)
_REWRITES = {
    torch.lstm: (layer_kernel("lstm", _recurrence, _covered, torch.lstm), 1),
    torch.gru: (layer_kernel("gru", _recurrence, _covered, torch.gru), 2),
    torch.rnn_tanh: (layer_kernel("rnn_tanh", _recurrence, _covered, torch.rnn_tanh), 2),
    torch.rnn_relu: (layer_kernel("rnn_relu", _recurrence, _covered, torch.rnn_relu), 2),
}


def rewrite(gm: torch.fx.GraphModule) -> None:
    """Calls of ``torch.lstm``/``gru``/``rnn_*`` on unpacked sequences become ``layers``
    (packed sequences keep PyTorch's op)."""
    changed = False
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.kwargs:
            continue
        entry = _REWRITES.get(node.target)
        if entry is None or len(node.args) != 9:
            continue
        replacement, listed = entry
        if isinstance(node.args[listed], list | tuple):
            node.target = replacement
            changed = True
    if changed:
        gm.recompile()
