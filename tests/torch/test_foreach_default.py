"""Optimizers take the foreach (multi-tensor) path by default on lazy parameters, as
they do for CUDA tensors, and train like eager."""

from __future__ import annotations

import copy
from unittest import mock

import pytest
import torch
from torch.optim.optimizer import _default_to_fused_or_foreach

import lazy_torch


def test_lazy_parameters_default_to_foreach(dev):
    params = list(torch.nn.Linear(3, 2).to(dev).parameters())
    assert _default_to_fused_or_foreach(params, differentiable=False) == (False, True)
    assert _default_to_fused_or_foreach(params, differentiable=True) == (False, False)
    cpu = list(torch.nn.Linear(3, 2).parameters())  # CPU keeps PyTorch's own default
    assert _default_to_fused_or_foreach(cpu, differentiable=False) == (False, False)


@pytest.mark.parametrize("make", [
    lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
    lambda p: torch.optim.Adam(p, lr=1e-2),
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
], ids=["adamw", "adam", "sgd"])
def test_default_optimizer_runs_foreach_and_matches_eager(make, dev):
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    lazy = copy.deepcopy(eager).to(dev)
    opt_e, opt_l = make(eager.parameters()), make(lazy.parameters())
    calls = []
    real = torch._foreach_add_

    def spy(*args, **kwargs):
        calls.append(type(args[0][0]))
        return real(*args, **kwargs)

    for _ in range(3):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        for model, opt, d in ((eager, opt_e, "cpu"), (lazy, opt_l, dev)):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.to(d)), y.to(d)).backward()
            with mock.patch.object(torch, "_foreach_add_", spy):
                opt.step()
    assert lazy_torch.LazyTensor in calls  # the multi-tensor path ran on lazy tensors
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        torch.testing.assert_close(pl.detach().cpu(), pe.detach(), rtol=1e-5, atol=1e-6)
