"""Shared fixtures for the lazy_torch tests."""

from __future__ import annotations

import pytest
import torch

import lazy_torch
import lazycore as lc


@pytest.fixture
def dev():
    return lazy_torch.device()


@pytest.fixture
def counters():
    """Read the core's counters (a fresh dict each call)."""
    return lc.metrics.counters


@pytest.fixture
def dispatch_spy(monkeypatch):
    """``dispatch_spy()`` starts recording every op that reaches
    ``LazyTensor.__torch_dispatch__`` into the list it returns (a lowering that should
    need no decomposition dispatches only itself)."""
    from lazy_torch._tensor import LazyTensor

    def start() -> list:
        seen = []
        original = LazyTensor.__torch_dispatch__.__func__

        def spy(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return original(cls, func, types, args, kwargs)

        monkeypatch.setattr(LazyTensor, "__torch_dispatch__", classmethod(spy))
        return seen
    return start


def to_cpu(x):
    return x.cpu() if isinstance(x, torch.Tensor) else x


def pytest_configure(config):
    config.addinivalue_line("markers", "opinfo: the OpInfo sweep (deselect with -m 'not opinfo')")
