"""Views in another dtype share storage as eager's: ``view(dtype)`` across item sizes
(the last dim rescaled), ``view_as_real``/``view_as_complex``, ``.real``/``.imag`` --
values, writes both ways, eager's errors, gradients."""

from __future__ import annotations

import pytest
import torch


def run_both(fn, dev):
    cpu = fn(lambda t: t.clone())
    lazy = fn(lambda t: t.clone().to(dev))
    cpu, lazy = (cpu, lazy) if isinstance(cpu, tuple) else ((cpu,), (lazy,))
    for c, z in zip(cpu, lazy, strict=True):
        assert z.device.type == "lazy" and z.dtype == c.dtype and z.shape == c.shape
        assert z.stride() == c.stride() and z.storage_offset() == c.storage_offset()
        torch.testing.assert_close(z.cpu(), c, rtol=0, atol=0, equal_nan=True)


F32 = torch.tensor([[1.5, -2.0, 3.25, 1e-3], [0.0, -0.0, 7.0, 1e30], [2.0, 4.0, 8.0, 16.0]])
I8 = torch.tensor([[1, -2, 3, 4, 5, -6, 7, 8], [0, 1, 0, 1, 127, -128, 9, 0]], dtype=torch.int8)
C64 = torch.tensor([1 + 2j, -3 + 0.5j, 0 - 1j], dtype=torch.complex64)

VIEWS = [(F32, torch.int8), (F32, torch.int16), (F32, torch.float64), (F32, torch.uint8),
         (F32, torch.complex64), (F32, torch.bfloat16), (I8, torch.float32),
         (I8, torch.int64), (I8, torch.complex64), (I8, torch.float16), (C64, torch.float32),
         (C64, torch.int8), (C64, torch.float64), (I8 % 2 == 0, torch.int8)]


@pytest.mark.parametrize(("src", "dtype"), VIEWS, ids=lambda v: str(v) if not
                         isinstance(v, torch.Tensor) else f"{v.dtype}{list(v.shape)}")
def test_view_dtype_values_like_eager(src, dtype, dev):
    def prog(make):
        x = make(src)
        k = max(2, dtype.itemsize // src.element_size())  # a whole item further in
        return x.view(dtype), x[1:].view(dtype), x[..., k:].view(dtype)
    run_both(prog, dev)


def test_writes_reach_both_ways(dev):
    def prog(make):
        x = make(F32)
        y = x.view(torch.int8)          # 4 bytes per float
        y[0, 1] = 0                     # the low byte of x[0, 0]
        y[1, 4:8].fill_(0)
        x[2].mul_(-1)                   # seen by y
        w = x[:, :2].view(torch.float64)  # two floats per double
        w.add_(1.0)
        z = y[2]                        # a view of the int8 view
        return x, y, w, z
    run_both(prog, dev)


def test_complex_real_imag_views(dev):
    def prog(make):
        x = make(C64)
        r = torch.view_as_real(x)
        re, im = x.real, x.imag
        im[0] = 5.0                     # writes into x
        r[2, 0] = -4.0
        re.mul_(2)
        c = torch.view_as_complex(make(torch.arange(8.0).reshape(4, 2)))
        c[1] = 7 - 7j
        return x, r, re, im, c, torch.view_as_real(c)
    run_both(prog, dev)


def test_gradients_through_reinterpreting_views(dev):
    grads = []
    for device in ("cpu", dev):
        x = C64.clone().to(device).requires_grad_()
        r = torch.view_as_real(x)
        loss = (r * torch.tensor([1.0, 3.0], device=device)).sum() + (x.real ** 2).sum() \
            + x.imag.sum()
        loss.backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


ERRORS = [
    (lambda d: torch.zeros(2, 3, dtype=torch.int8, device=d).view(torch.float32), RuntimeError),
    (lambda d: torch.zeros(3, 4, device=d).t().view(torch.int8), RuntimeError),
    (lambda d: torch.zeros(4, 4, dtype=torch.int8, device=d)[:, 1:].view(torch.int16),
     RuntimeError),
    (lambda d: torch.tensor(1.0, device=d).view(torch.int8), RuntimeError),
    (lambda d: torch.view_as_complex(torch.zeros(3, 3, device=d)), RuntimeError),
    (lambda d: torch.view_as_real(torch.zeros(3, device=d)), RuntimeError),
]


@pytest.mark.parametrize(("make", "exc"), ERRORS)
def test_errors_like_eager(make, exc, dev):
    messages = []
    for device in ("cpu", dev):
        with pytest.raises(exc) as e:
            make(device)
        messages.append(str(e.value))
    assert messages[1] == messages[0]


def test_zero_dim_same_width(dev):
    def prog(make):
        x = make(torch.tensor(1.5))
        y = x.view(torch.int32)
        y.add_(1)
        return x, y
    run_both(prog, dev)


def test_view_over_a_partial_item_tail_raises_clearly(dev):
    x = torch.arange(5.0, device=dev)
    with pytest.raises(NotImplementedError, match="not a whole number"):
        torch.view_as_complex(x[:4].view(2, 2))
    assert torch.view_as_complex(torch.arange(5.0)[:4].view(2, 2)).shape == (2,)  # eager's
