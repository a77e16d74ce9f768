"""``conj()`` / ``_neg_view`` views and ``sgn``'s gradient as eager's: a conj view reads
the storage conjugated, sees later writes to its base, and writes through it reach the
base conjugated (before this, a lazy ``x.conj()`` read ``x`` unconjugated)."""

from __future__ import annotations

import pytest
import torch

C = torch.tensor([[1 + 1j, 2 - 1j, -0.5j], [3 + 0j, -1 - 2j, 4 + 4j]], dtype=torch.complex64)


def run_both(fn, dev):
    cpu = fn(lambda t: t.clone())
    lazy = fn(lambda t: t.clone().to(dev))
    for c, z in zip(cpu, lazy, strict=True):
        assert z.device.type == "lazy" and z.dtype == c.dtype and z.shape == c.shape
        torch.testing.assert_close(z.cpu().resolve_conj().resolve_neg(),
                                   c.resolve_conj().resolve_neg().clone(), rtol=0, atol=0)


def _reads(make):
    x = make(C)
    z = x.conj()
    return (z.clone(), (z * 2).clone(), (x * z).clone(), z.conj().clone(), z.t().clone(),
            z[1].clone(), torch.view_as_real(z.resolve_conj()).clone(), z.abs().clone(),
            torch._neg_view(x).clone(), (torch._neg_view(x) + 1).clone())


def _base_writes_seen(make):
    x = make(C)
    z, row = x.conj(), x.conj()[0]
    x.mul_(2)
    x[1, 1] = 7 + 1j
    return z.clone(), row.clone()


def _writes_through(make):
    x = make(C)
    z = x.conj()
    z[0, 0] = 3 + 4j        # x[0, 0] = 3 - 4j
    z[1].add_(1j)           # x[1] -= 1j
    z.t()[2, 0] = 9j        # through a view of the conj view
    n = torch._neg_view(x)
    n[0, 1] = 5             # x[0, 1] = -5
    return x.clone(), z.clone(), n.clone()


@pytest.mark.parametrize("prog", [_reads, _base_writes_seen, _writes_through],
                         ids=lambda f: f.__name__)
def test_conj_neg_views_like_eager(prog, dev):
    run_both(prog, dev)


def test_conj_view_gradient(dev):
    grads = []
    for device in ("cpu", dev):
        x = C.clone().to(device).requires_grad_()
        loss = (x * x.conj()).real.sum() + torch.view_as_real(x.conj().resolve_conj())[
            ..., 1].sum()
        loss.backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64,
                                   torch.complex128], ids=str)
def test_sgn_backward_like_eager(dtype, dev):
    results = []
    for device in ("cpu", dev):
        x = torch.tensor([1.5, -2.0, 0.0, 3.0], dtype=torch.float64)
        if dtype.is_complex:
            x = x + 1j * torch.tensor([0.5, 0.0, 0.0, -1.0], dtype=torch.float64)
        x = x.to(dtype).to(device).requires_grad_()
        y = torch.sgn(x)
        weights = torch.tensor([1.0, -2.0], device=device, dtype=x.real.dtype)
        loss = (torch.view_as_real(y) * weights).sum() if dtype.is_complex else (y * 3).sum()
        loss.backward()
        results.append((y.detach().cpu(), x.grad.cpu()))
    for lazy, eager in zip(results[1], results[0], strict=True):
        assert lazy.dtype == eager.dtype
        torch.testing.assert_close(lazy, eager)
