"""Issue 18: programs written by others behave as in eager PyTorch -- eager's value or
eager's exception type, never a silent difference.

Tied weights survive ``.to(lazy)``; module dtype conversions really convert; Python
ints wrap into small integer dtypes; out-of-range indices raise at the next barrier
(checked inside the compiled program, one extra output, no sync per op);
``torch.autocast("lazy")``, ``GradScaler``, pinned memory and checkpoints work.
"""

from __future__ import annotations

import io
import os

import hypothesis
import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F

import lazy_torch
import lazycore as lc
from lazy_torch._convert import TO_NP


def _tied():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(7, 4)
    head = torch.nn.Linear(4, 7, bias=False)
    head.weight = emb.weight
    return torch.nn.Sequential(emb, torch.nn.Tanh(), head)


# -- 1. tied weights ---------------------------------------------------------------------

@pytest.mark.parametrize("swap", [False, True])
def test_to_lazy_keeps_tied_parameters_tied(dev, swap):
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(swap)
    try:
        model = _tied()
        model[0].weight.grad = torch.ones(7, 4)
        assert len(list(model.parameters())) == 1
        model.to(dev)
        assert model[0].weight is model[2].weight
        assert len(list(model.parameters())) == 1
        assert model[0].weight.device == dev and model[2].weight.grad.device == dev
    finally:
        torch.__future__.set_swap_module_params_on_conversion(previous)


def test_conversion_leaves_eager_modules_alone():
    rnn = torch.nn.GRU(3, 4)  # keeps weak references to its parameters
    rnn.load_state_dict(torch.nn.GRU(3, 4).state_dict())
    assert not torch.__future__.get_swap_module_params_on_conversion()
    tied = _tied().double()
    assert tied[0].weight is tied[2].weight and tied[2].weight.dtype == torch.float64


def test_tied_model_trains_like_eager(dev):
    results = []
    for device in ("cpu", dev):
        model = _tied().to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=0.05)
        idx = torch.tensor([[1, 2, 3], [4, 5, 6]]).to(device)
        for _ in range(4):
            loss = F.cross_entropy(model(idx).reshape(-1, 7), idx.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad()
        results.append(model[0].weight.detach().cpu())
    torch.testing.assert_close(results[1], results[0], rtol=1e-5, atol=1e-6)


# -- 2. module dtype conversions ---------------------------------------------------------------

@pytest.mark.parametrize("convert, dtype", [
    (lambda m: m.half(), torch.float16), (lambda m: m.bfloat16(), torch.bfloat16),
    (lambda m: m.double(), torch.float64), (lambda m: m.to(torch.float16), torch.float16),
])
def test_module_dtype_conversion_changes_the_values(dev, convert, dtype):
    models = []
    for device in ("cpu", dev):
        model = torch.nn.Linear(4, 4)
        with torch.no_grad():
            model.weight.fill_(70000.0)
        models.append(convert(model.to(device)))
    eager, lazy = models
    assert lazy.weight.dtype == eager.weight.dtype == dtype
    assert lazy_torch.core(lazy.weight).dtype == TO_NP[dtype]  # the storage, not a label
    assert lazy.weight.sum().item() == eager.weight.sum().item()  # inf for float16


@pytest.mark.parametrize("swap", [True, False])
def test_half_module_then_float_input_raises_like_eager(dev, swap):
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(swap)
    try:
        model = torch.nn.Linear(3, 2).to(dev).half()
        assert lazy_torch.core(model.weight).dtype == lc.dtypes.float16
        with pytest.raises(RuntimeError):
            torch.nn.Linear(3, 2).half()(torch.randn(2, 3))
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 3).to(dev))
        assert model(torch.randn(2, 3).to(dev).half()).dtype == torch.float16
    finally:
        torch.__future__.set_swap_module_params_on_conversion(previous)


def test_data_assignment_of_another_dtype(dev):
    w = torch.zeros(3, device=dev)
    w.data = torch.full((2,), 70000.0, device=dev).half()
    assert w.dtype == torch.float16 and w.shape == (2,)
    assert torch.isinf(w.sum()).item()


# -- 3. integer wrap-around of Python scalars ------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda t: t + 200, lambda t: 200 + t, lambda t: t * 1000, lambda t: t - 300,
    lambda t: 300 - t, lambda t: t // 300, lambda t: t % 300, lambda t: torch.fmod(t, 300),
    lambda t: torch.div(t, 300, rounding_mode="trunc"), lambda t: t.add_(200),
    lambda t: t.to(torch.uint8) - 1, lambda t: t.to(torch.int16) + 40000,
])
def test_python_int_wraps_like_eager(dev, fn):
    a = torch.tensor([1, 2, -128, 127], dtype=torch.int8)
    expected = fn(a.clone())
    got = fn(a.clone().to(dev))
    assert got.dtype == expected.dtype
    assert got.cpu().tolist() == expected.tolist()


@pytest.mark.parametrize("fn", [lambda t: t.fill_(300), lambda t: torch.full_like(t, 300)])
def test_out_of_range_fill_raises_like_eager(dev, fn):
    a = torch.tensor([1, 2], dtype=torch.int8)
    with pytest.raises(RuntimeError):
        fn(a.clone())
    with pytest.raises(RuntimeError):
        fn(a.to(dev))


# -- 4. checked indices -----------------------------------------------------------------------

def _setitem(x, index, value):
    x[index] = value
    return x


X = torch.arange(12.0).reshape(3, 4)
W = torch.arange(10.0).reshape(5, 2)
CASES = {
    "gather": lambda x, i: torch.gather(x, 1, i([[4]])),
    "gather_negative": lambda x, i: torch.gather(x, 1, i([[-1]])),
    "take": lambda x, i: torch.take(x, i([12])),
    "take_negative": lambda x, i: torch.take(x, i([-13])),
    "embedding": lambda x, i: F.embedding(i([1, 5]), W.to(x.device)),
    "embedding_negative": lambda x, i: F.embedding(i([-1]), W.to(x.device)),
    "embedding_module": lambda x, i: torch.nn.Embedding.from_pretrained(W.to(x.device))(i([5])),
    "index_select": lambda x, i: x.index_select(0, i([3])),
    "index_select_negative": lambda x, i: x.index_select(0, i([-1])),
    "advanced_index": lambda x, i: x[i([0, 3])],
    "advanced_index_negative": lambda x, i: x[i([-4])],
    "advanced_index_dim1": lambda x, i: x[:, i([4])],
    "advanced_index_pair": lambda x, i: x[i([0]), i([4])],
    "cross_entropy": lambda x, i: F.cross_entropy(x, i([0, 4, 1])),
    "cross_entropy_negative": lambda x, i: F.cross_entropy(x, i([0, -1, 1])),
    "nll_loss": lambda x, i: F.nll_loss(x, i([0, 1, 9])),
    "nll_loss2d": lambda x, i: F.nll_loss(x.reshape(1, 3, 2, 2), i([[[0, 1], [3, 0]]])),
    "scatter": lambda x, i: x.clone().scatter_(0, i([[3, 0, 0, 0]]), 1.0),
    "scatter_add": lambda x, i: x.clone().scatter_add(1, i([[0], [1], [-1]]), x[:, :1]),
    "index_add": lambda x, i: x.clone().index_add_(0, i([3]), x[:1]),
    "index_add_vector": lambda x, i: x[0].clone().index_add_(0, i([-1]), x[0, :1]),
    "index_put": lambda x, i: x.clone().index_put_((i([5]),), torch.ones(4, device=x.device)),
    "index_fill": lambda x, i: x.clone().index_fill_(1, i([-5]), 1.0),
    "one_hot": lambda x, i: F.one_hot(i([1, 7]), 5),
    "one_hot_negative": lambda x, i: F.one_hot(i([-1]), 5),
    "index_copy": lambda x, i: x.clone().index_copy_(0, i([3]), x[:1]),
    "cross_entropy_smoothing": lambda x, i: F.cross_entropy(x, i([0, 4, 1]), label_smoothing=0.1),
    "cross_entropy_weight": lambda x, i: F.cross_entropy(x, i([0, 4, 1]), weight=torch.ones(
        4, device=x.device)),
    "nll_loss_none": lambda x, i: F.nll_loss(x, i([0, 4, 1]), reduction="none"),
    "setitem": lambda x, i: _setitem(x.clone(), i([5]), 1.0),
}
VALID = {
    "gather": lambda x, i: torch.gather(x, 1, i([[3], [0], [2]])),
    "take_negative": lambda x, i: torch.take(x, i([-12, 11])),
    "embedding": lambda x, i: F.embedding(i([[0, 4], [2, 2]]), W.to(x.device)),
    "index_select": lambda x, i: x.index_select(1, i([3, 0])),
    "advanced_index_negative": lambda x, i: x[i([-3, 2]), i([-1, 0])],
    "cross_entropy_ignore": lambda x, i: F.cross_entropy(x, i([0, -100, 3])),
    "cross_entropy_ignore_inside": lambda x, i: F.cross_entropy(x, i([0, 2, 3]), ignore_index=2),
    "index_put_negative": lambda x, i: x.clone().index_put_((i([-1]),), torch.ones(4, device=x.device)),
    "scatter": lambda x, i: x.clone().scatter_(0, i([[2, 0, 1, 0]]), 1.0),
    "one_hot": lambda x, i: F.one_hot(i([[1, 4], [0, 0]]), 5),
    "one_hot_inferred": lambda x, i: F.one_hot(i([1, 3])),
}


def _syncs() -> int:
    return lc.metrics.counters().get("syncs", 0)


def _index_maker(device):
    """Index tensors on ``device``; on the lazy device computed there, so their values are
    unknown when the op is recorded (an index uploaded from the host is checked at once)."""
    if device == "cpu":
        return lambda v: torch.tensor(v)
    return lambda v: (torch.tensor(v) + 1).to(device) - 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_index_raises_eagers_type_at_the_barrier(dev, name):
    fn = CASES[name]
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(X.clone(), _index_maker("cpu"))
    before = (X.to(dev) * 2).sum()  # computed in the same program as the check
    syncs = _syncs()
    result = fn(X.to(dev), _index_maker(dev))  # recorded: no error, no sync yet
    assert _syncs() == syncs
    with pytest.raises(type(eager.value)) as lazy:
        result.cpu()
    message = str(lazy.value)
    assert os.path.basename(__file__) in message  # the user's line
    assert "aten." in message  # the op
    assert before.item() == 132.0  # values outside the failing op keep their values
    with pytest.raises(type(eager.value)):
        result.cpu()  # a value eager never produced stays failed
    assert (X.to(dev) + 1).sum().item() == 78.0  # and the next program runs clean


@pytest.mark.parametrize("name", sorted(VALID))
def test_in_range_indices_match_eager(dev, name):
    fn = VALID[name]
    expected = fn(X.clone(), _index_maker("cpu"))
    got = fn(X.to(dev), _index_maker(dev))
    torch.testing.assert_close(got.cpu(), expected)


@pytest.mark.parametrize("name", ["gather", "embedding", "cross_entropy", "advanced_index",
                                  "one_hot"])
def test_out_of_range_host_index_raises_at_the_call(dev, name):
    """Indices uploaded from the host have known values: eager's error at the call."""
    fn = CASES[name]
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(X.clone(), _index_maker("cpu"))
    syncs = _syncs()
    with pytest.raises(type(eager.value)):
        fn(X.to(dev), lambda v: torch.tensor(v).to(dev))
    assert _syncs() == syncs


def test_one_hot_dtype_error_matches_eager(dev):
    for device in ("cpu", dev):
        with pytest.raises(RuntimeError, match="LongTensor"):
            F.one_hot(torch.tensor([1.0]).to(device), 5)


def test_checks_cost_one_extra_output_and_no_sync_per_op(dev):
    x = X.to(dev)
    idx = torch.tensor([[3], [0], [2]]).to(dev)
    syncs = _syncs()
    outs = [torch.gather(x * k, 1, idx) for k in range(5)]
    assert _syncs() == syncs
    lazy_torch.sync()
    assert _syncs() == syncs + 1
    assert [o.cpu().tolist() for o in outs] == [torch.gather(X * k, 1, torch.tensor(
        [[3], [0], [2]])).tolist() for k in range(5)]


def test_bad_index_fails_at_explicit_sync_and_dead_results_still_raise(dev):
    x = X.to(dev)
    torch.gather(x, 1, _index_maker(dev)([[9]]))  # result dropped: eager raised anyway
    with pytest.raises(RuntimeError, match="aten.gather"):
        lazy_torch.sync()
    assert (x + 0).sum().item() == 66.0


def test_training_step_with_bad_target_raises_and_keeps_weights(dev):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).to(dev)
    before = model.weight.detach().cpu().clone()
    loss = F.cross_entropy(model(X.to(dev)), _index_maker(dev)([0, 1, 3]))
    with pytest.raises(IndexError, match="Target"):
        loss.item()
    torch.testing.assert_close(model.weight.detach().cpu(), before)


# -- 5. autocast, GradScaler, pinned memory, checkpoints --------------------------------------

AUTOCAST_OPS = {
    "linear": lambda m, x: m(x),
    "matmul": lambda m, x: x @ x.T,
    "softmax": lambda m, x: F.softmax(m(x), -1),
    "layer_norm": lambda m, x: F.layer_norm(m(x), (3,)),
    "cross_entropy": lambda m, x: F.cross_entropy(m(x), torch.tensor([0, 1]).to(x.device)),
    "mse_loss": lambda m, x: F.mse_loss(m(x), torch.zeros(2, 3, device=x.device)),
    "add_float": lambda m, x: m(x) + x[:, :3],
    "cat": lambda m, x: torch.cat([m(x), x[:, :3]]),
    "bmm": lambda m, x: torch.bmm(x[None], x.T[None]),
    "sdpa": lambda m, x: F.scaled_dot_product_attention(x[None, None], x[None, None],
                                                        x[None, None]),
    "prod": lambda m, x: m(x).prod(),
    "double_untouched": lambda m, x: x.double() @ x.double().T,
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", sorted(AUTOCAST_OPS))
def test_autocast_follows_eagers_cast_policy(dev, dtype, name):
    fn = AUTOCAST_OPS[name]
    torch.manual_seed(0)
    model, x = torch.nn.Linear(4, 3), torch.randn(2, 4)
    with torch.autocast("cpu", dtype=dtype):
        expected = fn(model, x)
    model.to(dev)
    with torch.autocast("lazy", dtype=dtype):
        got = fn(model, x.to(dev))
    assert got.dtype == expected.dtype
    # half-precision intermediates: XLA and ATen round differently inside them
    torch.testing.assert_close(got.cpu(), expected, rtol=2e-2, atol=2e-2)


def test_autocast_training_with_grad_scaler(dev):
    runs = []
    for device in ("cpu", dev):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(torch.device(device).type, init_scale=2.0 ** 10,
                                      growth_interval=2)
        scales = []
        for step in range(5):
            x = torch.randn(4, 3)
            if step == 2:
                x[0, 0] = float("inf")  # a skipped step and a backoff
            with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
                loss = model(x.to(device)).float().pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            scales.append(scaler.get_scale())
        runs.append((scales, model.weight.detach().cpu()))
    assert runs[0][0] == runs[1][0]
    torch.testing.assert_close(runs[1][1], runs[0][1], rtol=2e-2, atol=2e-2)  # bf16 matmuls


def test_pin_memory_and_pinned_data_loader(dev):
    pinned = torch.arange(6.0).pin_memory()
    assert pinned.is_pinned() and not torch.arange(6.0).is_pinned()
    data = torch.utils.data.TensorDataset(torch.arange(8.0).reshape(4, 2), torch.arange(4))
    loader = torch.utils.data.DataLoader(data, batch_size=2, pin_memory=True)
    total = sum(x.to(dev, non_blocking=True).sum().item() for x, _ in loader)
    assert total == 28.0


def test_checkpoint_round_trip_weights_only(dev):
    model = _tied().to(dev)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    loaded = torch.load(buf)  # weights_only=True by default
    assert all(v.device == dev for v in loaded.values())
    buf.seek(0)
    on_cpu = torch.load(buf, map_location="cpu")
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    buf.seek(0)
    mapped = torch.load(buf, map_location=lazy_torch.device())
    assert all(v.device == dev for v in mapped.values())
    fresh = _tied()
    with torch.no_grad():
        fresh[0].weight.zero_()
    fresh.to(dev).load_state_dict(mapped)
    torch.testing.assert_close(fresh[2].weight.cpu(), model[0].weight.cpu())


def test_cpu_checkpoint_loads_into_a_lazy_model(dev):
    eager = _tied()
    buf = io.BytesIO()
    torch.save(eager.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf, map_location=lazy_torch.device())
    model = torch.nn.Sequential(torch.nn.Embedding(7, 4), torch.nn.Tanh(),
                                torch.nn.Linear(4, 7, bias=False)).to(dev)
    model.load_state_dict(state)
    torch.testing.assert_close(model[0].weight.cpu(), eager[0].weight.detach())


@pytest.mark.parametrize("where", ["device", "str", "dict", "default_cpu"])
def test_cpu_checkpoint_maps_to_the_lazy_device_like_cuda(dev, where):
    """``map_location`` naming the lazy device gives lazy tensors (as "cuda" gives CUDA
    ones), with the file's aliasing kept: a view saved beside its base is still a view."""
    base = torch.arange(12.0).reshape(3, 4)
    saved = {"base": base, "row": base[1], "ids": torch.arange(5), "p": torch.nn.Parameter(
        torch.ones(2))}
    buf = io.BytesIO()
    torch.save(saved, buf)
    buf.seek(0)
    location = {"device": lazy_torch.device(), "str": "lazy", "dict": {"cpu": "lazy:0"},
                "default_cpu": None}[where]
    loaded = torch.load(buf, map_location=location)
    want = dev if where != "default_cpu" else torch.device("cpu")
    assert all(v.device == want for v in loaded.values())
    for k, v in saved.items():
        assert loaded[k].dtype == v.dtype and loaded[k].shape == v.shape
        torch.testing.assert_close(loaded[k].detach().cpu(), v.detach())
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad
    with torch.no_grad():
        loaded["row"][0] = -1.0  # a write through the loaded view reaches the loaded base
    assert loaded["base"][1, 0].item() == -1.0


def test_lazy_checkpoint_to_cpu_by_callable(dev):
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0).to(dev)}, buf)
    buf.seek(0)
    loaded = torch.load(buf, map_location=lambda storage, location: storage)
    assert type(loaded["w"]) is torch.Tensor and loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_sign_of_nan_and_negative_zero_is_eagers(dev):
    """Eager's real sign is (0 < x) - (x < 0): +0 for NaN and -0.0 (XLA's keeps them);
    found by tests/robustness/test_fuzz_extremes.py."""
    x = torch.tensor([float("nan"), -0.0, 0.0, -2.0, float("inf")])
    for dtype in (torch.float32, torch.float64, torch.float16):
        want = torch.sign(x.to(dtype))
        got = torch.sign(x.to(dtype).to(dev)).cpu()
        assert torch.equal(got, want) and torch.equal(got.signbit(), want.signbit())
    assert torch.equal(torch.sgn(x.to(dev)).cpu(), torch.sgn(x))


@pytest.mark.parametrize("op", [lambda t: t.fill_(-1), lambda t: t.clamp(-1, 1),
                                lambda t: torch.full_like(t, -3), lambda t: t.clamp(min=-7),
                                lambda t: t.fill_(-256), lambda t: t.clamp(-255, 300)])
def test_negative_python_int_wraps_into_unsigned_like_eager(dev, op):
    """Eager wraps a Python int in [-max, 0) into an unsigned dtype (c10's checked
    conversion) and raises beyond; found by tests/robustness/test_fuzz_extremes.py."""
    x = torch.tensor([0, 3, 255], dtype=torch.uint8)
    want = _outcome(lambda: op(x.clone()))
    got = _outcome(lambda: op(x.clone().to(dev)))
    assert (got is want) if isinstance(want, type) else torch.equal(got, want)


def test_abs_of_unsigned_compiles(dev):
    """XLA's abs rejects unsigned types; eager's abs of one is the identity (found by
    tests/robustness/test_fuzz_extremes.py)."""
    x = torch.tensor([0, 3, 255], dtype=torch.uint8)
    assert torch.equal(torch.abs(x.to(dev) * 1).cpu(), x)


# -- differential fuzzing of the classes above ------------------------------------------------

INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
SCALAR_OPS = [lambda t, s: t + s, lambda t, s: s - t, lambda t, s: t * s,
              lambda t, s: t // s, lambda t, s: t % s, lambda t, s: t.mul_(s),
              lambda t, s: torch.where(t > 0, t, s), lambda t, s: t.fill_(s)]
INDEX_OPS = [lambda x, i: torch.gather(x, 1, i.reshape(-1, 1)[: x.shape[0]]),
             lambda x, i: x.index_select(0, i), lambda x, i: x[i],
             lambda x, i: F.embedding(i, x), lambda x, i: torch.take(x, i),
             lambda x, i: F.cross_entropy(x[: i.numel()], i[: x.shape[0]]),
             lambda x, i: x.clone().index_add_(0, i, torch.ones(i.numel(), x.shape[1],
                                                                device=x.device))]


def _outcome(fn):
    try:
        out = fn()
        return out.cpu() if isinstance(out, torch.Tensor) else out  # the barrier
    except Exception as e:  # noqa: BLE001 - the exception type is the outcome
        return type(e)


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis.given(dtype=st.sampled_from(INT_DTYPES), op=st.sampled_from(SCALAR_OPS),
                  scalar=st.one_of(st.integers(-2 ** 70, 2 ** 70),
                                   st.sampled_from([-129, 128, 255, 256, 40000, -2 ** 31 - 1,
                                                    2 ** 63 - 1, 2 ** 64])),
                  seed=st.integers(0, 1000))
def test_fuzz_python_int_operands(dtype, op, scalar, seed):
    dev = lazy_torch.device()
    values = torch.randint(-100, 100, (5,), generator=torch.Generator().manual_seed(seed))
    base = values.to(dtype)
    if scalar == 0 and op in SCALAR_OPS[3:5]:
        scalar = 7
    expected = _outcome(lambda: op(base.clone(), scalar))
    got = _outcome(lambda: op(base.clone().to(dev), scalar))
    if isinstance(expected, type):
        assert got is expected, (expected, got)
    else:
        assert not isinstance(got, type), got
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis.given(op=st.sampled_from(INDEX_OPS), rows=st.integers(1, 5),
                  index=st.lists(st.integers(-8, 8), min_size=1, max_size=5),
                  lazy_index=st.booleans())
def test_fuzz_index_ranges(op, rows, index, lazy_index):
    dev = lazy_torch.device()
    x = torch.arange(rows * 3.0).reshape(rows, 3)
    i = torch.tensor(index)
    expected = _outcome(lambda: op(x.clone(), i))
    lazy_i = ((i + 1).to(dev) - 1) if lazy_index else i.to(dev)
    got = _outcome(lambda: op(x.to(dev), lazy_i))
    if isinstance(expected, type):
        assert got is expected, (expected, got)
    else:
        assert not isinstance(got, type), got
        torch.testing.assert_close(got, expected)


@hypothesis.settings(max_examples=20, deadline=None, derandomize=True)
@hypothesis.given(steps=st.lists(st.sampled_from(["half", "bfloat16", "double", "float",
                                                  "to_f16", "to_lazy"]), min_size=1,
                                 max_size=3))
def test_fuzz_module_conversions(steps):
    dev = lazy_torch.device()
    convert = {"half": lambda m: m.half(), "bfloat16": lambda m: m.bfloat16(),
               "double": lambda m: m.double(), "float": lambda m: m.float(),
               "to_f16": lambda m: m.to(torch.float16), "to_lazy": lambda m: m}
    models = []
    for device in ("cpu", dev):
        model = _tied().to(device)
        for step in steps:
            model = convert[step](model)
        models.append(model)
    eager, lazy = models
    assert len(list(lazy.parameters())) == len(list(eager.parameters())) == 1
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        assert pl.dtype == pe.dtype and lazy_torch.core(pl).dtype == TO_NP[pe.dtype]
        torch.testing.assert_close(pl.detach().cpu(), pe.detach())


def test_index_add_dtype_mismatch_raises_and_leaves_no_check_behind(dev):
    target = torch.zeros(3, 2, dtype=torch.int64)
    bad = torch.tensor([5])
    with pytest.raises(RuntimeError):
        target.clone().index_add_(0, bad, torch.ones(1, 2))  # float into int64: eager raises
    with pytest.raises(RuntimeError):
        target.to(dev).index_add_(0, _index_maker(dev)([5]), torch.ones(1, 2).to(dev))
    assert (target.to(dev) + 1).sum().item() == 6  # no stale index error at this barrier


@pytest.mark.parametrize("exponent", ["tensor", "complex64", "host complex", "host int"])
def test_complex_zero_base_powers_like_eager(dev, exponent):
    """PyTorch's complex ``pow`` is C's ``cpow``: ``0 ** z`` is 0 for ``Re z > 0``, inf+nan j
    for ``Re z < 0``, nan for ``Re z == 0``; XLA's ``pow`` gives nan, nan and 1. A host
    integer exponent takes eager's repeated-squaring shortcut (``0 ** 0`` is 1 there)."""
    base = torch.tensor([0j, 0j, 0j, 0j, 0j, 1 + 1j])
    exps = torch.tensor([1 + 1j, 2, -1 + 1j, 1j, 0, 0.5 - 1j])
    compute = {"tensor": lambda b: b ** exps.to(b.device),
               "complex64": lambda b: b.to(torch.complex64) ** exps.to(b.device, torch.complex64),
               "host complex": lambda b: b ** (-1 + 2j), "host int": lambda b: b ** 0}[exponent]
    eager, lazy = compute(base), compute(base.to(dev)).cpu()
    assert lazy.dtype == eager.dtype
    torch.testing.assert_close(lazy, eager, equal_nan=True)


@pytest.mark.parametrize("fn", [torch.vdot, torch.linalg.vecdot, torch.dot, torch.inner])
def test_complex_dot_products_conjugate_as_eager(fn):
    """``vdot``/``linalg.vecdot`` conjugate their first operand (``dot``/``inner`` do not);
    vdot shared dot's lowering and silently skipped the conjugate."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, dtype=torch.complex64, generator=g)
    b = torch.randn(5, dtype=torch.complex64, generator=g)
    dev = lazy_torch.device()
    torch.testing.assert_close(fn(a.to(dev), b.to(dev)).cpu(), fn(a, b))
    real = torch.randn(5, generator=g)
    torch.testing.assert_close(fn(real.to(dev), real.to(dev)).cpu(), fn(real, real))
