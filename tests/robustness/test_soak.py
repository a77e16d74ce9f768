"""Soak: many training steps keep host memory, live buffers and the cache flat."""

import os
import resource

import pytest

torch = pytest.importorskip("torch")
lazy_torch = pytest.importorskip("lazy_torch")

import jax  # noqa: E402

import lazycore as lc  # noqa: E402

# CI: 3000 steps (the handle, device-array and cache counts are exact at any length; RSS
# growth over 2700 steps is still bounded); ``nox -s soak`` runs the long profile
STEPS = int(os.environ.get("SOAK_STEPS", "3000"))
WARMUP = 300


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def test_training_soak_is_flat(capsys):
    dev = lazy_torch.device()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, 32).to(dev)
    y = torch.randint(0, 10, (16,)).to(dev)
    samples = {}
    for step in range(STEPS):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lazy_torch.sync()
        if step in (WARMUP, STEPS - 1):
            lc.wait()
            samples[step] = (_rss_mb(), len(lc.runtime.live_tensors()),
                             len(jax.live_arrays()), lc.cache.size())
    first, last = samples[WARMUP], samples[STEPS - 1]
    with capsys.disabled():
        print(f"\nsoak {STEPS} steps: RSS {first[0]:.1f} -> {last[0]:.1f} MB, live handles "
              f"{first[1]} -> {last[1]}, live device arrays {first[2]} -> {last[2]}, "
              f"cache entries {first[3]} -> {last[3]}")
    assert last[1] <= first[1] and last[2] <= first[2] + 2
    assert last[3] <= lc.settings.cache_size and last[3] == first[3]
    assert last[0] - first[0] < 64, "host memory grew by more than 64 MB"
    assert float(loss.item()) < 2.5
