"""The Python-operator fast path: same values, dtypes and errors as eager PyTorch, and
it steps aside whenever autograd, a mode or a non-lazy operand could observe the op."""

from __future__ import annotations

import operator

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import lazy_torch as lt
from lazy_torch import _tensor

OPS = [operator.add, operator.sub, operator.mul, operator.truediv]
TENSORS = {
    "f32": torch.tensor([1.5, -2.0, 3.0]),
    "f16": torch.tensor([1.5, -2.0, 3.0], dtype=torch.float16),
    "i64": torch.tensor([3, -4, 5]),
    "i32": torch.tensor([3, -4, 5], dtype=torch.int32),
    "bool": torch.tensor([True, False, True]),
    "f64_0d": torch.tensor(2.5, dtype=torch.float64),
    "i64_0d": torch.tensor(7),
}
SCALARS = [2, -3, 0.5, True, 2.0]


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3, equal_nan=True)


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001
        return None, type(e)


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("name", TENSORS)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_tensor_scalar_both_orders(op, name, scalar):
    t = TENSORS[name]
    lazy = t.to(lt.device())
    for f in (lambda a: op(a, scalar), lambda a: op(scalar, a)):
        want, want_err = _outcome(lambda f=f: f(t))
        got, got_err = _outcome(lambda f=f: f(lazy))
        assert got_err == want_err
        if want_err is None:
            _same(got, want)


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("a", TENSORS)
@pytest.mark.parametrize("b", ["f32", "i64", "bool", "f64_0d"])
def test_tensor_tensor(op, a, b):
    x, y = TENSORS[a], TENSORS[b]
    want, want_err = _outcome(lambda: op(x, y))
    got, got_err = _outcome(lambda: op(x.to(lt.device()), y.to(lt.device())))
    assert got_err == want_err
    if want_err is None:
        _same(got, want)


def test_fast_path_skips_the_dispatcher(monkeypatch):
    x = torch.ones(3).to(lt.device())
    y = torch.full((3,), 2.0).to(lt.device())
    calls = []
    real = _tensor._dispatch
    monkeypatch.setattr(_tensor, "_dispatch", lambda f, a, k: calls.append(f) or real(f, a, k))
    z = (x + y) * 0.5 - x / y
    assert calls == []
    _same(z, (torch.ones(3) + 2.0) * 0.5 - torch.ones(3) / 2.0)


def test_autograd_still_records():
    w = torch.ones(3).to(lt.device()).requires_grad_()
    out = (w * 3.0 + 1.0).sum()
    assert out.grad_fn is not None
    out.backward()
    _same(w.grad, torch.full((3,), 3.0))
    with torch.no_grad():
        assert (w * 2.0).grad_fn is None


def test_dispatch_modes_see_the_ops():
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    x = torch.ones(2).to(lt.device())
    with Record():
        x * 2.0
    assert torch.ops.aten.mul.Tensor in seen


def test_cpu_operand_takes_the_normal_path(monkeypatch):
    x = torch.ones(2).to(lt.device())
    calls = []
    real = _tensor._dispatch
    monkeypatch.setattr(_tensor, "_dispatch", lambda f, a, k: calls.append(f) or real(f, a, k))
    _same(x + torch.tensor(2.0), torch.full((2,), 3.0))  # 0-d CPU tensors are allowed
    assert calls


def test_int_overflow_raises_like_eager():
    x = torch.ones(2, dtype=torch.int64)
    with pytest.raises(Exception) as eager:  # noqa: PT011 - whatever eager raises
        x + 2**70
    with pytest.raises(type(eager.value)):
        x.to(lt.device()) + 2**70
