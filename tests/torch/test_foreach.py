"""``torch._foreach_*`` on the lazy device: each element runs the per-element overload's
lazy_torch handler directly (no re-dispatch), with eager's values, dtypes, in-place
identity and errors; torch.optim's foreach and single-tensor paths train like eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lazy_torch
from lazy_torch._tensor import LazyTensor
from lazy_torch.lowerings.foreach import element_overload

from .models import MODELS, batches

aten = torch.ops.aten

# -- optimizers: lazy vs eager CPU from the same init ------------------------------------------

OPTIMIZERS = {
    "sgd_momentum": lambda p, fe: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=fe),
    "sgd_nesterov_wd": lambda p, fe: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                     weight_decay=1e-2, foreach=fe),
    "sgd_dampening": lambda p, fe: torch.optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.1,
                                                   foreach=fe),
    "adam": lambda p, fe: torch.optim.Adam(p, lr=1e-2, foreach=fe),
    "adam_amsgrad_wd": lambda p, fe: torch.optim.Adam(p, lr=1e-2, amsgrad=True,
                                                      weight_decay=1e-2, foreach=fe),
    "adamw": lambda p, fe: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-2, foreach=fe),
    "adamw_amsgrad": lambda p, fe: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, foreach=fe),
    "rmsprop": lambda p, fe: torch.optim.RMSprop(p, lr=1e-2, foreach=fe),
    "rmsprop_momentum_wd": lambda p, fe: torch.optim.RMSprop(p, lr=1e-2, momentum=0.9,
                                                             weight_decay=1e-2, foreach=fe),
    "rmsprop_centered_momentum": lambda p, fe: torch.optim.RMSprop(
        p, lr=1e-2, centered=True, momentum=0.9, weight_decay=1e-2, foreach=fe),
    "adagrad": lambda p, fe: torch.optim.Adagrad(p, lr=1e-1, lr_decay=1e-3, weight_decay=1e-2,
                                                 foreach=fe),
}


def _train(make_opt, foreach, device, steps=4):
    torch.manual_seed(0)
    model = MODELS["mlp"]().to(device)
    opt = make_opt(model.parameters(), foreach)
    losses = []
    for x, y in batches("mlp", steps):
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device != "cpu":
            lazy_torch.sync()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()], opt


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "single"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_matches_eager(name, foreach, dev):
    # RMSprop divides by sqrt(E[g^2]) with no bias correction (and centered RMSprop by
    # sqrt(E[g^2] - E[g]^2)): small denominators amplify rounding differences between XLA's
    # fused kernels and eager's, the same on both optimizer paths
    tol = dict(rtol=1e-5, atol=1e-6)
    if "rmsprop" in name:
        tol = dict(rtol=1e-3, atol=1e-4) if "centered" in name else dict(rtol=1e-4, atol=1e-5)
    want_losses, want, cpu_opt = _train(OPTIMIZERS[name], foreach, "cpu")
    got_losses, got, lazy_opt = _train(OPTIMIZERS[name], foreach, dev)
    torch.testing.assert_close(torch.tensor(got_losses), torch.tensor(want_losses), **tol)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, **tol)
    # the optimizer state agrees too (step counters stay where eager keeps them: CPU);
    # RMSprop's momentum buffer holds g / sqrt(E[g^2]) itself, ill-conditioned where g ~ 0
    if "rmsprop" in name:
        tol = dict(rtol=1e-3, atol=1e-3)
    for gs, ws in zip(lazy_opt.state.values(), cpu_opt.state.values(), strict=True):
        assert gs.keys() == ws.keys()
        for key, wv in ws.items():
            gv = gs[key]
            if isinstance(wv, torch.Tensor):
                if key == "step":
                    assert gv.device.type == "cpu"
                assert gv.dtype == wv.dtype
                torch.testing.assert_close(gv.cpu(), wv, **tol)


# -- the per-element overloads ------------------------------------------------------------------

MAPPING = {
    aten._foreach_add_.List: aten.add_.Tensor,
    aten._foreach_add_.Scalar: aten.add_.Scalar,
    aten._foreach_add_.ScalarList: aten.add_.Scalar,
    aten._foreach_add_.Tensor: aten.add_.Tensor,
    aten._foreach_add.List: aten.add.Tensor,
    aten._foreach_sub_.List: aten.sub_.Tensor,
    aten._foreach_mul_.Scalar: aten.mul_.Scalar,
    aten._foreach_mul_.ScalarList: aten.mul_.Scalar,
    aten._foreach_mul_.Tensor: aten.mul_.Tensor,
    aten._foreach_mul_.List: aten.mul_.Tensor,
    aten._foreach_div_.ScalarList: aten.div_.Scalar,
    aten._foreach_div_.List: aten.div_.Tensor,
    aten._foreach_addcdiv_.Scalar: aten.addcdiv_.default,
    aten._foreach_addcdiv_.ScalarList: aten.addcdiv_.default,
    aten._foreach_addcdiv_.Tensor: aten.addcdiv_.default,
    aten._foreach_addcmul_.Scalar: aten.addcmul_.default,
    aten._foreach_addcmul.Scalar: aten.addcmul.default,
    aten._foreach_lerp_.Scalar: aten.lerp_.Scalar,
    aten._foreach_lerp_.ScalarList: aten.lerp_.Scalar,
    aten._foreach_lerp_.List: aten.lerp_.Tensor,
    aten._foreach_sqrt.default: aten.sqrt.default,
    aten._foreach_sqrt_.default: aten.sqrt_.default,
    aten._foreach_neg.default: aten.neg.default,
    aten._foreach_maximum_.List: aten.clamp_min_.Tensor,  # eager's slow kernel
    aten._foreach_maximum.Scalar: aten.clamp_min.default,
    aten._foreach_minimum.List: aten.clamp_max.Tensor,
    aten._foreach_norm.Scalar: aten.linalg_vector_norm.default,
    aten._foreach_copy_.default: aten.copy_.default,
    aten._foreach_zero_.default: aten.zero_.default,
    aten._foreach_pow.Scalar: aten.pow.Tensor_Scalar,
    aten._foreach_pow.ScalarAndTensor: aten.pow.Scalar,
    aten._foreach_clamp_min_.Scalar: aten.clamp_min_.default,
}


@pytest.mark.parametrize("op", list(MAPPING), ids=str)
def test_element_overload(op):
    assert element_overload(op) is MAPPING[op]


def test_unmatched_overload_keeps_the_packet_path():
    powsum = getattr(aten, "_foreach_powsum", None)
    if powsum is not None:
        assert element_overload(powsum.Scalar) is None  # no per-element ``powsum``


def _lists(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(3, generator=g, dtype=dtype), torch.randn(2, 4, generator=g, dtype=dtype),
            torch.randn((), generator=g, dtype=dtype)]


def _pos(ts):
    return [t.abs() + 0.5 for t in ts]


CASES = {
    "add_.List": lambda a, b: torch._foreach_add_(a, b, alpha=2),
    "add_.Scalar": lambda a, b: torch._foreach_add_(a, 1.5),
    "add_.ScalarList": lambda a, b: torch._foreach_add_(a, [1.0, 2, 3.5]),
    "add_.Tensor": lambda a, b: torch._foreach_add_(a, torch.tensor(0.25), alpha=-2),
    "add.List": lambda a, b: torch._foreach_add(a, b),
    "sub_.List": lambda a, b: torch._foreach_sub_(a, b, alpha=0.5),
    "sub.Scalar": lambda a, b: torch._foreach_sub(a, 3),
    "mul_.Scalar": lambda a, b: torch._foreach_mul_(a, 0.9),
    "mul_.ScalarList": lambda a, b: torch._foreach_mul_(a, [0.1, -2.0, 3]),
    "mul_.Tensor": lambda a, b: torch._foreach_mul_(a, torch.tensor(3.0)),
    "mul.List": lambda a, b: torch._foreach_mul(a, b),
    "div_.ScalarList": lambda a, b: torch._foreach_div_(a, [2.0, 3.0, -4.0]),
    "div_.List": lambda a, b: torch._foreach_div_(a, _pos(b)),
    "div.Scalar": lambda a, b: torch._foreach_div(a, 7),
    "addcdiv_.Scalar": lambda a, b: torch._foreach_addcdiv_(a, b, _pos(b), value=-0.5),
    "addcdiv_.ScalarList": lambda a, b: torch._foreach_addcdiv_(a, a, _pos(b), [0.5, 0.25, 2]),
    "addcdiv_.Tensor": lambda a, b: torch._foreach_addcdiv_(a, b, _pos(a),
                                                            torch.tensor([0.5, -1.0, 2.0])),
    "addcmul_.Scalar": lambda a, b: torch._foreach_addcmul_(a, b, b, value=0.3),
    "addcmul.ScalarList": lambda a, b: torch._foreach_addcmul(a, a, b, [1.0, 2.0, 3.0]),
    "lerp_.Scalar": lambda a, b: torch._foreach_lerp_(a, b, 0.1),
    "lerp_.ScalarList": lambda a, b: torch._foreach_lerp_(a, b, [0.1, 0.5, 0.9]),
    "lerp_.List": lambda a, b: torch._foreach_lerp_(a, b, [t.sigmoid() for t in b]),
    "lerp.Scalar": lambda a, b: torch._foreach_lerp(a, b, 0.75),
    "sqrt": lambda a, b: torch._foreach_sqrt(_pos(a)),
    "sqrt_": lambda a, b: torch._foreach_sqrt_(a),  # NaN for negatives, like eager
    "neg_": lambda a, b: torch._foreach_neg_(a),
    "exp": lambda a, b: torch._foreach_exp(a),
    "sign": lambda a, b: torch._foreach_sign(a),
    "abs_": lambda a, b: torch._foreach_abs_(a),
    "reciprocal": lambda a, b: torch._foreach_reciprocal(_pos(a)),
    "maximum_.List": lambda a, b: torch._foreach_maximum_(a, b),
    "maximum.Scalar": lambda a, b: torch._foreach_maximum(a, 0.1),
    "minimum.List": lambda a, b: torch._foreach_minimum(a, b),
    "clamp_min_.ScalarList": lambda a, b: torch._foreach_clamp_min_(a, [0.0, 0.1, -5.0]),
    "clamp_max.Scalar": lambda a, b: torch._foreach_clamp_max(a, 0.2),
    "norm": lambda a, b: torch._foreach_norm(a),
    "norm.ord": lambda a, b: torch._foreach_norm(a, 3),
    "norm.inf": lambda a, b: torch._foreach_norm(a, float("inf")),
    "norm.dtype": lambda a, b: torch._foreach_norm(a, 2, dtype=torch.float64),
    "pow.Scalar": lambda a, b: torch._foreach_pow(a, 2),
    "pow.List": lambda a, b: torch._foreach_pow(_pos(a), b),
    "pow.ScalarAndTensor": lambda a, b: torch._foreach_pow(2.0, a),
    "copy_": lambda a, b: torch._foreach_copy_(a, b),
    "zero_": lambda a, b: torch._foreach_zero_(a),
    "max": lambda a, b: torch._foreach_max(a),
    "clone": lambda a, b: torch._foreach_clone(a),
}


def _run(fn, make, dtype=torch.float32):
    a = [make(t) for t in _lists(dtype)]
    b = [make(t * 2 - 0.3) for t in _lists(dtype, seed=1)]
    ids = [id(t) for t in a]
    versions = [t._version for t in a]
    out = fn(a, b)
    return a, out, ids, versions


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_foreach_matches_eager(case, dtype, dev):
    fn = CASES[case]
    want_a, want, _, want_v = _run(fn, lambda t: t.clone(), dtype)
    got_a, got, ids, got_v = _run(fn, lambda t: t.clone().to(dev), dtype)
    assert [id(t) for t in got_a] == ids  # in place: the same tensors, rewritten
    for g, w, v0g, v0w in zip(got_a, want_a, got_v, want_v, strict=True):
        assert isinstance(g, LazyTensor) and g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.cpu(), w, rtol=1e-6, atol=1e-6, equal_nan=True)
        assert g._version - v0g == w._version - v0w
    if case.split(".")[0].endswith("_"):
        return
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, LazyTensor) and g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.cpu(), w, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_elements_do_not_reenter_the_dispatcher(dev, dispatch_spy):
    """Only the foreach op itself reaches ``__torch_dispatch__``."""
    a = [torch.randn(3).to(dev) for _ in range(4)]
    b = [torch.randn(3).to(dev) for _ in range(4)]
    seen = dispatch_spy()
    with torch.no_grad():
        torch._foreach_addcdiv_(a, a, [t.abs() + 1 for t in b], [0.5] * 4)
        torch._foreach_lerp_(a, b, 0.1)
        torch._foreach_mul_(a, 0.9)
    seen = [f for f in seen if f not in (aten.abs.default, aten.add.Tensor)]
    assert seen == [aten._foreach_addcdiv_.ScalarList, aten._foreach_lerp_.Scalar,
                    aten._foreach_mul_.Scalar]


def test_views_in_the_list_write_through(dev):
    def prog(make):
        base = make(torch.arange(12.0).reshape(3, 4))
        rows = [base[0], base[2, 1:]]
        torch._foreach_mul_(rows, [2.0, -1.0])
        torch._foreach_add_(rows, [torch.ones(4).to(base.device), torch.ones(3).to(base.device)])
        return base, rows

    want_base, want_rows = prog(lambda t: t.clone())
    got_base, got_rows = prog(lambda t: t.clone().to(dev))
    torch.testing.assert_close(got_base.cpu(), want_base)
    for g, w in zip(got_rows, want_rows, strict=True):
        torch.testing.assert_close(g.cpu(), w)


def test_cpu_elements_stay_eager(dev):
    """A list mixing lazy and CPU tensors: the CPU elements run eagerly on CPU."""
    cpu_step = torch.tensor(3.0)
    lazy = torch.ones(2).to(dev)
    torch._foreach_add_([lazy, cpu_step], 1.0)
    assert cpu_step.device.type == "cpu" and cpu_step.item() == 4.0
    torch.testing.assert_close(lazy.cpu(), torch.full((2,), 2.0))
    # a CPU 0-dim tensor operand for lazy elements
    torch._foreach_mul_([lazy], torch.tensor(3.0))
    torch.testing.assert_close(lazy.cpu(), torch.full((2,), 6.0))
    out = torch._foreach_add([lazy, torch.ones(2)], [torch.ones(2).to(dev), torch.ones(2)])
    assert out[0].device.type == "lazy" and out[1].device.type == "cpu"
    torch.testing.assert_close(out[1], torch.full((2,), 2.0))


def test_dtype_promotion_and_cast_errors(dev):
    ints = [torch.arange(3), torch.arange(4)]
    got = torch._foreach_add([t.to(dev) for t in ints], 1.5)
    want = torch._foreach_add(ints, 1.5)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch._foreach_add_(ints, 1.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch._foreach_add_([t.to(dev) for t in ints], 1.5)


ERRORS = {
    "add_.List": lambda a, b: torch._foreach_add_(a, b[:1]),
    "add.List.longer": lambda a, b: torch._foreach_add(a[:1], b),
    "mul_.ScalarList": lambda a, b: torch._foreach_mul_(a, [1.0]),
    "addcdiv_.List": lambda a, b: torch._foreach_addcdiv_(a, a, b[:1]),
    "addcdiv_.ScalarList": lambda a, b: torch._foreach_addcdiv_(a, a, b, [1.0, 2.0, 3.0]),
    "addcdiv_.Tensor.len": lambda a, b: torch._foreach_addcdiv_(a, a, b, torch.ones(3)),
    "addcdiv_.Tensor.dim": lambda a, b: torch._foreach_addcdiv_(a, a, b, torch.ones(2, 2)),
    "lerp_.List": lambda a, b: torch._foreach_lerp_(a, b[:1], 0.5),
    "mul_.Tensor.not_scalar": lambda a, b: torch._foreach_mul_(a, torch.ones(2)),
    "add_.broadcast": lambda a, b: torch._foreach_add_(a, [torch.ones(5), torch.ones(5)]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_eager(case, dev):
    fn = ERRORS[case]
    a, b = [torch.ones(3), torch.ones(2)], [torch.ones(3), torch.ones(2)]
    with pytest.raises(Exception) as eager:
        fn(a, b)

    def lazy(ts):
        return [t.to(dev) for t in ts]

    def lazy_fn(x, y):
        if case == "add_.broadcast":
            return torch._foreach_add_(x, lazy([torch.ones(5), torch.ones(5)]))
        return fn(x, y)

    with pytest.raises(type(eager.value)) as got:
        lazy_fn(lazy(a), lazy(b))
    if case != "add_.broadcast":
        assert str(got.value) == str(eager.value)


def test_empty_list_with_a_lazy_operand(dev):
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_mul_([], torch.tensor(2.0).to(dev))
