"""Idioms of PyTorch programs written by others, run unchanged on CPU and on the lazy device
with the same seeds: values, dtypes, gradients, parameters after the optimizer steps and
exception types must agree, with no CPU fallback unless named."""

from __future__ import annotations

import re

import pytest
import torch

import lazy_torch
import lazycore as lc


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _fallbacks():
    return {k for k, v in lc.metrics.counters().items() if k.startswith("fallback::") and v}


@pytest.mark.parametrize("values,bins,lo,hi", [
    (torch.randn(1000, generator=_gen(0)) * 3, 7, -2.3, 1.7),
    (torch.tensor([0., 1, 2, 3, 4, float("nan"), -1, 5, 4]), 4, 0, 4),  # edges, NaN, outside
    (torch.linspace(0, 1, 1001), 10, 0, 1),  # values on the bin edges
    (torch.rand(500, generator=_gen(1)).half() * 3, 6, 0.1, 2.9),  # counts exact in float16
    (torch.randn(4, 5, generator=_gen(2)).double(), 3, -1, 1),
])
def test_histc_bins_as_eager(values, bins, lo, hi):
    lc.metrics.reset()
    got = torch.histc(values.to(lazy_torch.device()), bins, lo, hi).cpu()
    assert not _fallbacks()
    expected = torch.histc(values, bins, lo, hi)
    assert got.dtype == expected.dtype and torch.equal(got, expected)


def test_histc_of_integers_counts_as_cuda():
    """transformers' MoE routers call ``histc`` on int32 expert ids off the CPU (CPU
    PyTorch has no integer histc): the counts of the same values as floats, in int32."""
    ids = torch.randint(0, 4, (40,), generator=_gen(3))
    for hi in (3, 4):
        got = torch.histc(ids.int().to(lazy_torch.device()), 4, 0, hi).cpu()
        assert got.dtype == torch.int32
        assert torch.equal(got, torch.histc(ids.float(), 4, 0, hi).int())


@pytest.mark.parametrize("bins,lo,hi", [(0, 0, 1), (4, 1, 0), (4, 0, float("inf")),
                                         (4, float("nan"), 1)])
def test_histc_errors_as_eager(bins, lo, hi):
    x = torch.randn(10, generator=_gen(4))
    with pytest.raises(RuntimeError) as expected:
        torch.histc(x, bins, lo, hi)
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        torch.histc(x.to(lazy_torch.device()), bins, lo, hi)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shapes,ends", [
    (((7, 8), (3, 8, 8)), [2, 2, 7]),  # rows of a by group (an empty group), a MoE layer
    (((3, 4, 8), (8, 8)), [2, 2, 8]),  # columns of b by group
    (((8, 8), (8, 8)), [2, 5, 8]),  # the contraction by group: one product each
], ids=["2d3d", "3d2d", "2d2d"])
def test_grouped_mm_and_gradients(shapes, ends, dtype):
    a, b = (torch.randn(s, generator=_gen(i)).to(dtype) for i, s in enumerate(shapes))
    offs = torch.tensor(ends, dtype=torch.int32)
    weight = torch.randn(torch._grouped_mm(a, b, offs=offs).shape, generator=_gen(5)).to(dtype)
    results = []
    lc.metrics.reset()
    for device in ("cpu", lazy_torch.device()):
        x, y = (t.to(device).requires_grad_() for t in (a.clone(), b.clone()))
        out = torch.nn.functional.grouped_mm(x, y, offs=offs.to(device))
        (out * weight.to(device)).sum().backward()
        results.append([out.detach().cpu(), x.grad.cpu(), y.grad.cpu()])
    assert not _fallbacks()
    for got, expected in zip(*reversed(results), strict=True):
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("resize", [dict(size=(7, 9)), dict(scale_factor=1.5)])
def test_bicubic_resize_gradient(resize, align_corners):
    """DINOv2 resizes its position embeddings bicubically to the image's patch grid: the
    backward is the lazy VJP of the forward (it ran eagerly, a fallback per step)."""
    x, weight = torch.randn(1, 3, 5, 6, generator=_gen(0)), torch.randn(1, 3, 7, 9, generator=_gen(1))
    results = []
    lc.metrics.reset()
    for device in ("cpu", lazy_torch.device()):
        leaf = x.clone().to(device).requires_grad_()
        out = torch.nn.functional.interpolate(leaf, mode="bicubic", align_corners=align_corners,
                                              **resize)
        (out * weight.to(device)).sum().backward()
        results.append([out.detach().cpu(), leaf.grad.cpu()])
    assert not _fallbacks()
    for got, expected in zip(*reversed(results), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,pad", [((2, 3, 7), (2, 3)), ((1, 2, 4, 5), (2, 1, 1, 2)),
                                       ((1, 2, 3, 4, 5), (1, 2, 0, 1, 2, 1))])
def test_replication_pad_gradient(shape, pad):
    """``nn.ReplicationPad*d`` in a generator: the backward is the lazy VJP of the forward
    (it ran eagerly, a fallback per step)."""
    x = torch.randn(shape, generator=_gen(0))
    weight = torch.randn(torch.nn.functional.pad(x, pad, mode="replicate").shape, generator=_gen(1))
    results = []
    lc.metrics.reset()
    for device in ("cpu", lazy_torch.device()):
        leaf = x.clone().to(device).requires_grad_()
        out = torch.nn.functional.pad(leaf, pad, mode="replicate")
        (out * weight.to(device)).sum().backward()
        results.append([out.detach().cpu(), leaf.grad.cpu()])
    assert not _fallbacks()
    for got, expected in zip(*reversed(results), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["int64 offsets", "float64", "mixed dtypes", "groups",
                                  "contraction", "no offsets", "3d x 3d with offsets"])
def test_grouped_mm_errors_as_eager(case):
    a, b = torch.randn(7, 8, generator=_gen(0)), torch.randn(3, 8, 8, generator=_gen(1))
    offs = torch.tensor([2, 2, 7], dtype=torch.int32)
    a, b, offs = {"int64 offsets": (a, b, offs.long()), "float64": (a.double(), b.double(), offs),
                  "mixed dtypes": (a, b.bfloat16(), offs), "groups": (a, b[:2], offs),
                  "contraction": (a[:, :4], b, offs), "no offsets": (a, b, None),
                  "3d x 3d with offsets": (a.expand(3, 7, 8), b, offs)}[case]
    with pytest.raises(RuntimeError) as expected:
        torch._grouped_mm(a, b, offs=offs)
    lazy = [t if t is None else t.to(lazy_torch.device()) for t in (a, b, offs)]
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        torch._grouped_mm(lazy[0], lazy[1], offs=lazy[2])
