"""Fused RNN cells: PyTorch's LSTM/GRU use these kernels on non-CPU devices.

The workspace layouts are our own (forward and backward are both here):
LSTM saves the activated gates [i, f, g, o]; GRU saves [r, z, n, hx, hidden_n].
"""

from __future__ import annotations

from .common import full_like, num, ops
from .registry import lower


def _chunks(x, n):
    size = x.shape[1] // n
    return [ops.slice(x, start_indices=(0, k * size), limit_indices=(x.shape[0], (k + 1) * size))
            for k in range(n)]


def _add_bias(gates, bias):
    return gates if bias is None else ops.add(gates, num.broadcast_to(bias, gates.shape))


def _one_minus(x):
    return ops.sub(full_like(x, 1), x)


@lower("_thnn_fused_lstm_cell.default")
def lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    gates = ops.add(_add_bias(input_gates, input_bias), _add_bias(hidden_gates, hidden_bias))
    i, f, g, o = _chunks(gates, 4)
    i, f, g, o = ops.logistic(i), ops.logistic(f), ops.tanh(g), ops.logistic(o)
    cy = ops.add(ops.mul(f, cx), ops.mul(i, g))
    hy = ops.mul(o, ops.tanh(cy))
    return hy, cy, ops.concatenate(i, f, g, o, dimension=1)


@lower("_thnn_fused_lstm_cell_backward_impl.default")
def lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    i, f, g, o = _chunks(workspace, 4)
    tanh_cy = ops.tanh(cy)
    dcy = grad_cy if grad_cy is not None else full_like(cy, 0)
    if grad_hy is not None:
        dcy = ops.add(dcy, ops.mul(ops.mul(grad_hy, o), _one_minus(ops.mul(tanh_cy, tanh_cy))))
        do = ops.mul(ops.mul(grad_hy, tanh_cy), ops.mul(o, _one_minus(o)))
    else:
        do = full_like(o, 0)
    di = ops.mul(ops.mul(dcy, g), ops.mul(i, _one_minus(i)))
    df = ops.mul(ops.mul(dcy, cx), ops.mul(f, _one_minus(f)))
    dg = ops.mul(ops.mul(dcy, i), _one_minus(ops.mul(g, g)))
    grad_gates = ops.concatenate(di, df, dg, do, dimension=1)
    grad_cx = ops.mul(dcy, f)
    grad_bias = ops.reduce_sum(grad_gates, axes=(0,)) if has_bias else None
    return grad_gates, grad_cx, grad_bias


@lower("_thnn_fused_gru_cell.default")
def gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    ir, iz, in_ = _chunks(_add_bias(input_gates, input_bias), 3)
    hr, hz, hn = _chunks(_add_bias(hidden_gates, hidden_bias), 3)
    r = ops.logistic(ops.add(ir, hr))
    z = ops.logistic(ops.add(iz, hz))
    n = ops.tanh(ops.add(in_, ops.mul(r, hn)))
    hy = ops.add(ops.mul(_one_minus(z), n), ops.mul(z, hx))
    return hy, ops.concatenate(r, z, n, hx, hn, dimension=1)


@lower("_thnn_fused_gru_cell_backward.default")
def gru_cell_backward(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = _chunks(workspace, 5)
    dhx = ops.mul(grad_hy, z)
    dz = ops.mul(ops.mul(grad_hy, ops.sub(hx, n)), ops.mul(z, _one_minus(z)))
    dn = ops.mul(ops.mul(grad_hy, _one_minus(z)), _one_minus(ops.mul(n, n)))
    dr = ops.mul(ops.mul(dn, hn), ops.mul(r, _one_minus(r)))
    grad_input = ops.concatenate(dr, dz, dn, dimension=1)
    grad_hidden = ops.concatenate(dr, dz, ops.mul(dn, r), dimension=1)
    gi = ops.reduce_sum(grad_input, axes=(0,)) if has_bias else None
    gh = ops.reduce_sum(grad_hidden, axes=(0,)) if has_bias else None
    return grad_input, grad_hidden, dhx, gi, gh
