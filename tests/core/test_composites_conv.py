"""``conv``'s patches + matmul path (``small_map_patches``) against XLA's convolution, with
asymmetric pads, strides, dilations and 1-3 spatial dims; and ``bias`` in both layouts."""

from __future__ import annotations

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore.composites.conv import patches_win

R = np.random.default_rng(5)

CASES = [  # (input, weight, stride, padding pairs, dilation)
    ((2, 64, 5, 5), (3, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((1, 32, 6, 7), (2, 32, 3, 2), (2, 1), ((0, 2), (1, 0)), (1, 2)),
    ((2, 70, 9), (4, 70, 3), (2,), ((1, 2),), (1,)),
    ((1, 8, 4, 4, 4), (3, 8, 2, 2, 2), (1, 1, 1), ((0, 0),) * 3, (1, 1, 1)),
]


def _ops(t):
    seen, stack, names = set(), [t.node], set()
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            names.add(node.op)
            stack.extend(node.operands)
    return names


@pytest.mark.parametrize("case", CASES, ids=str)
def test_patches_path_matches_xla_convolution(case):
    xs, ws, stride, pad, dil = case
    x, w, b = (lc.asarray(R.standard_normal(s)) for s in (xs, ws, ws[:1]))
    kw = dict(stride=stride, padding=pad, dilation=dil, bias=b)
    patched = nm.conv(x, w, small_map_patches=True, **kw)
    plain = nm.conv(x, w, **kw)
    out = tuple(patched.shape[2:])
    assert ("conv_general_dilated" not in _ops(patched)) == patches_win(xs, ws, out)
    assert "conv_general_dilated" in _ops(plain)
    np.testing.assert_allclose(lc.to_numpy(patched), lc.to_numpy(plain), rtol=1e-10, atol=1e-12)


def test_bias_is_per_output_channel_in_both_layouts():
    x, w, b = R.standard_normal((1, 3, 5, 5)), R.standard_normal((2, 3, 3, 3)), np.array([0.5, -2.0])
    first = lc.to_numpy(nm.conv(lc.asarray(x), lc.asarray(w), padding="SAME", bias=lc.asarray(b)))
    bare = lc.to_numpy(nm.conv(lc.asarray(x), lc.asarray(w), padding="SAME"))
    np.testing.assert_allclose(first, bare + b[None, :, None, None], rtol=1e-12)
    last = lc.to_numpy(nm.conv(lc.asarray(x.transpose(0, 2, 3, 1).copy()),
                               lc.asarray(w.transpose(2, 3, 1, 0).copy()), padding="SAME",
                               channels_last=True, bias=lc.asarray(b)))
    np.testing.assert_allclose(last.transpose(0, 3, 1, 2), first, rtol=1e-10)
