"""A zoo of nn modules (forward and parameter gradients) against eager CPU, with no
CPU fallback; grad clipping and LR schedulers in a lazy training loop."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import lazy_torch
import lazycore as lc

MODULES = {
    "lstm": (lambda: nn.LSTM(4, 5, batch_first=True), lambda: torch.randn(2, 3, 4)),
    "gru": (lambda: nn.GRU(4, 5), lambda: torch.randn(3, 2, 4)),
    "conv1d": (lambda: nn.Conv1d(3, 4, 3, stride=2, padding=1), lambda: torch.randn(2, 3, 9)),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                    output_padding=1),
                         lambda: torch.randn(1, 3, 4, 4)),
    "group_norm": (lambda: nn.GroupNorm(2, 4), lambda: torch.randn(2, 4, 3, 3)),
    "instance_norm": (lambda: nn.InstanceNorm2d(3, affine=True), lambda: torch.randn(2, 3, 4, 4)),
    "layer_norm": (lambda: nn.LayerNorm([3, 4]), lambda: torch.randn(2, 3, 4)),
    "adaptive_avg_pool": (lambda: nn.Sequential(nn.Conv2d(3, 2, 1), nn.AdaptiveAvgPool2d(2)),
                          lambda: torch.randn(2, 3, 6, 6)),
    "upsample_bilinear": (lambda: nn.Sequential(nn.Conv2d(2, 2, 1),
                                                nn.Upsample(scale_factor=2, mode="bilinear")),
                          lambda: torch.randn(1, 2, 3, 3)),
    "multihead_attention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                            lambda: torch.randn(2, 5, 8)),
    "embedding_padding_idx": (lambda: nn.Embedding(10, 4, padding_idx=0),
                              lambda: torch.tensor([[0, 3, 5], [2, 0, 9]])),
    "activations": (lambda: nn.Sequential(nn.Linear(4, 4), nn.Softplus(), nn.Mish(),
                                          nn.Hardswish(), nn.LeakyReLU(), nn.ELU(), nn.SiLU(),
                                          nn.Tanh()),
                    lambda: torch.randn(3, 4)),
}


def _run(module, x, name):
    out = module(x, x, x, need_weights=False)[0] if name == "multihead_attention" else module(x)
    if isinstance(out, tuple):
        out = out[0]
    loss = out.pow(2).sum()
    loss.backward()
    return loss, [p.grad for p in module.parameters()]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_forward_backward(name, dev, counters):
    make, make_input = MODULES[name]
    torch.manual_seed(1)
    eager = make()
    lazy = make()
    lazy.load_state_dict(eager.state_dict())
    lazy.to(dev)
    x = make_input()
    before = counters()["fallbacks"]
    loss_e, grads_e = _run(eager, x, name)
    loss_l, grads_l = _run(lazy, x.to(dev), name)
    torch.testing.assert_close(loss_l.cpu(), loss_e, rtol=1e-4, atol=1e-4)
    for g_l, g_e in zip(grads_l, grads_e, strict=True):
        torch.testing.assert_close(g_l.cpu(), g_e, rtol=1e-3, atol=1e-4)
    assert counters()["fallbacks"] == before


def test_clip_grad_norm_and_scheduler_loop(dev):
    torch.manual_seed(0)
    results = []
    for device in ("cpu", dev):
        torch.manual_seed(0)
        m = nn.Linear(4, 2).to(device)
        opt = torch.optim.AdamW(m.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, 1, 0.5)
        g = torch.Generator().manual_seed(3)
        misses, norms = [], []
        for _ in range(4):
            loss = m(torch.randn(3, 4, generator=g).to(device)).sum()
            opt.zero_grad()
            loss.backward()
            norms.append(torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5))
            opt.step()
            sched.step()
            if device == dev:
                lazy_torch.sync()
            misses.append(lc.metrics.counters()["cache_misses"])
        results.append(([float(n) for n in norms], m.weight.detach().cpu(), misses))
    (n_e, w_e, _), (n_l, w_l, misses) = results
    torch.testing.assert_close(torch.tensor(n_l), torch.tensor(n_e), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w_l, w_e, rtol=1e-4, atol=1e-5)
    assert misses[2:] == [misses[1]] * 2, misses


def test_scaled_dot_product_attention(dev):
    x = torch.randn(2, 2, 5, 4)
    q = x.to(dev)
    for causal in (False, True):
        torch.testing.assert_close(
            F.scaled_dot_product_attention(q, q, q, is_causal=causal).cpu(),
            F.scaled_dot_product_attention(x, x, x, is_causal=causal), rtol=1e-4, atol=1e-5)
