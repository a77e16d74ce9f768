"""nn.LSTM / nn.GRU / nn.RNN on the lazy device: recorded as loops (one ``scan`` per layer
and direction), checked against eager CPU for outputs, final states, gradients of the
input, the initial states and every parameter, and SGD updates over several steps."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import lazy_torch

# (module kind, num_layers, bidirectional, batch_first, bias, initial states given)
CASES = [
    (nn.LSTM, 1, False, False, True, True),
    (nn.LSTM, 2, True, True, True, False),
    (nn.LSTM, 2, False, False, False, True),
    (nn.GRU, 1, False, True, True, True),
    (nn.GRU, 2, True, False, True, False),
    (nn.GRU, 1, True, False, False, True),
    (nn.RNN, 2, True, True, True, True),
    (nn.RNN, 1, False, False, False, False),
]


def _states(module, batch, dev):
    layers = module.num_layers * (2 if module.bidirectional else 1)
    shape = (layers, batch, module.hidden_size)
    h0 = torch.randn(shape, dtype=torch.float64)
    if isinstance(module, nn.LSTM):
        return [h0, torch.randn(shape, dtype=torch.float64)]
    return [h0]


def _step(module, x, states):
    """One forward/backward; the loss reads the output and every final state."""
    hx = None
    if states is not None:
        hx = tuple(states) if isinstance(module, nn.LSTM) else states[0]
    out, hn = module(x, hx)
    hn = hn if isinstance(hn, tuple) else (hn,)
    loss = (out * out.detach().cos()).sum() + sum((h * 1.5).sum() for h in hn)
    loss.backward()
    return [out, *hn]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, (c[0].__name__,) + c[1:])))
def test_recurrent_layer_matches_eager(case, dev, counters):
    kind, layers, bidir, batch_first, bias, given = case
    torch.manual_seed(0)
    eager = kind(3, 4, num_layers=layers, bidirectional=bidir, batch_first=batch_first,
                 bias=bias).double()
    lazy = copy.deepcopy(eager).to(dev)
    x = torch.randn((2, 5, 3) if batch_first else (5, 2, 3), dtype=torch.float64)
    s_e = _states(eager, 2, dev) if given else None
    s_l = [s.to(dev).requires_grad_() for s in s_e] if given else None
    if given:
        s_e = [s.requires_grad_() for s in s_e]
    x_e, x_l = x.clone().requires_grad_(), x.to(dev).requires_grad_()
    before = counters()["fallbacks"]
    outs_e = _step(eager, x_e, s_e)
    outs_l = _step(lazy, x_l, s_l)
    for a, b in zip(outs_e, outs_l, strict=True):
        torch.testing.assert_close(b.cpu(), a)
    grads_e = [x_e.grad] + [p.grad for p in eager.parameters()] + [s.grad for s in s_e or []]
    grads_l = [x_l.grad] + [p.grad for p in lazy.parameters()] + [s.grad for s in s_l or []]
    for a, b in zip(grads_e, grads_l, strict=True):
        torch.testing.assert_close(b.cpu(), a)
    assert counters()["fallbacks"] == before


def test_relu_rnn_and_sgd_updates(dev):
    torch.manual_seed(1)
    eager = nn.RNN(3, 4, nonlinearity="relu", num_layers=2).double()
    lazy = copy.deepcopy(eager).to(dev)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_l = torch.optim.SGD(lazy.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(4, 2, 3, dtype=torch.float64)
        for module, opt, inp in ((eager, opt_e, x), (lazy, opt_l, x.to(dev))):
            opt.zero_grad()
            _step(module, inp, None)
            opt.step()
    for a, b in zip(eager.parameters(), lazy.parameters(), strict=True):
        torch.testing.assert_close(b.detach().cpu(), a.detach())


def _traced(dev, counters, length):
    torch.manual_seed(2)
    module = nn.LSTM(3, 4, num_layers=2, bidirectional=True).to(dev)
    x = torch.randn(length, 2, 3).to(dev)
    lazy_torch.sync()
    before = counters()["traced_ops"]
    out, (h, c) = module(x)
    (out.sum() + h.sum() + c.sum()).backward()
    traced = counters()["traced_ops"] - before
    lazy_torch.sync()
    return traced


def test_ops_per_step_do_not_grow_with_sequence_length(dev, counters):
    assert _traced(dev, counters, 3) == _traced(dev, counters, 12)


def test_one_scan_node_per_layer_and_direction(dev):
    module = nn.GRU(3, 4, num_layers=2, bidirectional=True).to(dev)
    out, _ = module(torch.randn(6, 2, 3).to(dev))
    seen, stack, scans = set(), [lazy_torch.core(out).node], 0
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        scans += node.op == "scan"
        stack.extend(node.operands)
    assert scans == 4
    lazy_torch.sync()


def test_dropout_between_layers_trains(dev):
    """Dropout draws differ from eager's stream: eval mode matches, train mode runs."""
    torch.manual_seed(3)
    eager = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    lazy = copy.deepcopy(eager).to(dev)
    x = torch.randn(5, 2, 3)
    eager.eval()
    lazy.eval()
    torch.testing.assert_close(lazy(x.to(dev))[0].cpu(), eager(x)[0])
    lazy.train()
    out, _ = lazy(x.to(dev))
    out.sum().backward()
    assert all(p.grad is not None for p in lazy.parameters())
    assert out.shape == (5, 2, 4)


def test_second_derivative_raises(dev):
    """``once_differentiable`` alone would let a gradient whose graph only reaches the
    layer through saved values pass silently incomplete: the backward refuses at once."""
    module = nn.GRU(3, 4).to(dev)
    x = torch.randn(5, 2, 3).to(dev).requires_grad_()
    out, _ = module(x)
    with pytest.raises(RuntimeError, match="second derivative"):
        torch.autograd.grad(out.sum(), x, create_graph=True)
    lazy_torch.sync()
