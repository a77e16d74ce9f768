"""Training parity: 20 AdamW steps on the lazy device give eager CPU's losses, and
after the second step no step compiles anything."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lazy_torch
import lazycore as lc

from .models import MODELS, batches

STEPS = 20


def train(kind: str, device, foreach=None, steps: int = STEPS):
    torch.manual_seed(0)
    model = MODELS[kind]()
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=foreach)
    losses, misses = [], []
    lazy = device is not None and torch.device(device).type == "lazy"
    for x, y in batches(kind, steps):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if lazy:
            lazy_torch.sync()
        losses.append(loss.item())
        misses.append(lc.metrics.counters()["cache_misses"])
    return losses, misses, model


@pytest.mark.parametrize("kind", ["mlp", "cnn", "transformer"])
def test_training_parity(kind, dev):
    expected, _, cpu_model = train(kind, "cpu")
    got, misses, lazy_model = train(kind, dev)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(expected), rtol=1e-4, atol=1e-5)
    assert misses[2:] == [misses[1]] * (STEPS - 2), f"recompiled after step 2: {misses}"
    # the trained models agree (parameters with a zero true gradient, e.g. attention's key
    # bias, may drift by rounding noise amplified by Adam; their outputs do not depend on it)
    x, _ = batches(kind, 1, seed=1)[0]
    with torch.no_grad():
        torch.testing.assert_close(lazy_model(x.to(dev)).cpu(), cpu_model(x), rtol=1e-3,
                                   atol=1e-4)


@pytest.mark.parametrize("optimizer,foreach", [
    ("sgd", False), ("sgd", True), ("adam", False), ("adam", True), ("adamw", True)])
def test_optimizers_foreach(optimizer, foreach, dev):
    """AdamW's default (single-tensor) path is covered by the parity test above."""
    make = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=foreach),
            "adam": lambda p: torch.optim.Adam(p, lr=1e-2, foreach=foreach),
            "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=foreach)}[optimizer]
    results = []
    for device in ("cpu", dev):
        torch.manual_seed(0)
        model = MODELS["mlp"]().to(device)
        opt = make(model.parameters())
        losses = []
        for x, y in batches("mlp", 3):
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results.append(losses)
    torch.testing.assert_close(torch.tensor(results[1]), torch.tensor(results[0]), rtol=1e-4,
                               atol=1e-5)


def test_backward_after_a_cpu_backward_ran_before_the_import():
    """PyTorch's autograd engine sizes its per-device queues on its first backward; a
    lazy backward runs on the calling thread, so importing lazy_torch after a CPU
    backward still trains (it failed an INTERNAL ASSERT in engine.cpp), with eager's
    gradients."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import torch
        w = torch.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        import lazy_torch
        dev = lazy_torch.device()
        x = torch.arange(3.0, device=dev, requires_grad=True)
        (x * x).sum().backward()
        print(x.grad.cpu().tolist(), torch.autograd.is_multithreading_enabled())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "[0.0, 2.0, 4.0] True"  # the switch is restored


def test_backward_keeps_the_callers_multithreading_setting(dev):
    x = torch.ones(2, device=dev, requires_grad=True)
    with torch.autograd.set_multithreading_enabled(False):
        (x * 3).sum().backward()
        assert not torch.autograd.is_multithreading_enabled()
    assert torch.autograd.is_multithreading_enabled()
    assert x.grad.cpu().tolist() == [3.0, 3.0]
