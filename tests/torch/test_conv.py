"""Convolutions on the lazy device against eager CPU: both formulations the lowering
chooses between (XLA's convolution; patches + matmul for small output maps), values and
the gradients of input, weight and bias."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lazy_torch
from lazycore.composites.conv import patches_win

# (input shape, weight shape, stride, padding, dilation, groups)
CASES = [
    ((2, 64, 5, 5), (6, 64, 3, 3), 1, 1, 1, 1),
    ((2, 64, 6, 6), (6, 64, 3, 3), 2, 1, 1, 1),
    ((2, 16, 7, 7), (4, 16, 3, 3), 1, 2, 2, 1),
    ((2, 70, 9), (5, 70, 3), 2, 1, 1, 1),
    ((1, 8, 4, 4, 4), (3, 8, 2, 2, 2), 1, 0, 1, 1),
    ((2, 64, 6, 6), (8, 64, 1, 1), 2, 0, 1, 1),
    ((2, 3, 12, 12), (4, 3, 3, 3), 1, 1, 1, 1),  # few channels: XLA's convolution
    ((2, 8, 5, 5), (8, 4, 3, 3), 1, 1, 1, 2),  # groups: XLA's convolution
]


def _ops_under(t):
    seen, stack, ops = set(), [lazy_torch.core(t).node], set()
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            ops.add(node.op)
            stack.extend(node.operands)
    return ops


@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv_matches_eager(case, dev):
    xs, ws, stride, padding, dilation, groups = case
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(xs) - 2]
    torch.manual_seed(0)
    x = torch.randn(xs, dtype=torch.float64, requires_grad=True)
    w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
    b = torch.randn(ws[0], dtype=torch.float64, requires_grad=True)
    lazy = [t.detach().to(dev).requires_grad_() for t in (x, w, b)]
    outs = []
    for args in ((x, w, b), lazy):
        y = fn(*args, stride=stride, padding=padding, dilation=dilation, groups=groups)
        (y * y.detach().cos()).sum().backward()
        outs.append(y)
    out_size = tuple(outs[0].shape[2:])
    patches = groups == 1 and patches_win(xs, ws, out_size)
    assert ("conv_general_dilated" not in _ops_under(outs[1])) == patches
    torch.testing.assert_close(outs[1].cpu(), outs[0])
    for eager, lz in zip((x, w, b), lazy, strict=True):
        torch.testing.assert_close(lz.grad.cpu(), eager.grad)


def test_small_map_threshold_is_the_documented_one():
    assert patches_win((8, 512, 2, 2), (512, 512, 3, 3), (2, 2))
    assert not patches_win((8, 3, 64, 64), (64, 3, 7, 7), (32, 32))
    assert not patches_win((8, 64, 16, 16), (64, 64, 3, 3), (16, 16))
