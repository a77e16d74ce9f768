"""The Python-operator fast path: same values, dtypes and errors as eager PyTorch, and
it steps aside whenever autograd, a mode or a non-lazy operand could observe the op."""

from __future__ import annotations

import operator

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import lazy_torch as lt
from lazy_torch import _fastpath, _tensor

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
    w = 1.5 - 2 * z + 0.5
    assert calls == []
    want = (torch.ones(3) + 2.0) * 0.5 - torch.ones(3) / 2.0
    _same(z, want)
    _same(w, 1.5 - 2 * want + 0.5)


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


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("value", [2**70, 2**64, -(2**63) - 1])
def test_int_overflow_raises_like_eager(dtype, value):
    x = torch.ones(2, dtype=dtype)
    lazy = x.to(lt.device())
    lazy * 3  # the int signature's plan exists: the value must still be checked
    with pytest.raises(Exception) as eager:  # noqa: PT011 - whatever eager raises
        x + value
    with pytest.raises(type(eager.value)):
        lazy + value
    with pytest.raises(type(eager.value)):
        value - lazy


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32], ids=str)
@pytest.mark.parametrize("op", OPS[:3], ids=lambda o: o.__name__)
def test_python_ints_wrap_into_small_int_dtypes_like_eager(dtype, op):
    x = torch.tensor([3, 4, 100]).to(dtype)
    lazy = x.to(lt.device())
    for value in (1, 200, -129, 70000, -1, 2**40):  # the first call learns the plan
        _same(op(lazy, value), op(x, value))
        _same(op(value, lazy), op(value, x))


def test_planned_calls_match_the_learning_call(monkeypatch):
    """A signature's first call runs the lowering; later calls run its plan."""
    cases = [("f32", "f64_0d"), ("i32", "f32"), ("i64_0d", "f16"), ("bool", "i64"),
             ("f16", "i64_0d")]
    calls = []
    real = _tensor._dispatch
    monkeypatch.setattr(_tensor, "_dispatch", lambda f, a, k: calls.append(f) or real(f, a, k))
    for a, b in cases:
        x, y = TENSORS[a], TENSORS[b]
        for op in (operator.add, operator.mul, operator.truediv):
            for scale in (1, 3):  # learn, then plan
                xs, ys = x * scale, y * scale
                _same(op(xs.to(lt.device()), ys.to(lt.device())), op(xs, ys))
    arithmetic = {torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor,
                  torch.ops.aten.div.Tensor}
    assert not [f for f in calls if f in arithmetic]


def test_default_dtype_is_read_at_each_call():
    x = torch.tensor([1, 2]).to(lt.device())
    assert (x * 0.5).dtype == torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert (x * 0.5).dtype == (x / x).dtype == (0.5 + x).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)
    assert (x * 0.5).dtype == torch.float32


# -- methods (optimizer steps): mul_, lerp_, addcdiv_, sqrt, ... ----------------------------

METHOD_CALLS = {
    "mul_": lambda a, b: a.mul_(0.9),
    "mul_int": lambda a, b: a.mul_(2),
    "mul_tensor": lambda a, b: a.mul_(b),
    "div_": lambda a, b: a.div_(4),
    "add_alpha": lambda a, b: a.add_(b, alpha=-0.5),
    "add_scalar": lambda a, b: a.add_(1e-3),
    "sub_": lambda a, b: a.sub_(b),
    "lerp_": lambda a, b: a.lerp_(b, 0.1),
    "addcmul_": lambda a, b: a.addcmul_(b, b, value=0.01),
    "addcdiv_": lambda a, b: a.addcdiv_(b, b.abs() + 1, value=-0.1),
    "sqrt": lambda a, b: a.sqrt(),
    "add_positional_alpha": lambda a, b: a.add_(b, 2),
    "lerp_wrong_arity": lambda a, b: a.lerp_(b),
    "addcmul_scalar_arg": lambda a, b: a.addcmul_(b, 2.0),
    "mul_huge_int": lambda a, b: a.mul_(2**70),
}
METHOD_DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64}


@pytest.mark.parametrize("call", METHOD_CALLS)
@pytest.mark.parametrize("dtype", METHOD_DTYPES)
@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_methods_match_eager(call, dtype, grad):
    fn = METHOD_CALLS[call]
    a = torch.tensor([1.5, -2.0, 3.0, 0.25]).to(METHOD_DTYPES[dtype])
    b = torch.tensor([0.5, 4.0, -1.0, 2.0]).to(METHOD_DTYPES[dtype])
    la, lb = a.to(lt.device()), b.to(lt.device())
    with torch.set_grad_enabled(grad):
        want, want_err = _outcome(lambda: fn(a, b))
        version = la._version
        got, got_err = _outcome(lambda: fn(la, lb))
    assert got_err == want_err
    if want_err is None:
        _same(got, want)
        _same(la, a)
        assert (got is la) == (want is a)
        assert la._version - version == (1 if got is la else 0)


@pytest.mark.parametrize("call", METHOD_CALLS)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.float16], ids=str)
def test_methods_match_the_dispatcher_path(call, dtype, monkeypatch):
    """Where a lowering differs from eager, the fast and dispatcher paths differ alike."""
    def run():
        a = torch.tensor([1.5, -2.0, 3.0, 0.25]).to(dtype).to(lt.device())
        b = torch.tensor([0.5, 4.0, -1.0, 2.0]).to(dtype).to(lt.device())
        out, err = _outcome(lambda: METHOD_CALLS[call](a, b))
        return (None if out is None else out.cpu()), a.cpu(), err

    fast = run()
    for name, *_ in _fastpath._METHODS:  # torch.Tensor's own methods: the dispatcher path
        monkeypatch.setattr(_tensor.LazyTensor, name, getattr(torch.Tensor, name))
    slow = run()
    assert fast[2] == slow[2]
    for got, want in zip(fast[:2], slow[:2], strict=True):
        if want is not None:
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, equal_nan=True)


def test_methods_skip_the_dispatcher_under_no_grad(monkeypatch):
    p = torch.ones(3).to(lt.device()).requires_grad_()
    g = torch.full((3,), 2.0).to(lt.device())
    calls = []
    real = _tensor._dispatch
    monkeypatch.setattr(_tensor, "_dispatch", lambda f, a, k: calls.append(f) or real(f, a, k))
    with torch.no_grad():
        p.mul_(0.5).lerp_(g, 0.25).addcmul_(g, g, value=0.5).addcdiv_(g, g.sqrt(), value=-1.0)
    assert calls == []
    want = torch.ones(3) * 0.5
    want = want.lerp(torch.full((3,), 2.0), 0.25) + 2.0 - 2.0 / 2.0**0.5
    _same(p.detach(), want)
    assert p.requires_grad and p.grad_fn is None


def test_inplace_method_on_leaf_requiring_grad_raises_like_eager():
    p = torch.ones(3).to(lt.device()).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.mul_(2.0)


def test_inplace_method_through_a_view_updates_base_and_other_views():
    base = torch.arange(6.0).to(lt.device())
    rows = base.view(2, 3)
    col = rows[:, 1]
    base_version = base._version
    with torch.no_grad():
        col.mul_(10.0)
        rows.add_(1.0)
    want = torch.arange(6.0)
    want.view(2, 3)[:, 1].mul_(10.0)
    want.add_(1.0)
    _same(base, want)
    _same(col, want.view(2, 3)[:, 1])
    assert base._version == rows._version == col._version == base_version + 2


def test_version_bump_is_seen_by_backward():
    w = torch.ones(3).to(lt.device()).requires_grad_()
    x = torch.full((3,), 2.0).to(lt.device())
    y = (w * x).sum()
    with torch.no_grad():
        x.mul_(3.0)  # x was saved for backward
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_inference_mode_takes_the_normal_path():
    with torch.inference_mode():
        x = torch.ones(3).to(lt.device())
        x.mul_(2.0)
        y = x.sqrt()
        assert y.is_inference()
    _same(x, torch.full((3,), 2.0))
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x.mul_(2.0)


def test_operators_read_views_after_their_base_changed():
    base = torch.arange(6.0)
    lazy = base.to(lt.device())
    views = [lambda b: b[1:4], lambda b: b.view(2, 3).t()[1], lambda b: b.view(2, 3)[:, 0]]
    for view in views:
        v, lv = view(base), view(lazy)
        _same(lv + 1.0, v + 1.0)  # learns the plan
        base.mul_(2.0)
        lazy.mul_(2.0)
        _same(lv * lv, v * v)
        _same(2 - lv, 2 - v)
        _same(lv / lv, v / v)


def test_reflected_sub_records_autograd_when_grad_is_required():
    w = torch.tensor([1.0, 2.0]).to(lt.device()).requires_grad_()
    out = (3.0 - w * 2).sum()
    assert out.grad_fn is not None
    out.backward()
    _same(w.grad, torch.full((2,), -2.0))


def test_factories_own_separate_storages():
    """``empty`` hands its fresh core value to the new tensor as is (no second handle):
    factories filled in place (``ones``, ``full``, ``empty_strided``) stay independent."""
    dev = lt.device()
    a, b = torch.ones(2, 3, device=dev), torch.ones(2, 3, device=dev)
    c = torch.empty_strided((2, 3), (3, 1), dtype=torch.float64, device=dev).fill_(2)
    a.add_(1)
    b.mul_(c.to(torch.float32))
    assert c.dtype == torch.float64 and c.stride() == (3, 1)
    _same(a, torch.full((2, 3), 2.0))
    _same(b, torch.full((2, 3), 2.0))
    _same(c, torch.full((2, 3), 2.0, dtype=torch.float64))
    _same(torch.zeros(2, 3, device=dev), torch.zeros(2, 3))
