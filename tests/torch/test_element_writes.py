"""``t[i, j] = scalar`` held in the storage (``_tensor.hold_element``) behaves as eager:
values through views and aliases, dtype casts and conversion errors, IndexError,
autograd's leaf errors and version counter -- and records no graph node per write."""

from __future__ import annotations

import pytest
import torch

import lazy_torch
import lazycore as lc


def run_both(fn, dev):
    """``fn(make)`` eagerly and lazily; the results (tensors) compared exactly."""
    cpu = fn(lambda t: t.clone())
    lazy = fn(lambda t: t.clone().to(dev))
    cpu, lazy = (cpu, lazy) if isinstance(cpu, tuple) else ((cpu,), (lazy,))
    for c, z in zip(cpu, lazy, strict=True):
        if isinstance(c, torch.Tensor):
            assert z.device.type == "lazy" and z.dtype == c.dtype and z.shape == c.shape
            torch.testing.assert_close(z.cpu(), c, rtol=0, atol=0, equal_nan=True)
        else:
            assert z == c


def _loop(make):
    u = make(300 * torch.ones(6, 5, dtype=torch.float64))
    for i in range(6):
        for j in range(5):
            if (i - 3) ** 2 + (j - 2) ** 2 < 5:
                u[i, j] = 700
    u[-1, -2] = -1.5
    return u, u.sum(), u._version


def _views_and_aliases(make):
    x = make(torch.arange(12.0).reshape(3, 4))
    row, col, tr, alias = x[1], x[:, 2], x.t(), x.detach()
    row[3] = -1.0          # a view's write reaches the base and the other views
    tr[2, 0] = -2.0        # (x[0, 2])
    alias[2, 1] = -3.0
    x[2, 2] = -4.0
    flat = x.view(12)
    flat[11] = -5.0
    return x, row, col, tr, alias, flat, x._version, row._version


def _expanded(make):
    base = make(torch.zeros(3))
    e = base.expand(2, 3)
    e[1, 1] = 5.0  # both rows share the element
    return base, e


def _then_other_writes(make):
    x = make(torch.zeros(4, 4))
    x[0, 0] = 1.0
    x[1:3, 1] = 9.0       # a graph write after held ones: both kept, in order
    x[1, 1] = 2.0
    v = x[2:, 2:]
    v[0, 0] = 3.0
    v.add_(1)             # an in-place op on a view over held writes
    x[3, 3] = 4.0
    y = make(torch.zeros(2, 2))
    y[0, 0] = 1.0
    y.fill_(7.0)          # the whole storage replaced: the held write gone
    y[1, 0] = 2.0
    return x, y


def _zero_dim(make):
    s = make(torch.tensor(1.0))
    s[()] = 4.0
    return s


@pytest.mark.parametrize("prog", [_loop, _views_and_aliases, _expanded, _then_other_writes,
                                  _zero_dim], ids=lambda f: f.__name__)
def test_values_versions_like_eager(prog, dev):
    run_both(prog, dev)


CASTS = [(torch.int32, 2.7), (torch.int64, -2.7), (torch.uint8, -1), (torch.uint8, 255),
         (torch.float16, 1e6), (torch.bfloat16, 1.1), (torch.bool, 2), (torch.bool, 0.0),
         (torch.int8, True), (torch.float32, 1 << 40), (torch.complex64, 1 + 2j),
         (torch.complex128, 3), (torch.float64, float("nan")), (torch.float32, -0.0),
         (torch.int16, -32768)]


@pytest.mark.parametrize(("dtype", "value"), CASTS, ids=str)
def test_dtype_cast_like_eager(dtype, value, dev):
    def prog(make):
        t = make(torch.zeros(3, dtype=dtype))
        t[1] = value
        t[2] = value
        return t
    run_both(prog, dev)


ERRORS = [(torch.int32, 1e10), (torch.int32, float("nan")), (torch.float32, 1 + 2j),
          (torch.float32, 1e300), (torch.uint8, 300), (torch.int64, 1 << 70)]


@pytest.mark.parametrize(("dtype", "value"), ERRORS, ids=str)
def test_conversion_errors_like_eager(dtype, value, dev):
    for t in (torch.zeros(2, dtype=dtype), torch.zeros(2, dtype=dtype, device=dev)):
        with pytest.raises(Exception) as eager_or_lazy:
            t[5] = value  # out of range too: eager converts the value first
        if t.device.type == "cpu":
            expected = eager_or_lazy.type, str(eager_or_lazy.value)
    assert (eager_or_lazy.type, str(eager_or_lazy.value)) == expected
    assert t.cpu().tolist() == [0, 0]


@pytest.mark.parametrize("key", [(2, 0), (0, 3), (-3, 0), (0, -4), 5, (1, 1, 1)], ids=str)
def test_index_errors_like_eager(key, dev):
    caught = []
    for t in (torch.zeros(2, 3), torch.zeros(2, 3, device=dev)):
        with pytest.raises(IndexError) as e:
            t[key] = 1.0
        caught.append(str(e.value))
        assert t._version == 0
    assert caught[0] == caught[1]


def test_leaf_requiring_grad_raises_like_eager(dev):
    for device in ("cpu", dev):
        w = torch.zeros(2, 2, device=device, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w[0, 0] = 1.0
        with torch.no_grad():
            w[0, 1] = 2.0  # allowed without grad mode, as eager
        assert w._version == 1
        assert w.detach().cpu().tolist() == [[0.0, 2.0], [0.0, 0.0]]


def test_saved_tensor_modified_raises_like_eager(dev):
    for device in ("cpu", dev):
        x = torch.ones(3, device=device, requires_grad=True)
        c = torch.ones(3, device=device)
        y = (x * c).sum()
        c[0] = 5.0  # c was saved for x's gradient
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_write_into_non_leaf_keeps_gradients(dev):
    grads = []
    for device in ("cpu", dev):
        x = torch.arange(4.0, device=device, requires_grad=True)
        y = x * 2
        y[1] = 10.0  # CopySlices: no gradient through the overwritten element
        (y * y).sum().backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


def test_writes_record_one_scatter_not_a_node_each(dev):
    u = torch.zeros(40, 40, device=dev)
    lazy_torch.sync()
    before = lc.metrics.counters().get("traced_ops", 0)
    for i in range(40):
        for j in range(0, 40, 3):
            u[i, j] = float(i + j)
    assert lc.metrics.counters().get("traced_ops", 0) == before  # held, nothing traced
    total = u.sum().item()
    assert lc.metrics.counters().get("traced_ops", 0) - before < 20
    expected = torch.zeros(40, 40)
    for i in range(40):
        for j in range(0, 40, 3):
            expected[i, j] = float(i + j)
    assert total == expected.sum().item()


def test_held_writes_survive_a_sync(dev):
    u = torch.zeros(3, 3, device=dev)
    v = u[1:]
    u[2, 2] = 1.0
    lazy_torch.sync()
    v[0, 0] = 2.0
    lazy_torch.sync()
    assert u.cpu().tolist() == [[0, 0, 0], [2, 0, 0], [0, 0, 1]]
    assert v.cpu().tolist() == [[2, 0, 0], [0, 0, 1]]
