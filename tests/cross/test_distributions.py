"""Sampling composites against the host frameworks' eager samplers.

Streams are lazycore's own (not the frameworks' bits), so a sampler is checked by its
distribution: a two-sample Kolmogorov-Smirnov test of a lazy draw against PyTorch's and
NumPy's eager draws, and a one-sample test against the exact CDF, with fixed seeds (the
p-values are deterministic). A wrong rate, a scale used as a rate, or a transform that
is not the inverse CDF fails them. Invalid arguments raise eager's exception type.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

import lazy_torch

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
