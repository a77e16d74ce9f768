"""Inference tensors (made under ``torch.inference_mode()``) behave as eager's, in and out of
the mode: writes outside it raise eager's RuntimeError through every path (element writes,
in-place methods, views, ``out=``), so do autograd and ``requires_grad_``; views are
inference tensors exactly when their source is; a normal tensor's view made in the mode
stays a writable normal tensor."""

from __future__ import annotations

import pytest
import torch


def _inference(device, *shape):
    with torch.inference_mode():
        return torch.arange(float(torch.Size(shape).numel()), device=device).reshape(shape)


def _outcome(fn, device):
    """What ``fn`` did on ``device``: ("raised", type, message) or ("ok", comparable result)."""
    try:
        result = fn(device)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return ("raised", type(e), str(e))
    items = result if isinstance(result, tuple) else (result,)
    return ("ok", tuple((x.cpu().tolist(), x.dtype, x.is_inference())
                        if isinstance(x, torch.Tensor) else x for x in items))


def _set(t, key, value):
    t[key] = value
    return t


def _view_made_in_mode(d):
    x = torch.zeros(2, 3, device=d)
    with torch.inference_mode():
        v = x[1]
    v.add_(1.0)
    v[0] = 5.0
    return x, v


def _inside_mode(d):
    x, n = _inference(d, 2, 3), torch.zeros(2, 3, device=d)
    with torch.inference_mode():
        x[0, 1] = -1.0
        x[1].mul_(2.0)
        n[0, 0] = 3.0
        n.add_(1.0)
        y = n * 2
        return x, n, y, x.t(), n.t(), x.detach()


def _detach_write(d):
    x = _inference(d, 2, 3)
    a = x.detach()
    a.add_(1.0)
    return x, a._version


def _set_version(d):
    return _inference(d, 3)._version


def _grad_mul(d):
    w = torch.ones(2, 3, device=d, requires_grad=True)
    return (w * _inference(d, 2, 3)).sum()


def _grad_use_result(d):
    w = torch.ones(3, device=d, requires_grad=True)
    (w + _inference(d, 3)).sum().backward()  # add saves nothing: allowed
    return w.grad


def _failed_writes(d):
    """Eager writes before its version bump raises: the values after the errors."""
    x = _inference(d, 2, 3)
    for write in (lambda: _set(x, (0, 0), 9.0), lambda: x[1].add_(1.0), lambda: x.t().mul_(2.0)):
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            write()
    return x


def _dtype_views_in_mode(d):
    x, n = _inference(d, 2, 2), torch.ones(2, 2, device=d)
    with torch.inference_mode():
        return x.view(torch.int32), n.view(torch.int32), x.view(torch.float32), n[0]


CASES = {
    "values after failed writes": _failed_writes,
    "dtype views in the mode": _dtype_views_in_mode,
    "dtype view write": lambda d: _inference(d, 2, 3).view(torch.int32).add_(1),
    "same-dtype view write": lambda d: _inference(d, 2, 3).view(torch.float32).add_(1),
    "view_as_complex write": lambda d: torch.view_as_complex(_inference(d, 3, 2)).add_(1.0),
    "element write": lambda d: _set(_inference(d, 2, 3), (0, 1), 7.0),
    "negative element write": lambda d: _set(_inference(d, 2, 3), (-1, -1), 7.0),
    "row write": lambda d: _set(_inference(d, 2, 3), 0, 7.0),
    "slice write": lambda d: _set(_inference(d, 2, 3), (slice(None), 1), 7.0),
    "add_": lambda d: _inference(d, 2, 3).add_(1.0),
    "mul_ tensor": lambda d: _inference(d, 2, 3).mul_(torch.ones(3, device=d)),
    "zero_": lambda d: _inference(d, 2, 3).zero_(),
    "copy_": lambda d: _inference(d, 2, 3).copy_(torch.ones(2, 3, device=d)),
    "out=": lambda d: torch.add(torch.ones(2, 3, device=d), 1.0, out=_inference(d, 2, 3)),
    "view add_": lambda d: _inference(d, 2, 3).view(3, 2).add_(1.0),
    "transpose element write": lambda d: _set(_inference(d, 2, 3).t(), (2, 1), 1.0),
    "unbind write": lambda d: _inference(d, 2, 3).unbind(0)[1].fill_(0.0),
    "neg view write": lambda d: _inference(d, 2, 3)._neg_view().add_(1.0),
    "views are inference": lambda d: tuple(f(_inference(d, 2, 3)) for f in (
        lambda x: x[1], lambda x: x.t(), lambda x: x.view(6), lambda x: x.expand(2, 2, 3),
        lambda x: x.view(torch.int32), lambda x: x.unbind(1)[0], lambda x: x._neg_view())),
    "op results are normal": lambda d: (_inference(d, 3) + 1, _inference(d, 3).sqrt(),
                                        _inference(d, 3).clone().add_(1.0)),
    "detach write": _detach_write,
    "requires_grad_": lambda d: _inference(d, 3).requires_grad_(),
    "_version": _set_version,
    "saved for backward": _grad_mul,
    "used where nothing is saved": _grad_use_result,
    "inside the mode": _inside_mode,
    "normal view made in the mode": _view_made_in_mode,
}


@pytest.mark.parametrize("name", CASES)
def test_matches_eager(name, dev):
    eager = _outcome(CASES[name], "cpu")
    lazy = _outcome(CASES[name], dev)
    assert lazy == eager


@pytest.mark.parametrize("target_inference", [True, False])
def test_data_swap_between_kinds_raises_clearly(target_inference, dev):
    """Eager swaps them (``dense`` CPU tensors); a lazy wrapper's kind is fixed: not silent."""
    inference, normal = _inference(dev, 3), torch.zeros(3, device=dev)
    target, new = (inference, normal) if target_inference else (normal, inference)
    with pytest.raises(NotImplementedError, match="inference tensor and a normal tensor"):
        target.data = new
    assert target.cpu().tolist() == ([0.0, 1.0, 2.0] if target_inference else [0.0] * 3)
