"""Recurrent cells (LSTM, GRU, Elman) and whole recurrent layers as one ``scan`` each.

Cells take the pre-activations a framework computed (input side and hidden side, each
with an optional bias) and return the new state plus a *workspace*: what the matching
``*_backward`` needs. Workspace layouts are lazycore's own: an LSTM saves its activated
gates ``[i, f, g, o]``, a GRU ``[r, z, n, h_prev, hn]``, whatever the gate order. Gates
(pre-activations and their gradients) are chunks of the last axis in the order
``gate_order`` names (one letter per gate), so a framework with another packing passes
its order instead of permuting weights: LSTM letters ``i f g o`` (input, forget, cell
candidate, output), GRU ``r z n`` (reset, update, new). The GRU's reset gate scales the
hidden-side candidate *after* its matmul (``n = tanh(in + r * hn)``).

``recurrent_layer`` runs a cell over a sequence whose input projection was done in one
matmul (``xw``: (T, B, G)), with the recurrent weight ``w_hh`` (G, H) applied inside the
loop; ``recurrent_layer_backward`` is its reverse ``scan`` plus the recurrent weight's
gradient as one matmul over all steps. A frontend wraps the pair in its autograd.
"""

from __future__ import annotations

from .. import ops
from ..loops import scan
from ..tensor import Tensor
from .broadcasting import broadcast_to, full_like

LSTM_GATES = "ifgo"
GRU_GATES = "rzn"


def _one_minus(x: Tensor) -> Tensor:
    return ops.sub(full_like(x, 1), x)


def _chunks(x: Tensor, n: int) -> list[Tensor]:
    """``n`` equal chunks of ``x``'s last axis."""
    size, lead = x.shape[-1] // n, x.shape[:-1]
    return [ops.slice(x, start_indices=(0,) * len(lead) + (k * size,),
                      limit_indices=lead + ((k + 1) * size,)) for k in range(n)]


def _split(x: Tensor, order: str, canonical: str) -> list[Tensor]:
    """The chunks of ``x``'s last axis named by ``order``, returned in ``canonical`` order."""
    if sorted(order) != sorted(canonical):
        raise ValueError(f"gate_order {order!r} must be a permutation of {canonical!r}")
    named = dict(zip(order, _chunks(x, len(order)), strict=True))
    return [named[name] for name in canonical]


def _join(parts: list[Tensor], order: str, canonical: str) -> Tensor:
    """``parts`` (in ``canonical`` order) concatenated along the last axis in ``order``."""
    named = dict(zip(canonical, parts, strict=True))
    return ops.concatenate(*[named[name] for name in order], dimension=parts[0].ndim - 1)


def _with_bias(gates: Tensor, bias: Tensor | None) -> Tensor:
    return gates if bias is None else ops.add(gates, broadcast_to(bias, gates.shape))


# -- cells ------------------------------------------------------------------------------------

def lstm_cell(input_gates: Tensor, hidden_gates: Tensor, c: Tensor, input_bias=None,
              hidden_bias=None, *, gate_order: str = LSTM_GATES):
    """One LSTM step: ``(h', c', workspace)`` with ``c' = f*c + i*g``, ``h' = o*tanh(c')``
    (``i, f, o`` logistic, ``g`` tanh); the workspace is the activated gates."""
    gates = ops.add(_with_bias(input_gates, input_bias), _with_bias(hidden_gates, hidden_bias))
    i, f, g, o = _split(gates, gate_order, LSTM_GATES)
    i, f, g, o = ops.logistic(i), ops.logistic(f), ops.tanh(g), ops.logistic(o)
    c2 = ops.add(ops.mul(f, c), ops.mul(i, g))
    h2 = ops.mul(o, ops.tanh(c2))
    return h2, c2, ops.concatenate(i, f, g, o, dimension=h2.ndim - 1)


def lstm_cell_backward(d_h, d_c, c_prev: Tensor, c: Tensor, workspace: Tensor, *,
                       gate_order: str = LSTM_GATES):
    """Gradients ``(d_gates, d_c_prev)`` of ``lstm_cell`` (``d_h``/``d_c`` may be None:
    no gradient flows in that way); ``d_gates`` is that of the summed pre-activations."""
    i, f, g, o = _chunks(workspace, 4)
    tanh_c = ops.tanh(c)
    dc = d_c if d_c is not None else full_like(c, 0)
    if d_h is not None:
        dc = ops.add(dc, ops.mul(ops.mul(d_h, o), _one_minus(ops.mul(tanh_c, tanh_c))))
        do = ops.mul(ops.mul(d_h, tanh_c), ops.mul(o, _one_minus(o)))
    else:
        do = full_like(o, 0)
    di = ops.mul(ops.mul(dc, g), ops.mul(i, _one_minus(i)))
    df = ops.mul(ops.mul(dc, c_prev), ops.mul(f, _one_minus(f)))
    dg = ops.mul(ops.mul(dc, i), _one_minus(ops.mul(g, g)))
    return _join([di, df, dg, do], gate_order, LSTM_GATES), ops.mul(dc, f)


def gru_cell(input_gates: Tensor, hidden_gates: Tensor, h: Tensor, input_bias=None,
             hidden_bias=None, *, gate_order: str = GRU_GATES):
    """One GRU step: ``(h', workspace)`` with ``r, z`` logistic of the summed sides,
    ``n = tanh(in + r * hn)``, ``h' = (1 - z) * n + z * h``."""
    ir, iz, in_ = _split(_with_bias(input_gates, input_bias), gate_order, GRU_GATES)
    hr, hz, hn = _split(_with_bias(hidden_gates, hidden_bias), gate_order, GRU_GATES)
    r = ops.logistic(ops.add(ir, hr))
    z = ops.logistic(ops.add(iz, hz))
    n = ops.tanh(ops.add(in_, ops.mul(r, hn)))
    return ops.add(ops.mul(_one_minus(z), n), ops.mul(z, h)), ops.concatenate(r, z, n, h, hn, dimension=h.ndim - 1)


def gru_cell_backward(d_h: Tensor, workspace: Tensor, *, gate_order: str = GRU_GATES):
    """Gradients ``(d_input_gates, d_hidden_gates, d_h_prev)`` of ``gru_cell``."""
    r, z, n, h, hn = _chunks(workspace, 5)
    dh_prev = ops.mul(d_h, z)
    dz = ops.mul(ops.mul(d_h, ops.sub(h, n)), ops.mul(z, _one_minus(z)))
    dn = ops.mul(ops.mul(d_h, _one_minus(z)), _one_minus(ops.mul(n, n)))
    dr = ops.mul(ops.mul(dn, hn), ops.mul(r, _one_minus(r)))
    d_input = _join([dr, dz, dn], gate_order, GRU_GATES)
    return d_input, _join([dr, dz, ops.mul(dn, r)], gate_order, GRU_GATES), dh_prev


def elman_cell(pre: Tensor, *, relu: bool = False) -> Tensor:
    """A plain RNN's activation: ``tanh(pre)``, or ``max(pre, 0)`` with ``relu``."""
    return ops.max(pre, full_like(pre, 0)) if relu else ops.tanh(pre)


def elman_cell_backward(d_h: Tensor, h: Tensor, *, relu: bool = False) -> Tensor:
    """Gradient of ``elman_cell``'s input from its output ``h``."""
    if relu:
        return ops.select(ops.gt(h, full_like(h, 0)), d_h, full_like(d_h, 0))
    return ops.mul(d_h, _one_minus(ops.mul(h, h)))


# -- scan bodies: one class per cell kind -------------------------------------------------------

def _matmul_t(h, w):
    """h @ w.T for h (B, H), w (G, H)."""
    return ops.dot_general(h, w, contracting=((1,), (1,)), batch=((), ()))


def _matmul(g, w):
    """g @ w for g (B, G), w (G, H)."""
    return ops.dot_general(g, w, contracting=((1,), (0,)), batch=((), ()))


class _LSTM:
    """carry (h, c); saved per step: h, c and the workspace."""

    def __init__(self, gate_order: str):
        self.gate_order = gate_order

    def step(self, carry, x, consts):
        (h, c), (xw,), (w_hh,) = carry, x, consts
        h2, c2, acts = lstm_cell(xw, _matmul_t(h, w_hh), c, gate_order=self.gate_order)
        return [h2, c2], [h2, c2, acts]

    def back(self, carry, x, consts):
        (dh, dc), (dy, c_prev, c, acts), (w_hh,) = carry, x, consts
        dgates, dc_prev = lstm_cell_backward(ops.add(dh, dy), dc, c_prev, c, acts,
                                             gate_order=self.gate_order)
        return [_matmul(dgates, w_hh), dc_prev], [dgates]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        _, cs, acts = saved
        return [shift_steps(cs, h0s[1], reverse=reverse), cs, acts]


class _GRU:
    """carry h; saved per step: h and the workspace."""

    def __init__(self, gate_order: str):
        self.gate_order = gate_order

    def step(self, carry, x, consts):
        (h,), (xw,), (w_hh, *b_hh) = carry, x, consts
        h2, workspace = gru_cell(xw, _matmul_t(h, w_hh), h, None, b_hh[0] if b_hh else None,
                                 gate_order=self.gate_order)
        return [h2], [h2, workspace]

    def back(self, carry, x, consts):
        (dh,), (dy, workspace), (w_hh, *_) = carry, x, consts
        d_input, d_hidden, dh_prev = gru_cell_backward(ops.add(dh, dy), workspace,
                                                       gate_order=self.gate_order)
        return [ops.add(dh_prev, _matmul(d_hidden, w_hh))], [d_input, d_hidden]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        return [saved[1]]


class _Elman:
    """carry h; saved per step: h."""

    def __init__(self, relu: bool):
        self.relu = relu

    def step(self, carry, x, consts):
        (h,), (xw,), (w_hh,) = carry, x, consts
        h2 = elman_cell(ops.add(xw, _matmul_t(h, w_hh)), relu=self.relu)
        return [h2], [h2]

    def back(self, carry, x, consts):
        (dh,), (dy, h), (w_hh,) = carry, x, consts
        dpre = elman_cell_backward(ops.add(dh, dy), h, relu=self.relu)
        return [_matmul(dpre, w_hh)], [dpre]

    @staticmethod
    def back_inputs(h0s, saved, reverse):
        return [saved[0]]


_CELLS = {"lstm": lambda order: _LSTM(order or LSTM_GATES),
          "gru": lambda order: _GRU(order or GRU_GATES),
          "rnn_tanh": lambda order: _Elman(False),
          "rnn_relu": lambda order: _Elman(True)}
#: carried states per cell kind (an LSTM carries (h, c))
STATES = {"lstm": 2, "gru": 1, "rnn_tanh": 1, "rnn_relu": 1}


def _cell(kind: str, gate_order):
    try:
        return _CELLS[kind](gate_order)
    except KeyError:
        raise ValueError(f"unknown recurrent cell {kind!r}; known: {sorted(_CELLS)}") from None


def shift_steps(stack: Tensor, first: Tensor, *, reverse: bool = False) -> Tensor:
    """The value each step started from: ``first`` then ``stack`` (T, ...) shifted by one
    step (the other way round for a reverse direction)."""
    t = stack.shape[0]
    one = ops.reshape(first, new_sizes=(1,) + first.shape)
    if t == 1:
        return one
    rest = stack.shape[1:]
    if reverse:
        return ops.concatenate(ops.slice(stack, start_indices=(1,) + (0,) * len(rest),
                                         limit_indices=(t,) + rest), one, dimension=0)
    return ops.concatenate(one, ops.slice(stack, start_indices=(0,) * stack.ndim,
                                          limit_indices=(t - 1,) + rest), dimension=0)


# -- whole layers -------------------------------------------------------------------------------

def recurrent_layer(kind: str, xw: Tensor, w_hh: Tensor, h0s, *, b_hh=None,
                    reverse: bool = False, gate_order: str | None = None):
    """Run cell ``kind`` (``"lstm"``, ``"gru"``, ``"rnn_tanh"``, ``"rnn_relu"``) over
    ``xw`` (T, B, G) from states ``h0s`` (B, H each). ``b_hh``: a hidden-side bias kept
    inside the loop (a GRU's, which ``r`` scales; others fold it into ``xw``).
    Returns ``(outputs (T, B, H), final states, saved)``; ``saved`` is what
    ``recurrent_layer_backward`` takes."""
    cell = _cell(kind, gate_order)
    consts = [w_hh] + ([b_hh] if b_hh is not None else [])
    finals, saved = scan(cell.step, list(h0s), [xw], consts, reverse=reverse, save=False)
    return saved[0], finals, saved


def recurrent_layer_backward(kind: str, d_out, d_finals, w_hh: Tensor, h0s, saved, *,
                             b_hh=None, reverse: bool = False, gate_order: str | None = None):
    """Gradients ``(d_xw, d_w_hh, d_b_hh or None, d_h0s)`` of ``recurrent_layer``
    (``d_out``/``d_finals`` entries may be None: zero)."""
    cell = _cell(kind, gate_order)
    consts = [w_hh] + ([b_hh] if b_hh is not None else [])
    out = saved[0]
    d_out = d_out if d_out is not None else full_like(out, 0)
    d_carry = [d if d is not None else full_like(h, 0) for d, h in zip(d_finals, h0s, strict=True)]
    d_h0s, d_steps = scan(cell.back, d_carry, [d_out] + cell.back_inputs(h0s, saved, reverse),
                          consts, reverse=not reverse, save=False)
    d_pre = d_steps[-1]  # gradient of the hidden-side pre-activations, (T, B, G)
    d_w = ops.dot_general(d_pre, shift_steps(out, h0s[0], reverse=reverse),
                          contracting=((0, 1), (0, 1)), batch=((), ()))
    d_b = ops.reduce_sum(d_pre, axes=(0, 1)) if b_hh is not None else None
    return d_steps[0], d_w, d_b, d_h0s
