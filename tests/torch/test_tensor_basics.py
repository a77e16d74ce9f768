"""The device, factories, host round trips, observation (item/print/len/iter),
metrics and debug output."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazy_torch
import lazycore as lc


def test_device_and_factories(dev):
    assert dev == torch.device("lazy", 0) and str(dev) == "lazy:0"
    z = torch.zeros(2, 3, device=dev)
    assert isinstance(z, torch.Tensor) and isinstance(z, lazy_torch.LazyTensor)
    assert z.device == dev and z.shape == (2, 3) and z.dtype == torch.float32
    assert torch.ones(2, dtype=torch.int64, device=dev).tolist() == [1, 1]
    assert torch.full((2,), 2.5, device=dev).tolist() == [2.5, 2.5]
    assert torch.arange(5, device=dev).tolist() == list(range(5))
    assert torch.arange(0, 1, 0.25, device=dev).tolist() == [0.0, 0.25, 0.5, 0.75]
    torch.testing.assert_close(torch.linspace(0, 1, 5, device=dev).cpu(), torch.linspace(0, 1, 5))
    torch.testing.assert_close(torch.eye(3, device=dev).cpu(), torch.eye(3))
    assert torch.empty(3, device=dev).shape == (3,)
    assert torch.zeros_like(z).device == dev and torch.ones_like(z).sum().item() == 6
    assert z.new_full((2,), 3.0).tolist() == [3.0, 3.0]
    assert torch.tensor([1, 2, 3], device=dev).tolist() == [1, 2, 3]


def test_shape_dtype_device_without_sync(dev, counters):
    x = torch.randn(4, 5).to(dev)
    before = counters()["syncs"]
    y = (x @ x.T).relu().sum(0)
    assert y.shape == (4,) and y.dtype == torch.float32 and y.device == dev
    assert len(y) == 4 and y.dim() == 1 and y.numel() == 4
    assert counters()["syncs"] == before


def test_host_round_trips(dev):
    a = torch.randn(3, 4)
    x = a.to(dev)
    torch.testing.assert_close(x.cpu(), a)
    torch.testing.assert_close(x.to("cpu"), a)
    np.testing.assert_allclose(x.cpu().numpy(), a.numpy())
    np.testing.assert_allclose(x.numpy(), a.numpy())
    assert x.tolist() == a.tolist()
    assert x[1, 2].item() == a[1, 2].item()
    assert bool(x[0, 0] == a[0, 0])
    assert float(x.sum()) == pytest.approx(float(a.sum()), rel=1e-5)
    assert int(torch.tensor(7).to(dev)) == 7
    for bf in (torch.bfloat16, torch.float16, torch.float64, torch.int8, torch.bool):
        b = a.to(bf)
        assert b.to(dev).cpu().dtype == bf
        assert torch.equal(b.to(dev).cpu(), b)


def test_print_and_iteration(dev):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).to(dev)
    assert repr(x) == "tensor([[1., 2.],\n        [3., 4.]], device='lazy:0')"
    assert "grad_fn=<MulBackward0>" in repr(x.requires_grad_() * 2)
    rows = [r.tolist() for r in x.detach()]
    assert rows == [[1.0, 2.0], [3.0, 4.0]]
    assert str(torch.arange(3, device=dev)) == "tensor([0, 1, 2], device='lazy:0')"


def test_indexing_matches_eager(dev):
    a = torch.arange(60.0).reshape(3, 4, 5)
    x = a.to(dev)
    keys = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (slice(0, 3, 2), None, 1),
            torch.tensor([2, 0]), (torch.tensor([0, 2]), torch.tensor([1, 3])), a[:, 0, 0] > 10,
            (slice(None), [0, 3], slice(1, 4))]
    for k in keys:
        lk = tuple(i.to(dev) if isinstance(i, torch.Tensor) else i for i in k) \
            if isinstance(k, tuple) else (k.to(dev) if isinstance(k, torch.Tensor) else k)
        torch.testing.assert_close(x[lk].cpu(), a[k])


def test_sync_metrics_and_cache(dev, counters):
    x = torch.randn(8, 8).to(dev)
    w = torch.randn(8, 8).to(dev)
    for _ in range(3):
        x = torch.tanh(x @ w)
        lazy_torch.sync()
    c = counters()
    assert c["cache_hits"] >= 1
    assert lazy_torch.metrics is lc.metrics
    assert "counters" in lazy_torch.metrics.report()


def test_debug_text(dev):
    x = torch.randn(4).to(dev)
    y = torch.sin(x) * 2
    ir = lazy_torch.debug.ir_text(y)
    assert "sin" in ir and "mul" in ir
    assert "sine" in lazy_torch.debug.stablehlo_text(y)


def test_fallback_is_counted_and_correct(dev, counters):
    a = torch.randn(5, 3)
    x = a.to(dev)
    before = counters().get("fallback::aten::kthvalue.default", 0)
    got = torch.kthvalue(x, 2, dim=1)  # its index among equal values is eager's algorithm's
    want = torch.kthvalue(a, 2, dim=1)
    torch.testing.assert_close(got.values.cpu(), want.values)
    assert torch.equal(got.indices.cpu(), want.indices)
    assert counters()["fallback::aten::kthvalue.default"] == before + 1
    assert got.values.device == dev


def test_module_to_and_parameters(dev):
    m = torch.nn.Linear(3, 2)
    m.to(dev)
    assert isinstance(m.weight, torch.nn.Parameter) and m.weight.device == dev
    assert all(p.device == dev for p in m.parameters())
    with torch.no_grad():
        m.weight.fill_(1.0)
    assert m.weight.sum().item() == 6.0
    sd = {k: v.cpu() for k, v in m.state_dict().items()}
    assert sd["weight"].device.type == "cpu"


def test_no_grad_and_requires_grad(dev):
    w = torch.ones(3, device=dev, requires_grad=True)
    with torch.no_grad():
        y = w * 2
    assert not y.requires_grad
    z = (w * w).sum()
    z.backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_save_load_and_deepcopy(dev):
    import copy
    import io

    m = torch.nn.Linear(3, 2).to(dev)
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, weights_only=False)
    assert sd["weight"].device == dev
    torch.testing.assert_close(sd["weight"].cpu(), m.weight.cpu())
    m2 = copy.deepcopy(m)
    with torch.no_grad():
        m2.weight.add_(1)
    torch.testing.assert_close(m2.weight.cpu(), m.weight.cpu() + 1)
