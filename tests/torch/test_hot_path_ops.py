"""Ops that synced to the CPU on hot paths of others' programs, now traced: ``cdist``,
``torch.multinomial`` (``Categorical.sample``, ``generate()``'s sampling; drawn from
lazy_torch's generator, so compared with eager by distribution, not by stream) and
``linalg.matrix_exp`` (the orthogonal parametrization), against eager: values, dtypes,
gradients, errors (argument errors at the call, data errors at the next barrier), and
no fallback."""

from __future__ import annotations

import pytest
import torch
from torch.nn.utils import parametrizations

import lazycore as lc

WEIGHTS = torch.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 2.0]])


def _fallbacks():
    return {k for k, v in lc.metrics.counters().items() if k.startswith("fallback::") and v}


def test_multinomial_with_replacement_follows_the_weights(dev):
    lc.metrics.reset()
    torch.manual_seed(0)
    draws = torch.multinomial(WEIGHTS.to(dev), 20000, replacement=True)
    assert draws.dtype == torch.int64 and draws.shape == (2, 20000)
    share = torch.stack([torch.bincount(r, minlength=4) for r in draws.cpu()]).float() / 20000
    torch.testing.assert_close(share, WEIGHTS / WEIGHTS.sum(1, keepdim=True), rtol=0, atol=0.015)
    assert not _fallbacks()


def test_multinomial_without_replacement_draws_distinct_positive_weights_first(dev):
    torch.manual_seed(0)
    rows = WEIGHTS.repeat(1500, 1)  # each row drawn on its own
    picks = torch.multinomial(rows.to(dev), 3).cpu().reshape(1500, 2, 3)
    assert all(len(set(row.tolist())) == 3 for row in picks.reshape(-1, 3))
    assert not (picks[:, 0] == 1).any()  # row 0's zero weight is never among its 3 picks
    first = torch.bincount(picks[:, 0, 0], minlength=4).float() / 1500
    torch.testing.assert_close(first, WEIGHTS[0], rtol=0, atol=0.04)
    single = torch.multinomial(torch.tensor([[1.0, 0.0]], device=dev), 2).cpu()
    assert single.tolist() == [[0, 1]]  # eager: the zero weight once the others are spent


def test_categorical_sample_shape_and_support(dev):
    torch.manual_seed(0)
    sample = torch.distributions.Categorical(probs=WEIGHTS.to(dev)).sample((7,))
    eager = torch.distributions.Categorical(probs=WEIGHTS).sample((7,))
    assert sample.shape == eager.shape and sample.dtype == eager.dtype
    assert not (sample.cpu()[:, 0] == 1).any() and not (sample.cpu()[:, 1] == 2).any()


@pytest.mark.parametrize("weights,samples,message", [
    (torch.tensor([-1.0, 2.0]), 1, "element < 0"),
    (torch.tensor([float("nan"), 1.0]), 1, "element < 0"),
    (torch.tensor([0.0, 0.0]), 1, "sum of probabilities <= 0"),
])
def test_multinomial_data_errors_raise_at_the_barrier(dev, weights, samples, message):
    with pytest.raises(RuntimeError, match=message):
        torch.multinomial(weights, samples)
    draws = torch.multinomial(weights.to(dev), samples)
    with pytest.raises(RuntimeError, match=message):
        draws.cpu()


@pytest.mark.parametrize("weights,samples,message", [
    (torch.tensor([1.0, 2.0]), 3, "without replacement"),
    (torch.tensor([1, 2]), 1, "floating-point"),
])
def test_multinomial_argument_errors_raise_at_the_call(dev, weights, samples, message):
    for device in ("cpu", dev):
        with pytest.raises(RuntimeError, match=message):
            torch.multinomial(weights.to(device), samples)


@pytest.mark.parametrize("dtype", [torch.float32])  # float64: each dtype compiles ~9 s
def test_matrix_exp_and_its_gradient_match_eager(dev, dtype):
    lc.metrics.reset()
    a = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(0)).to(dtype)
    results = []
    for device in ("cpu", dev):
        x = a.to(device, copy=True).requires_grad_()
        y = torch.linalg.matrix_exp(x)
        y.abs().sum().backward()
        results.append((y.detach().cpu(), x.grad.cpu()))
    (y_lazy, g_lazy), (y_eager, g_eager) = results[1], results[0]
    tol = dict(rtol=1e-5, atol=1e-4) if dtype != torch.float64 else {}
    assert y_lazy.dtype == y_eager.dtype
    torch.testing.assert_close(y_lazy, y_eager, **tol)
    torch.testing.assert_close(g_lazy, g_eager, **tol)
    assert not _fallbacks()


def test_orthogonal_parametrization_trains_like_eager(dev):
    def run(device):
        torch.manual_seed(0)
        layer = parametrizations.orthogonal(torch.nn.Linear(6, 6), orthogonal_map="matrix_exp")
        layer = layer.to(device)
        opt = torch.optim.SGD(layer.parameters(), lr=0.1)
        x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1)).to(device)
        losses = []
        for _ in range(2):
            loss = layer(x).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, layer.weight.detach().cpu()

    eager = run("cpu")
    lc.metrics.reset()
    lazy = run(dev)
    torch.testing.assert_close(lazy[0], eager[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lazy[1], eager[1], rtol=1e-5, atol=1e-5)
    assert not _fallbacks()


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf"), 0.0])
@pytest.mark.parametrize("pairs", ["other", "self"])
def test_cdist_and_its_gradient_match_eager(dev, p, pairs):
    """``torch.cdist``'s exact kernel (up to 25 rows, any p); ``self``: distances of 0,
    whose pairs eager's backward leaves out."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(2, 5, 3, generator=gen, dtype=torch.float64)
    b = a if pairs == "self" else torch.randn(2, 4, 3, generator=gen, dtype=torch.float64)
    lc.metrics.reset()
    results = []
    for device in ("cpu", dev):
        x1, x2 = (t.to(device, copy=True).requires_grad_() for t in (a, b))
        dist = torch.cdist(x1, x2, p=p)
        weights = torch.arange(dist.numel(), dtype=dist.dtype, device=device).reshape(dist.shape)
        (dist * weights).sum().backward()
        results.append([dist.detach().cpu(), x1.grad.cpu(), x2.grad.cpu()])
    for got, want in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(got, want)
    assert not _fallbacks()


NAN = float("nan")


@pytest.mark.parametrize("values", [[3.0, 1.0, 2.0, 4.0], [1.0, NAN, 2.0], [NAN, NAN], [5.0],
                                    [2.0, 2.0, 1.0, 3.0, 3.0]])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("fn", [torch.median, torch.nanmedian])
def test_median_of_all_elements_matches_eager(dev, values, dtype, fn):
    """``median()``/``nanmedian()`` without ``dim`` return only the value (no index to
    choose among equal values): the lower median, NaN as eager has it."""
    lc.metrics.reset()
    t = torch.tensor(values, dtype=dtype)
    got, want = fn(t.to(dev)).cpu(), fn(t)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    assert not _fallbacks()


def test_median_of_integers_and_its_gradient_match_eager(dev):
    ints = torch.tensor([[7, 1, 5], [3, 3, 9]], dtype=torch.int32)
    assert torch.equal(torch.median(ints.to(dev)).cpu(), torch.median(ints))
    grads = []
    for device in ("cpu", dev):
        x = torch.tensor([[2.0, 5.0, 2.0], [1.0, 2.0, 7.0]], device=device, requires_grad=True)
        torch.median(x).backward()  # the median 2.0 appears three times: eager spreads it
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
