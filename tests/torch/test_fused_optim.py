"""``torch.optim.Adam/AdamW/SGD(fused=True)`` on lazy parameters: one sub-program call per
step for all parameters, against eager's fused CPU kernels over several steps."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import lazycore as lc

CASES = [
    (torch.optim.AdamW, {"lr": 0.02, "weight_decay": 0.1}),
    (torch.optim.Adam, {"lr": 0.02, "weight_decay": 0.1, "amsgrad": True}),
    (torch.optim.Adam, {"lr": 0.02, "maximize": True}),
    (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "dampening": 0.2}),
    (torch.optim.SGD, {"lr": 0.05}),
]


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


@pytest.mark.parametrize("opt_class,kwargs", CASES,
                         ids=[f"{c.__name__}-{'-'.join(k)}" for c, k in CASES])
def test_fused_step_matches_eager_as_one_call(opt_class, kwargs, dev):
    torch.manual_seed(0)
    eager = _model()
    lazy = copy.deepcopy(eager).to(dev)
    opt_e = opt_class(eager.parameters(), fused=True, **kwargs)
    opt_l = opt_class(lazy.parameters(), fused=True, **kwargs)
    for i in range(4):
        x, y = torch.randn(5, 4), torch.randn(5, 3)
        for model, opt, d in ((eager, opt_e, "cpu"), (lazy, opt_l, dev)):
            opt.zero_grad()
            nn.functional.mse_loss(model(x.to(d)), y.to(d)).backward()
            before = lc.metrics.counters()
            opt.step()
            after = lc.metrics.counters()
        # captured at the first step, and for SGD again at the second (its first step sets
        # the momentum buffers); then Adam's step counters are a foreach add (one op per
        # parameter) and the update is one call
        if i >= 2:
            assert after["traced_ops"] - before["traced_ops"] <= 1 + len(list(lazy.parameters()))
        for group in opt_l.param_groups:  # a changed learning rate is an input, not a constant
            group["lr"] *= 0.5
        for group in opt_e.param_groups:
            group["lr"] *= 0.5
    assert after.get("fallbacks", 0) == before.get("fallbacks", 0)
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        torch.testing.assert_close(pl.detach().cpu(), pe.detach(), rtol=1e-5, atol=1e-6)


def _adam_lists(device, seed=3):
    g = torch.Generator().manual_seed(seed)
    shapes = [(3, 2), (4,)]

    def make(scale=1.0):
        return [(torch.randn(s, generator=g) * scale).to(device) for s in shapes]
    params, grads, avgs = make(), make(), make(0.1)
    sqs = [t.abs() for t in make(0.1)]
    steps = [torch.tensor(2.0).to(device) for _ in shapes]
    return params, grads, avgs, sqs, [], steps


def test_functional_fused_adamw_returns_new_values(dev):
    kwargs = {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.1, "eps": 1e-8,
              "amsgrad": False, "maximize": False}
    want = torch.ops.aten._fused_adamw(*_adam_lists("cpu"), **kwargs)
    got = torch.ops.aten._fused_adamw(*_adam_lists(dev), **kwargs)
    for w_list, g_list in zip(want, got, strict=True):
        assert len(w_list) == len(g_list)
        for w, g in zip(w_list, g_list, strict=True):
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6)


def test_grad_scaler_arguments_run_eagers_kernel(dev):
    kwargs = {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.0, "eps": 1e-8,
              "amsgrad": False, "maximize": False}
    cpu, lazy = _adam_lists("cpu"), _adam_lists(dev)
    torch.ops.aten._fused_adam_(*cpu, grad_scale=torch.tensor(4.0), **kwargs)
    torch.ops.aten._fused_adam_(*lazy, grad_scale=torch.tensor(4.0).to(dev), **kwargs)
    for w_list, g_list in zip(cpu[:4], lazy[:4], strict=True):
        for w, g in zip(w_list, g_list, strict=True):
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6)
