"""Direct lowerings of ``_log_softmax_backward_data``, ``_softmax_backward_data`` and
``threshold_backward`` (relu's backward) against eager CPU: forward + backward through
autograd, the ATen ops called directly, NaN/inf, dtypes, and the cases they leave to
PyTorch's decompositions."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lazy_torch._tensor import LazyTensor
from lazy_torch.lowerings import LOWERINGS

aten = torch.ops.aten

SHAPES_DIMS = [((5,), 0), ((5,), -1), ((4, 7), 1), ((4, 7), 0), ((2, 3, 5), 1),
               ((2, 3, 5), -1), ((3, 1, 4), 1), ((), 0), ((0, 3), 1)]
# softmax over an empty dim: the forward lowering does not cover it (reduce_max), the
# backward ones do
EMPTY_DIM = [((2, 0), 1), ((2, 0), 0)]
DTYPES = [torch.float32, torch.float64]


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)


def _forward_backward(fn, x, g, device):
    xd = x.detach().clone().to(device).requires_grad_(True)
    out = fn(xd)
    out.backward(g.to(device))
    return out.detach().cpu(), xd.grad.cpu()


def _both(fn, x, g, dev):
    return _forward_backward(fn, x, g, "cpu"), _forward_backward(fn, x, g, dev)


def test_registered():
    for op in (aten._log_softmax_backward_data.default, aten._softmax_backward_data.default,
               aten.threshold_backward.default):
        assert op in LOWERINGS


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS, ids=str)
@pytest.mark.parametrize("kind", ["log_softmax", "softmax"])
def test_softmax_forward_backward(kind, shape, dim, dtype, dev):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g, dtype=dtype) * 3
    grad = torch.randn(shape, generator=g, dtype=dtype)
    fn = getattr(F, kind)
    (want, want_g), (got, got_g) = _both(lambda t: fn(t, dim), x, grad, dev)
    assert got.dtype == want.dtype and got_g.dtype == want_g.dtype == dtype
    assert got_g.shape == want_g.shape
    torch.testing.assert_close(got, want, **_tol(dtype))
    torch.testing.assert_close(got_g, want_g, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS + EMPTY_DIM, ids=str)
@pytest.mark.parametrize("op", [aten._log_softmax_backward_data.default,
                                aten._softmax_backward_data.default], ids=str)
def test_softmax_backward_called_directly(op, shape, dim, dtype, dev):
    """Arbitrary (not softmax-normalized) outputs: the formula itself, not just autograd."""
    g = torch.Generator().manual_seed(1)
    grad = torch.randn(shape, generator=g, dtype=dtype)
    out = torch.randn(shape, generator=g, dtype=dtype)
    want = op(grad, out, dim, dtype)
    got = op(grad.to(dev), out.to(dev), dim, dtype)
    assert isinstance(got, LazyTensor) and got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, **_tol(dtype))


@pytest.mark.parametrize("op", [aten._log_softmax_backward_data.default,
                                aten._softmax_backward_data.default], ids=str)
def test_softmax_backward_nonfinite(op, dev):
    grad = torch.tensor([[1.0, float("nan"), 2.0], [0.5, -1.0, float("inf")], [1.0, 2.0, 3.0]])
    out = torch.tensor([[-1.0, -2.0, -0.5], [float("-inf"), -1.0, -3.0], [0.1, 0.2, 0.7]])
    want = op(grad, out, 1, torch.float32)
    got = op(grad.to(dev), out.to(dev), 1, torch.float32).cpu()
    torch.testing.assert_close(got, want, equal_nan=True)


@pytest.mark.parametrize("op", [aten._log_softmax_backward_data.default,
                                aten._softmax_backward_data.default], ids=str)
def test_softmax_backward_bad_dim_raises_like_eager(op, dev):
    grad, out = torch.randn(2, 3), torch.randn(2, 3)
    with pytest.raises(Exception) as eager:
        op(grad, out, 2, torch.float32)
    with pytest.raises(type(eager.value)):
        op(grad.to(dev), out.to(dev), 2, torch.float32)


@pytest.mark.parametrize("kind", ["log_softmax", "softmax"])
def test_softmax_bfloat16(kind, dev):
    """Half types compute in float32 and round once (the decompositions' dtype handling)."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 9, generator=g).bfloat16()
    grad = torch.randn(4, 9, generator=g).bfloat16()
    fn = getattr(F, kind)
    (want, want_g), (got, got_g) = _both(lambda t: fn(t, 1), x, grad, dev)
    assert got_g.dtype == want_g.dtype == torch.bfloat16
    torch.testing.assert_close(got_g.float(), want_g.float(), rtol=2e-2, atol=2e-2)


def test_softmax_backward_mixed_dtypes_take_the_decomposition(dev):
    """grad float32 for a half input (``half_to_float``): not covered, the decomposition
    runs (its result is in ``input_dtype``; eager's CPU kernel keeps float32)."""
    grad, out = torch.randn(3, 4), torch.randn(3, 4).log_softmax(1)
    want = aten._log_softmax_backward_data(grad, out, 1, torch.bfloat16)
    got = aten._log_softmax_backward_data(grad.to(dev), out.to(dev), 1, torch.bfloat16)
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-2, atol=2e-2)


def test_no_decomposition_ops_dispatched(dev, dispatch_spy):
    grad = torch.randn(4, 5).to(dev)
    out = torch.randn(4, 5).log_softmax(1).to(dev)
    x = torch.randn(4, 5).to(dev)
    seen = dispatch_spy()
    aten._log_softmax_backward_data(grad, out, 1, torch.float32)
    aten._softmax_backward_data(grad, out, 1, torch.float32)
    aten.threshold_backward(grad, x, 0.0)
    assert seen == [aten._log_softmax_backward_data.default, aten._softmax_backward_data.default,
                    aten.threshold_backward.default]


# -- threshold_backward ---------------------------------------------------------------------------

SPECIAL = torch.tensor([0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e-30, -1e-30,
                        0.5, 0.49999997, 0.5000001, -1.0, 2.0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threshold", [0, 0.0, 0.5, -1.0, float("inf"), float("nan")])
def test_threshold_backward_called_directly(threshold, dtype, dev):
    x = SPECIAL.to(dtype)
    grad = torch.arange(1.0, 1.0 + len(SPECIAL), dtype=dtype)
    grad[3] = float("nan")  # a NaN gradient where x passes / is cut
    want = aten.threshold_backward(grad, x, threshold)
    got = aten.threshold_backward(grad.to(dev), x.to(dev), threshold)
    assert isinstance(got, LazyTensor) and got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (), (0, 2)], ids=str)
def test_relu_forward_backward(shape, dtype, dev):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(shape, generator=g, dtype=dtype)
    if x.numel() > 2:
        x.view(-1)[0] = 0.0  # relu'(0) = 0 in eager
        x.view(-1)[1] = float("nan")  # NaN <= 0 is False: the grad passes
    grad = torch.randn(shape, generator=g, dtype=dtype)
    (want, want_g), (got, got_g) = _both(torch.relu, x, grad, dev)
    torch.testing.assert_close(got, want, equal_nan=True)
    torch.testing.assert_close(got_g, want_g, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("threshold,value", [(0.5, 0.0), (-0.25, 3.0), (0.0, -1.0)])
def test_threshold_forward_backward(threshold, value, dev):
    g = torch.Generator().manual_seed(4)
    x = torch.cat([torch.randn(20, generator=g), SPECIAL])
    grad = torch.randn(x.shape, generator=g)
    (want, want_g), (got, got_g) = _both(lambda t: F.threshold(t, threshold, value), x, grad,
                                         dev)
    torch.testing.assert_close(got, want, equal_nan=True)
    torch.testing.assert_close(got_g, want_g, equal_nan=True, rtol=0, atol=0)


def test_threshold_backward_uncovered_cases_match_eager(dev):
    """Mixed dtypes and broadcasting go to the decomposition: eager's results still."""
    grad, x = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 4)
    want = aten.threshold_backward(grad, x, 0.1)
    got = aten.threshold_backward(grad.to(dev), x.to(dev), 0.1)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want)
    grad, x = torch.randn(3, 4), torch.randn(4)
    want = aten.threshold_backward(grad, x, 0.0)
    got = aten.threshold_backward(grad.to(dev), x.to(dev), 0.0)
    assert got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want)
