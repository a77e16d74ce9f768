"""Bad input raises PyTorch's exception type at the call; dtype promotion is PyTorch's."""

from __future__ import annotations

import itertools

import pytest
import torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]


def _sample(dtype, shape=(3,)):
    return (torch.arange(1, 1 + int(torch.tensor(shape).prod())).reshape(shape) % 3).to(dtype)


def test_binary_promotion_matches_eager(dev):
    """Result dtypes come from shape/dtype rules (no sync); values checked on a subset."""
    for a, b in itertools.product(DTYPES, DTYPES):
        x, y = _sample(a), _sample(b)
        for fn in (torch.add, torch.mul, torch.maximum, torch.eq, torch.div, torch.sub):
            try:
                expected = fn(x, y)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    fn(x.to(dev), y.to(dev))
                continue
            got = fn(x.to(dev), y.to(dev))
            assert got.dtype == expected.dtype, (fn, a, b)
    for a, b in [(torch.int32, torch.float16), (torch.uint8, torch.int8),
                 (torch.bfloat16, torch.float16), (torch.bool, torch.int64)]:
        x, y = _sample(a), _sample(b)
        torch.testing.assert_close((x.to(dev) * y.to(dev)).cpu(), x * y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1j])
def test_scalar_and_zero_dim_promotion(dtype, scalar, dev):
    x = _sample(dtype)
    if dtype == torch.float16 and scalar == 1j:
        pytest.skip("complex32 (ComplexHalf) is not supported on the lazy device")
    expected = x * scalar
    got = x.to(dev) * scalar
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got.cpu(), expected)
    zero_dim = torch.tensor(3.5, dtype=torch.float64)
    assert (x.to(dev) + zero_dim.to(dev)).dtype == (x + zero_dim).dtype
    assert (x.to(dev) / 2).dtype == (x / 2).dtype


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float16, torch.bfloat16])
def test_unary_int_to_float(dtype, dev):
    x = _sample(dtype)
    fns = (torch.sqrt, torch.exp, torch.sigmoid) + (() if dtype == torch.bool else (torch.abs,))
    for fn in fns:
        expected = fn(x)
        got = fn(x.to(dev))
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu(), expected, rtol=1e-2, atol=1e-2)


def _raises_like_eager(fn, *tensors, dev):
    with pytest.raises(Exception) as eager:
        fn(*tensors)
    with pytest.raises(type(eager.value)) as lazy:
        fn(*[t.to(dev) for t in tensors])
    return eager.value, lazy.value


def test_matmul_shape_mismatch(dev):
    eager, lazy = _raises_like_eager(torch.matmul, torch.ones(2, 3), torch.ones(4, 5), dev=dev)
    assert isinstance(lazy, RuntimeError) and "2x3" in str(lazy) and "4x5" in str(lazy)
    _raises_like_eager(torch.mm, torch.ones(2, 3), torch.ones(2, 3), dev=dev)
    _raises_like_eager(torch.bmm, torch.ones(2, 2, 3), torch.ones(2, 2, 3), dev=dev)


def test_add_shape_mismatch(dev):
    eager, lazy = _raises_like_eager(torch.add, torch.ones(2, 3), torch.ones(4), dev=dev)
    assert isinstance(lazy, RuntimeError)
    assert "(2, 3)" in str(lazy) or "[2, 3]" in str(lazy)


def test_dim_out_of_range(dev):
    _, lazy = _raises_like_eager(lambda t: t.sum(5), torch.ones(2, 3), dev=dev)
    assert isinstance(lazy, IndexError)
    _raises_like_eager(lambda t: t.softmax(3), torch.ones(2, 3), dev=dev)
    _raises_like_eager(lambda t: t.transpose(0, 4), torch.ones(2, 3), dev=dev)
    _raises_like_eager(lambda t: t[5], torch.ones(2, 3), dev=dev)


def test_wrong_index_dtype(dev):
    _, lazy = _raises_like_eager(lambda t, i: t[i], torch.ones(4), torch.tensor([0.0, 1.0]),
                                 dev=dev)
    assert isinstance(lazy, IndexError)


def test_error_raised_at_the_call_not_at_sync(dev, counters):
    x = torch.ones(2, 3, device=dev)
    syncs = counters()["syncs"]
    with pytest.raises(RuntimeError):
        x @ torch.ones(2, 3, device=dev)
    assert counters()["syncs"] == syncs


def test_misc_errors(dev):
    _raises_like_eager(lambda t: t.view(5), torch.ones(2, 3), dev=dev)
    _raises_like_eager(lambda t: torch.cat([t, t.reshape(3, 2)], 0), torch.ones(2, 3), dev=dev)
    _raises_like_eager(lambda t: t.expand(4, 4), torch.ones(2, 3), dev=dev)
    _raises_like_eager(lambda t: t.mean(), torch.ones(3, dtype=torch.int64), dev=dev)
    _raises_like_eager(lambda a, b: torch.nn.functional.linear(a, b), torch.ones(2, 3),
                       torch.ones(4, 2), dev=dev)
