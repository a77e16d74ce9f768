"""Hugging Face ``transformers`` models trained under ``torch.compile(backend="lazytensor")``
against eager: losses, every parameter's gradient and the buffers (BatchNorm's running
statistics and ``num_batches_tracked``) at every step, with the forward + loss and
``opt.step`` compiled as ``benchmarks/real_models_extra.py`` runs them."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

transformers = pytest.importorskip("transformers")

import lazy_torch  # noqa: E402
import lazy_torch.dynamo  # noqa: E402, F401  (Dynamo sees lazy tensors as tensors)
import lazycore as lc  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
STEPS = 4


def _resnet():
    cfg = transformers.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
                                    depths=[1, 1], layer_type="basic", num_labels=5)
    return transformers.ResNetForImageClassification(cfg)


def _loss(model, pixels, labels):
    return model(pixel_values=pixels, labels=labels).loss


def _run(device, compiled):
    torch.manual_seed(0)
    model = _resnet().to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    loss_fn, step = _loss, opt.step
    if compiled:
        loss_fn = torch.compile(_loss, backend="lazytensor")
        step = torch.compile(opt.step, backend="lazytensor")
    g = torch.Generator().manual_seed(5)
    out, breaks = [], 0
    for i in range(STEPS):
        pixels = torch.randn(3, 3, 16, 16, generator=g).to(device)
        labels = torch.randint(0, 5, (3,), generator=g).to(device)
        opt.zero_grad()
        before = _breaks()
        loss = loss_fn(model, pixels, labels)
        if i == 0:
            breaks = _breaks() - before
        loss.backward()
        grads = {n: p.grad.detach().cpu().clone() for n, p in model.named_parameters()}
        step()
        buffers = {n: b.detach().cpu().clone() for n, b in model.named_buffers()}
        out.append((loss.item(), grads, buffers))
    return out, breaks


def _breaks():
    return sum(torch._dynamo.utils.counters["graph_break"].values())


def test_resnet_trains_under_the_backend_like_eager():
    torch._dynamo.reset()
    eager, _ = _run("cpu", False)
    lazy, breaks = _run(lazy_torch.device(), True)
    # the whole forward is one graph: BatchNorm's ``num_batches_tracked.add_(1)`` on a
    # graph input is a graph op, not a break into lazy_torch's Python fast path
    assert breaks == 0
    assert lc.metrics.counters()["dynamo_graphs::backward"] >= 1
    for step, ((le, ge, be), (ll, gl, bl)) in enumerate(zip(eager, lazy, strict=True)):
        assert ll == pytest.approx(le, rel=1e-5), step
        assert gl.keys() == ge.keys()
        for name in ge:
            torch.testing.assert_close(gl[name], ge[name], rtol=1e-4, atol=1e-5,
                                       msg=lambda m, n=name, s=step: f"{n} step {s}: {m}")
        assert bl.keys() == be.keys() and any("running_mean" in n for n in be)
        for name in be:
            torch.testing.assert_close(bl[name], be[name], rtol=1e-4, atol=1e-5,
                                       msg=lambda m, n=name, s=step: f"{n} step {s}: {m}")
    torch._dynamo.reset()
