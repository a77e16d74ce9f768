"""``native_layer_norm_backward`` and ``index_copy``/``index_copy_`` lowered onto the core's
composites (``layer_norm_backward``, ``index_copy``) instead of PyTorch's decompositions:
values, dtypes, gradients and errors against eager CPU, and no decomposition dispatched."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lazy_torch._tensor import LazyTensor

aten = torch.ops.aten
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12),
       torch.bfloat16: dict(rtol=2e-2, atol=3e-2), torch.float16: dict(rtol=2e-3, atol=2e-3)}
SHAPES = [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((5,), (5,)), ((0, 3), (3,)), ((2, 3, 4), (4,))]


def _layer_norm_grads(device, x, g, norm, weight, bias, needs):
    """Forward + backward of ``F.layer_norm``; ``needs`` says which of x/weight/bias
    require grad (autograd's ``output_mask``)."""
    leaves = [None if t is None else t.detach().clone().to(device).requires_grad_(n)
              for t, n in zip((x, weight, bias), needs, strict=True)]
    y = F.layer_norm(leaves[0], norm, *leaves[1:])
    y.backward(g.to(device))
    return [y.detach().cpu()] + [None if t is None or t.grad is None else t.grad.cpu()
                                 for t in leaves]


def _check_layer_norm(shape, norm, dtype, variants, dev, counters):
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(shape, generator=gen) * 3 + 1).to(dtype)
    g = torch.randn(shape, generator=gen).to(dtype)
    w, b = torch.randn(norm, generator=gen).to(dtype), torch.randn(norm, generator=gen).to(dtype)
    before = counters().get("fallbacks", 0)
    for weight, bias, needs in variants(w, b):
        want = _layer_norm_grads("cpu", x, g, norm, weight, bias, needs)
        got = _layer_norm_grads(dev, x, g, norm, weight, bias, needs)
        for a, c in zip(want, got, strict=True):
            assert (a is None) == (c is None)
            if a is not None:
                assert c.dtype == a.dtype and c.shape == a.shape
                torch.testing.assert_close(c, a, **TOL[dtype])
    assert counters().get("fallbacks", 0) == before


@pytest.mark.parametrize("shape,norm,dtype", [s + (torch.float32,) for s in SHAPES] + [
    ((2, 3, 4), (3, 4), torch.float64), ((4, 6), (6,), torch.bfloat16),
    ((2, 3, 4), (4,), torch.float16)], ids=str)
def test_layer_norm_forward_backward(shape, norm, dtype, dev, counters):
    _check_layer_norm(shape, norm, dtype, lambda w, b: [(w, b, (True, True, True))], dev,
                      counters)


def test_layer_norm_affine_and_output_masks(dev, counters):
    """With/without weight and bias, and inputs not requiring grad: each output mask."""
    _check_layer_norm((4, 6), (6,), torch.float32, lambda w, b: [
        (w, None, (True, True, False)), (None, b, (True, False, True)),
        (None, None, (True, False, False)), (w, b, (False, True, True)),
        (w, b, (True, False, False))], dev, counters)


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, False],
                                  [False, False, True]], ids=str)
def test_layer_norm_backward_called_directly(mask, dev):
    """Arbitrary (not normalizing) mean and rstd: the formula itself, each output mask."""
    gen = torch.Generator().manual_seed(1)
    g, x = torch.randn(3, 2, 5, generator=gen), torch.randn(3, 2, 5, generator=gen)
    mean, rstd = torch.randn(3, 1, 1, generator=gen), torch.rand(3, 1, 1, generator=gen) + 0.5
    w, b = torch.randn(2, 5, generator=gen), torch.randn(2, 5, generator=gen)
    want = aten.native_layer_norm_backward(g, x, [2, 5], mean, rstd, w, b, mask)
    got = aten.native_layer_norm_backward(*(t.to(dev) for t in (g, x)), [2, 5],
                                          *(t.to(dev) for t in (mean, rstd, w, b)), mask)
    for a, c, m in zip(want, got, mask, strict=True):
        assert (c is not None) == m
        if m:
            assert isinstance(c, LazyTensor)
            torch.testing.assert_close(c.cpu(), a, **TOL[torch.float32])


def test_layer_norm_backward_dispatches_no_decomposition(dev, dispatch_spy):
    args = [torch.randn(4, 6).to(dev), torch.randn(4, 6).to(dev), [6], torch.randn(4, 1).to(dev),
            torch.rand(4, 1).to(dev), torch.randn(6).to(dev), torch.randn(6).to(dev)]
    seen = dispatch_spy()
    aten.native_layer_norm_backward(*args, [True, True, True])
    assert seen == [aten.native_layer_norm_backward.default]


def test_layer_norm_mixed_dtypes_match_eager(dev):
    """A bfloat16 input with float32 weight and bias (the decomposition's case): the
    weight's gradient stays float32, as eager's."""
    gen = torch.Generator().manual_seed(2)
    x, g = torch.randn(3, 4, generator=gen).bfloat16(), torch.randn(3, 4, generator=gen).bfloat16()
    w, b = torch.randn(4, generator=gen), torch.randn(4, generator=gen)
    want = _layer_norm_grads("cpu", x, g, (4,), w, b, (True, True, True))
    got = _layer_norm_grads(dev, x, g, (4,), w, b, (True, True, True))
    for a, c in zip(want, got, strict=True):
        assert c.dtype == a.dtype
        torch.testing.assert_close(c.float(), a.float(), rtol=2e-2, atol=3e-2)


# -- index_copy -------------------------------------------------------------------------------

def _index_cases():
    i = torch.tensor
    return [
        (torch.zeros(4, 3), 0, i([2, 0]), torch.arange(6.0).reshape(2, 3)),
        (torch.zeros(2, 5), 1, i([4, 1, 0]), torch.arange(6.0).reshape(2, 3)),
        (torch.zeros(1, 2, 5, 2, dtype=torch.bfloat16), 2, i([3]), torch.ones(1, 2, 1, 2).bfloat16()),
        (torch.zeros(1, 2, 5, 2), -2, i(4), torch.ones(1, 2, 1, 2)),  # a 0-d index
        (torch.zeros(5, dtype=torch.int64), 0, i([4, 1]), i([7, -8])),
        (torch.zeros(3), 0, i(2), i(5.0)),  # a scalar source
        (torch.zeros(()), 0, i([0]), torch.ones(1)),
        (torch.zeros(4, 3), 0, i([], dtype=torch.int64), torch.ones(0, 3)),
    ]


@pytest.mark.parametrize("case", range(len(_index_cases())))
def test_index_copy_matches_eager(case, dev, counters):
    x, dim, index, src = _index_cases()[case]
    want = torch.index_copy(x, dim, index, src)
    before = counters().get("fallbacks", 0)
    got = torch.index_copy(x.to(dev), dim, index.to(dev), src.to(dev))
    inplace = x.to(dev)
    inplace.index_copy_(dim, index.to(dev), src.to(dev))
    for t in (got, inplace):
        assert t.dtype == want.dtype and t.shape == want.shape
        assert torch.equal(t.cpu(), want)
    assert counters().get("fallbacks", 0) == before


BAD = {  # (x, dim, index, source): eager's error type
    "index-2d": (torch.zeros(4, 3), 0, torch.tensor([[1]]), torch.ones(1, 3)),
    "index-int32": (torch.zeros(4, 3), 0, torch.tensor([1], dtype=torch.int32), torch.ones(1, 3)),
    "index-float": (torch.zeros(4, 3), 0, torch.tensor([1.0]), torch.ones(1, 3)),
    "dtypes": (torch.zeros(4, 3), 0, torch.tensor([1]), torch.ones(1, 3, dtype=torch.float64)),
    "ndim": (torch.zeros(4, 3), 0, torch.tensor([1]), torch.ones(1, 3, 1)),
    "slices": (torch.zeros(4, 3), 0, torch.tensor([1]), torch.ones(1, 2)),
    "scalar-source": (torch.zeros(4, 3), 0, torch.tensor([1]), torch.ones(())),
    "count": (torch.zeros(4, 3), 0, torch.tensor([1, 2]), torch.ones(3, 3)),
    "count-scalar": (torch.zeros(3), 0, torch.tensor([0, 1]), torch.tensor(5.0)),
    "dim": (torch.zeros(4, 3), 2, torch.tensor([1]), torch.ones(1, 3)),
    "out-of-range": (torch.zeros(4, 3), 1, torch.tensor([3]), torch.ones(4, 1)),
    "negative": (torch.zeros(4, 3), 0, torch.tensor([-1]), torch.ones(1, 3)),
}


SCALAR_ADDS = {  # index_add shares index_copy's scatter: eager's rules for 0-d operands
    "scalar-self-vector-source": (torch.zeros(()), 0, torch.zeros(3, dtype=torch.int64), torch.ones(3)),
    "scalar-self-empty-source": (torch.zeros(()), 0, torch.zeros(0, dtype=torch.int64), torch.ones(0)),
    "scalar-self-three-rows": (torch.zeros(()), 0, torch.tensor([0, 0, 0]), torch.tensor(1.0)),
    "vector-self-scalar-source": (torch.zeros(5), 0, torch.tensor(4), torch.tensor(1.0)),
    "scalar-source-dim-0": (torch.zeros(4, 3), 0, torch.tensor([0, 3, 0]), torch.tensor(1.0)),
    "scalar-source-dim-1": (torch.zeros(4, 3), 1, torch.tensor([0, 2, 0]), torch.tensor(1.0)),
}


ERRORS = ([(torch.index_copy, name, case) for name, case in BAD.items()]
          + [(torch.index_add, name, case) for name, case in SCALAR_ADDS.items()])


@pytest.mark.parametrize("fn,name,case", ERRORS, ids=[f"{f.__name__}-{n}" for f, n, _ in ERRORS])
def test_index_copy_and_add_errors_like_eager(fn, name, case, dev):
    x, dim, index, src = case
    with pytest.raises(Exception) as eager:
        fn(x, dim, index, src)
    with pytest.raises(type(eager.value)):
        fn(x.to(dev), dim, index.to(dev), src.to(dev)).cpu()


def test_index_add_into_a_scalar(dev):
    x, index, src = torch.zeros(()), torch.tensor([0]), torch.tensor(2.0)
    got = torch.index_add(x.to(dev), 0, index.to(dev), src.to(dev), alpha=3)
    assert got.cpu().item() == torch.index_add(x, 0, index, src, alpha=3).item() == 6.0


def test_index_copy_gradients(dev):
    gen = torch.Generator().manual_seed(3)
    x, src = torch.randn(5, 3, generator=gen), torch.randn(5, 2, generator=gen)
    index, g = torch.tensor([2, 0]), torch.randn(5, 3, generator=gen)

    def grads(device):
        a, s = (t.detach().clone().to(device).requires_grad_() for t in (x, src))
        torch.index_copy(a * 2, 1, index.to(device), s).backward(g.to(device))
        return a.grad.cpu(), s.grad.cpu()

    for want, got in zip(grads("cpu"), grads(dev), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_index_copy_dispatches_no_decomposition(dev, dispatch_spy):
    x, index, src = torch.zeros(4, 3).to(dev), torch.tensor([1]).to(dev), torch.ones(1, 3).to(dev)
    seen = dispatch_spy()
    x.index_copy_(0, index, src)
    assert seen == [aten.index_copy_.default]
