"""Direct lowerings that replace multi-op decompositions or host transfers on the plain
lazy path (``select_backward``, ``_safe_softmax``, integer ``arange``), each against eager
CPU: values, dtypes, gradients, the cases left to the old route, errors."""

from __future__ import annotations

import pytest
import torch

import lazycore as lc
from lazy_torch.lowerings import LOWERINGS

aten = torch.ops.aten


def test_registered():
    assert aten.select_backward.default in LOWERINGS
    assert aten._safe_softmax.default in LOWERINGS


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("sizes,dim,index", [((3, 4), 0, 1), ((3, 4), 1, -1), ((2, 3, 4), -2, 0),
                                             ((5,), 0, 4)])
def test_select_backward(sizes, dim, index, dtype, dev):
    grad_shape = sizes[:dim % len(sizes)] + sizes[dim % len(sizes) + 1:]
    g = (torch.arange(1, 1 + torch.Size(grad_shape).numel()).reshape(grad_shape)).to(dtype)
    eager = aten.select_backward(g, sizes, dim, index)
    lazy = aten.select_backward(g.to(dev), sizes, dim, index)
    assert lazy.dtype == eager.dtype and torch.equal(lazy.cpu(), eager)


def test_select_backward_through_autograd_and_bad_index(dev):
    x = torch.randn(3, 4)
    xl = x.to(dev).requires_grad_(True)
    xc = x.clone().requires_grad_(True)
    (xl[:, 2] * 3).sum().backward()
    (xc[:, 2] * 3).sum().backward()
    assert torch.equal(xl.grad.cpu(), xc.grad)
    errors = []
    for g in (torch.ones(3), torch.ones(3).to(dev)):
        with pytest.raises(IndexError) as info:
            aten.select_backward(g, [3, 4], 1, 7)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("args,dtype", [((5,), None), ((2, 9), None), ((2, 9, 3), None),
                                        ((9, 2, -2), None), ((3,), torch.int8),
                                        ((1, 4), torch.uint8), ((-5, 3, 2), torch.int32),
                                        ((0,), None), ((5,), torch.float32),
                                        ((0.5, 3), None), ((4,), torch.float64)])
def test_arange(args, dtype, dev):
    eager = torch.arange(*args, dtype=dtype)
    lazy = torch.arange(*args, dtype=dtype, device=dev)
    assert lazy.dtype == eager.dtype and torch.equal(lazy.cpu(), eager)


def test_integer_arange_is_no_host_transfer_and_one_program_for_every_start(dev):
    lc.sync()
    before = lc.metrics.counters()
    for start in (3, 4):
        (torch.arange(start, start + 2, device=dev) * 2).cpu()
    after = lc.metrics.counters()
    assert after["host_transfers"] - before["host_transfers"] == 2  # the two reads only
    assert after.get("compiles", 0) + after.get("interpreted_executions", 0) >= 1
    for args in ((2, 1), (0, 5, 0)):  # eager's errors
        errors = []
        for device in ("cpu", dev):
            with pytest.raises(RuntimeError) as info:
                torch.arange(*args, device=device)
            errors.append(str(info.value))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, None])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_safe_softmax_masked_rows(dim, dtype, dev):
    x = torch.randn(3, 4, 5)
    x[1, 2, :] = float("-inf")  # a fully masked row along the last dim
    x[:, 0, 1] = float("-inf")
    x[0, 1, 3] = float("nan")
    eager = aten._safe_softmax(x, dim, dtype)
    lazy = aten._safe_softmax(x.to(dev), dim, dtype)
    assert lazy.dtype == eager.dtype
    torch.testing.assert_close(lazy.cpu(), eager, equal_nan=True)


def test_safe_softmax_other_dtype_and_scalar_take_the_decomposition(dev):
    for x, dtype in ((torch.randn(2, 3), torch.float64), (torch.tensor(2.0), None),
                     (torch.randn(2, 0), None)):
        eager = aten._safe_softmax(x, -1, dtype)
        lazy = aten._safe_softmax(x.to(dev), -1, dtype)
        assert lazy.dtype == eager.dtype and lazy.shape == eager.shape
        torch.testing.assert_close(lazy.cpu(), eager)


def test_sdpa_with_masked_rows_forward_backward(dev):
    q, k, v = (torch.randn(2, 2, 4, 8) for _ in range(3))
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    mask[0] = False  # a query that sees nothing: 0 from _safe_softmax, not NaN
    results = []
    for device in ("cpu", dev):
        leaves = [t.to(device).detach().requires_grad_(True) for t in (q, k, v)]
        out = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=mask.to(device))
        out.sum().backward()
        results.append([out.detach().cpu()] + [t.grad.cpu() for t in leaves])
    for lazy, eager in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(lazy, eager, rtol=1e-5, atol=1e-5, equal_nan=True)
