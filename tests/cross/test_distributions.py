"""Sampling composites against the host frameworks' eager samplers.

Streams are lazycore's own (not the frameworks' bits), so a sampler is checked by its
distribution: a two-sample Kolmogorov-Smirnov test of a lazy draw against PyTorch's,
TensorFlow's or NumPy's eager draws, and a one-sample test against the exact CDF, with fixed seeds (the
p-values are deterministic). A wrong rate, a scale used as a rate, or a transform that
is not the inverse CDF fails them. Invalid arguments raise eager's exception type.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
import torch
from scipy import stats

import lazy_tf as ltf
import lazy_torch
import lazycore as lc

N = 40_000


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("rate", [1.0, 0.25, 7.5])
def test_exponential_matches_eager_distributions(dtype, rate):
    lazy_torch.manual_seed(0)
    torch.manual_seed(0)
    x = torch.empty(N, dtype=dtype, device=lazy_torch.device()).exponential_(rate)
    assert x.dtype == dtype
    lazy = x.cpu().double().numpy()
    eager = torch.empty(N, dtype=dtype).exponential_(rate).double().numpy()
    host = np.random.default_rng(0).exponential(1 / rate, N)
    assert np.isfinite(lazy).all() and lazy.min() >= 0
    assert stats.ks_2samp(lazy, eager).pvalue > 1e-3
    assert stats.ks_2samp(lazy, host).pvalue > 1e-3
    assert stats.kstest(lazy, "expon", args=(0, 1 / rate)).pvalue > 1e-3


@pytest.mark.parametrize(("dtype", "rate"), [(torch.float32, 0.0), (torch.float32, -1.0),
                                             (torch.int64, 1.0), (torch.complex64, 1.0)])
def test_exponential_rejects_what_eager_rejects(dtype, rate):
    with pytest.raises(RuntimeError) as eager:
        torch.empty(3, dtype=dtype).exponential_(rate)
    with pytest.raises(RuntimeError) as lazy:
        torch.empty(3, dtype=dtype, device=lazy_torch.device()).exponential_(rate).cpu()
    assert str(lazy.value) == str(eager.value)


# -- truncated_normal: TF's truncated_normal, PyTorch's trunc_normal_ bounds --------------------
def _same_distribution(lazy, eager):
    return stats.ks_2samp(np.asarray(lazy, np.float64), np.asarray(eager, np.float64)).pvalue


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16],
                         ids=lambda d: d.name)
def test_truncated_normal_matches_tf_in_distribution(dtype):
    kw = {"mean": 1.0, "stddev": 2.0, "dtype": dtype, "seed": 3}
    tf.random.set_seed(11)
    eager = tf.random.truncated_normal([N], **kw)
    ltf.random.set_seed(11)
    lazy = ltf.random.truncated_normal([N], **kw)
    assert lazy.dtype == eager.dtype and lazy.shape == eager.shape
    values = lazy.numpy().astype(np.float64)
    assert values.min() >= -3.0 and values.max() <= 5.0  # within two stddevs, as eager
    assert _same_distribution(values, eager.numpy().astype(np.float64)) > 1e-3


@pytest.mark.parametrize(("low", "high"), [(-2.0, 2.0), (-1.0, 3.0), (0.5, 4.0)])
def test_truncated_normal_bounds_match_torch_trunc_normal(low, high):
    """``low``/``high`` are PyTorch's ``trunc_normal_(a=, b=)`` (lazy_torch runs that
    function as its ATen steps; the core's parametrisation is checked against it)."""
    torch.manual_seed(0)
    eager = torch.nn.init.trunc_normal_(torch.empty(N, dtype=torch.float64), a=low, b=high)
    key = lc.random.Generator(9).next_key()
    lazy = lc.to_numpy(lc.numeric.truncated_normal(key, (N,), np.float64, low=low,
                                                   high=high))
    assert lazy.min() >= low and lazy.max() <= high
    assert _same_distribution(lazy, eager.numpy()) > 1e-3


@pytest.mark.parametrize("draw", [
    lambda m, shape: m.random.normal(shape, mean=m.convert_to_tensor(np.zeros((2, 3), np.float32))),
    lambda m, shape: m.random.truncated_normal(
        shape, stddev=m.convert_to_tensor(np.ones((2, 1), np.float32))),
    lambda m, shape: m.random.uniform(shape, minval=m.convert_to_tensor(np.zeros((2, 1),
                                                                                 np.float32))),
    lambda m, shape: m.random.normal(shape, mean=m.convert_to_tensor(np.zeros(2, np.float32))),
    lambda m, shape: m.random.truncated_normal(shape, mean=m.convert_to_tensor(np.zeros(3))),
    lambda m, shape: m.random.uniform(shape, maxval=m.convert_to_tensor(np.int32(5))),
], ids=["mean-2x3", "stddev-2x1", "minval-2x1", "mean-not-broadcasting", "mean-float64",
        "maxval-int32"])
def test_random_arguments_broadcast_and_fail_as_tf(draw):
    """TF computes ``draw * stddev + mean`` with broadcasting both ways; a shape that does
    not broadcast, or another dtype, is its error type."""
    outcome = {}
    for name, module in (("eager", tf), ("lazy", ltf)):
        try:
            out = draw(module, [3])
            outcome[name] = (tuple(out.shape), out.dtype)
        except Exception as error:  # noqa: BLE001 - the exception type is the result
            outcome[name] = type(error)
    assert outcome["lazy"] == outcome["eager"]
