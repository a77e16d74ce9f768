"""nn.LSTMCell / nn.GRUCell on the lazy device: PyTorch routes them to its fused cell
kernels (``_thnn_fused_*_cell`` and their backwards), which lower to the core's
``lstm_cell``/``gru_cell`` composites. Checked against eager CPU: next states and the
gradients of the input, the states and every parameter, with and without biases."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import lazy_torch
import lazycore as lc


def _ops_seen(t):
    seen, stack, names = set(), [lazy_torch.core(t).node], set()
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            names.add(node.op)
            stack.extend(node.operands)
    return names


@pytest.mark.parametrize("kind", [nn.LSTMCell, nn.GRUCell])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_cell_matches_eager(kind, bias, dev, counters):
    torch.manual_seed(0)
    eager = kind(3, 4, bias=bias).double()
    lazy = copy.deepcopy(eager).to(dev)
    x = torch.randn(2, 3, dtype=torch.float64)
    states = [torch.randn(2, 4, dtype=torch.float64) for _ in range(2 if kind is nn.LSTMCell else 1)]
    outs, grads = [], []
    before = counters()["fallbacks"]
    for module, d in ((eager, "cpu"), (lazy, dev)):
        xi = x.clone().to(d).requires_grad_()
        si = [s.clone().to(d).requires_grad_() for s in states]
        out = module(xi, tuple(si) if kind is nn.LSTMCell else si[0])
        out = out if isinstance(out, tuple) else (out,)
        if d == dev:  # the lowered cell, not a CPU fallback
            assert "logistic" in _ops_seen(out[0])
        loss = sum((o * o.detach().cos()).sum() for o in out)
        loss.backward()
        outs.append(out)
        grads.append([xi.grad, *[s.grad for s in si], *[p.grad for p in module.parameters()]])
    assert counters()["fallbacks"] == before
    for a, b in zip(outs[0], outs[1], strict=True):
        torch.testing.assert_close(b.cpu(), a)
    for a, b in zip(grads[0], grads[1], strict=True):
        torch.testing.assert_close(b.cpu(), a)
    lc.sync()
