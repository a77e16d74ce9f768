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


def to_cpu(x):
    return x.cpu() if isinstance(x, torch.Tensor) else x


def pytest_configure(config):
    config.addinivalue_line("markers", "opinfo: the OpInfo sweep (deselect with -m 'not opinfo')")
