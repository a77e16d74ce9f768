"""``nll_loss`` / ``cross_entropy`` forward and backward against eager PyTorch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lazy_torch as lt


def _run(fn, *tensors, device):
    args = [t.detach().clone().to(device).requires_grad_(t.is_floating_point()) for t in tensors]
    out = fn(*args)
    out.sum().backward()
    return out.detach().cpu(), args[0].grad.cpu()


CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(ignore_index=1),
    dict(ignore_index=1, reduction="none"),
    dict(weight=True),
    dict(weight=True, reduction="sum"),
    dict(weight=True, reduction="none", ignore_index=2),
    dict(label_smoothing=0.1),
]


@pytest.mark.parametrize("kwargs", CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("batched", [True, False])
def test_cross_entropy_matches_eager(kwargs, batched):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) if batched else torch.randn(5, generator=g)
    target = torch.tensor([0, 1, 2, 1, 4, 1]) if batched else torch.tensor(1)
    kwargs = dict(kwargs)
    if kwargs.pop("weight", False):
        kwargs["weight"] = torch.rand(5, generator=g) + 0.5

    def fn(x, t, **extra):
        kw = dict(kwargs)
        if "weight" in kw:
            kw["weight"] = kw["weight"].to(x.device)
        return F.cross_entropy(x, t, **kw)

    want, want_grad = _run(fn, logits, target, device="cpu")
    got, got_grad = _run(fn, logits, target, device=lt.device())
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 9])
@pytest.mark.parametrize("batched", [True, False])
def test_ignored_targets_outside_the_classes_match_eager(reduction, ignore_index, batched):
    # an ignore_index outside [0, classes) matches no one-hot column (the lowering's
    # shortcut): ignored samples must still leave the mean's denominator and the grads
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(5, 4, generator=g) if batched else torch.randn(4, generator=g)
    target = torch.tensor([3, ignore_index, 0, ignore_index, 2]) if batched else \
        torch.tensor(ignore_index)

    def fn(x, t):
        return F.cross_entropy(x, t, reduction=reduction, ignore_index=ignore_index)

    want, want_grad = _run(fn, logits, target, device="cpu")
    got, got_grad = _run(fn, logits, target, device=lt.device())
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_nll_loss_all_ignored_is_nan_like_eager():
    x = torch.randn(3, 4).log_softmax(1)
    t = torch.tensor([-100, -100, -100])
    want = F.nll_loss(x, t)
    got = F.nll_loss(x.to(lt.device()), t.to(lt.device())).cpu()
    assert torch.isnan(want) and torch.isnan(got)


@pytest.mark.parametrize("bad", ["batch", "float_target", "weight_shape"])
def test_nll_loss_bad_input_raises_eager_error_type(bad):
    x = torch.randn(3, 4)
    t = torch.tensor([0, 1, 2])
    kw = {}
    if bad == "batch":
        t = torch.tensor([0, 1])
    elif bad == "float_target":
        t = t.float()
    else:
        kw["weight"] = torch.ones(3)
    with pytest.raises(Exception) as eager:
        F.nll_loss(x, t, **kw)
    kw = {k: v.to(lt.device()) for k, v in kw.items()}
    with pytest.raises(type(eager.value)):
        F.nll_loss(x.to(lt.device()), t.to(lt.device()), **kw)
