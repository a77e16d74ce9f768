"""Fused RNN cells: PyTorch's LSTM/GRU use these kernels on non-CPU devices.

The cell math (and the workspace layouts, forward and backward) is the core's
``lazycore.composites.recurrent``; PyTorch's gate order is the core's default.
"""

from __future__ import annotations

from .common import num, ops
from .registry import lower


@lower("_thnn_fused_lstm_cell.default")
def lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    return num.lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias)


@lower("_thnn_fused_lstm_cell_backward_impl.default")
def lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    grad_gates, grad_cx = num.lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace)
    return grad_gates, grad_cx, ops.reduce_sum(grad_gates, axes=(0,)) if has_bias else None


@lower("_thnn_fused_gru_cell.default")
def gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    return num.gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias)


@lower("_thnn_fused_gru_cell_backward.default")
def gru_cell_backward(grad_hy, workspace, has_bias):
    grad_input, grad_hidden, dhx = num.gru_cell_backward(grad_hy, workspace)
    bias_grads = [ops.reduce_sum(g, axes=(0,)) if has_bias else None
                  for g in (grad_input, grad_hidden)]
    return grad_input, grad_hidden, dhx, *bias_grads
