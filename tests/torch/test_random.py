"""Random ops on the lazy device are reproducible under ``torch.manual_seed`` (their
streams are lazy_torch's own, not CPU PyTorch's) and have the right distributions."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import lazy_torch


def draw(dev):
    a = torch.randn(1000, device=dev)
    b = torch.rand(3, 4, device=dev)
    c = torch.randint(0, 10, (50,), device=dev)
    d = F.dropout(torch.ones(1000, device=dev), p=0.25, training=True)
    e = torch.randperm(20, device=dev)
    f = torch.empty(500, device=dev).uniform_(-2, 3)
    g = torch.empty(500, device=dev).normal_(5.0, 0.1)
    lazy_torch.sync()  # one program for all draws
    return [t.cpu() for t in (a, b, c, d, e, f, g)]


def test_manual_seed_reproducible(dev):
    torch.manual_seed(123)
    first = draw(dev)
    torch.manual_seed(123)
    second = draw(dev)
    for x, y in zip(first, second, strict=True):
        assert torch.equal(x, y)
    lazy_torch.manual_seed(124)
    third = draw(dev)
    assert not torch.equal(first[0], third[0])


def test_distributions(dev):
    torch.manual_seed(0)
    a, b, c, d, e, f, g = draw(dev)
    assert abs(a.mean().item()) < 0.15 and abs(a.std().item() - 1) < 0.1
    assert b.min().item() >= 0 and b.max().item() < 1 and b.dtype == torch.float32
    assert c.dtype == torch.int64 and c.min().item() >= 0 and c.max().item() < 10
    kept = (d != 0).float().mean().item()
    assert 0.65 < kept < 0.85 and torch.allclose(d[d != 0], torch.full_like(d[d != 0], 4 / 3))
    assert sorted(e.tolist()) == list(range(20))
    assert f.min().item() >= -2 and f.max().item() < 3
    assert abs(g.mean().item() - 5) < 0.05


def test_random_in_training_loop_does_not_recompile(dev, counters):
    x = torch.ones(64, device=dev)
    misses = []
    for _ in range(4):
        y = F.dropout(x, 0.5) * torch.randn(64, device=dev)
        lazy_torch.sync()
        y.sum().item()
        misses.append(counters()["cache_misses"])
    assert misses[1:] == [misses[1]] * 3
