"""Debugging tools on real frontend programs: storm advice for an AdamW loop, the
debug entries, verify through lazy_torch, and each frontend's DeviceLoader."""

import sys

import numpy as np
import pytest

import lazycore as lc

torch = pytest.importorskip("torch")
lazy_torch = pytest.importorskip("lazy_torch")


def _line() -> int:
    return sys._getframe(1).f_lineno


@pytest.mark.parametrize("optimizer", [torch.optim.AdamW, torch.optim.SGD])
def test_storm_advice_for_a_varying_batch_names_the_dim_whatever_the_optimizer(optimizer):
    torch.manual_seed(0)
    dev = lazy_torch.device()
    model = torch.nn.Linear(4, 2).to(dev)
    opt = optimizer(model.parameters(), lr=0.01)
    lc.diagnostics.reset()
    for n in (3, 5, 7, 9, 11, 13):
        x = torch.ones(n, 4, device=dev)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        lazy_torch.sync(); site = f"{__file__}:{_line()}"  # noqa: E702
    text = lc.diagnostics.summary()
    assert f"at {site}" in text
    assert "shape varies in dim 0 (sizes" in text and "pad or bucket it" in text


def test_debug_entries_of_every_frontend_take_their_tensors():
    x = torch.ones(3, device=lazy_torch.device())
    y = torch.exp(x) + 1
    assert "exp" in lc.debug.ir_text(y) and "exp" in lc.debug.ir_text([y, x])
    assert lc.debug.ir_dot(y).startswith("digraph")
    assert lazy_torch.debug.ir_text(y) == lc.debug.ir_text([y])
    assert lazy_torch.debug.fusion_count(y) >= 1
    assert lazy_torch.__version__ == lc.__version__
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    t = tf.exp(ltf.constant([1.0, 2.0]))
    assert "exp" in ltf.debug.ir_text(t) and "exp" in lc.debug.ir_text(t)
    assert ltf.__version__ == lc.__version__


def test_verify_error_passes_through_lazy_torch(monkeypatch):
    import dataclasses

    from lazycore import lowering
    from lazycore.ops.registry import OPS

    real = lowering.to_function

    def buggy(program):
        saved = OPS["exp"]
        OPS["exp"] = dataclasses.replace(saved, lower=lambda x: saved.lower(x) + 1e-3)
        try:
            return real(program)
        finally:
            OPS["exp"] = saved

    monkeypatch.setattr(lowering, "to_function", buggy)
    x = torch.linspace(0, 1, 4, device=lazy_torch.device())
    with lc.verify():
        y = torch.exp(x) * 2; line = _line()  # noqa: E702
        with pytest.raises(RuntimeError) as info:  # torch users' except clauses catch it
            y.sum().item()
    assert isinstance(info.value, lc.VerifyError)
    assert info.value.mismatch.op == "exp"
    assert info.value.site == f"{__file__}:{line}"
    lc.verify.clear()


def test_torch_device_loader_over_a_dataloader():
    data = torch.utils.data.TensorDataset(torch.arange(20.0).reshape(10, 2),
                                          torch.arange(10))
    loader = torch.utils.data.DataLoader(data, batch_size=3)
    lc.metrics.reset()
    seen = []
    w = torch.zeros(2, device=lazy_torch.device())
    for x, y in lazy_torch.DeviceLoader(loader, batches_per_execution=2):
        assert x.device.type == "lazy" and y.device.type == "lazy"
        w = w + x.sum(0)
        seen.append((x.cpu().clone(), y.cpu().clone()))
    assert len(seen) == 4
    torch.testing.assert_close(torch.cat([s[0] for s in seen]), torch.arange(20.0).reshape(10, 2))
    torch.testing.assert_close(torch.cat([s[1] for s in seen]), torch.arange(10))
    torch.testing.assert_close(w.cpu(), torch.arange(20.0).reshape(10, 2).sum(0))
    assert lc.metrics.counters()["sync::mark_step"] == 2  # after batch 2 and at the end


def test_tf_device_loader_over_a_tf_data_dataset():
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    ds = tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(12, dtype=np.float32).reshape(6, 2), "name": [b"a"] * 6}).batch(2)
    out = []
    for batch in ltf.DeviceLoader(ds, batches_per_execution=3):
        assert ltf.is_lazy(batch["x"]) and not ltf.is_lazy(batch["name"])
        out.append(tf.reduce_sum(batch["x"] * 2.0, axis=1).numpy())
    np.testing.assert_allclose(np.concatenate(out),
                               np.arange(12, dtype=np.float32).reshape(6, 2).sum(1) * 2)


def test_numpy_device_loader():
    lnp = pytest.importorskip("lazy_numpy")
    batches = [(np.full(2, i, np.float64), i) for i in range(5)]
    got = [(float(np.sum(a)), i) for a, i in lnp.DeviceLoader(batches)]
    assert got == [(2.0 * i, i) for i in range(5)]


def test_verify_is_quiet_on_a_real_training_step():
    """No false alarm on what users run: an MLP's forward, cross-entropy, backward and
    AdamW update (fused, with donation off under verify) match op by op."""
    torch.manual_seed(0)
    dev = lazy_torch.device()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(),
                                torch.nn.LayerNorm(16), torch.nn.Linear(16, 3)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(4, 8).to(dev), torch.tensor([0, 2, 1, 0]).to(dev)
    lc.verify.clear()
    with lc.verify():
        for _ in range(2):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            lazy_torch.sync()
        final = loss.item()
    assert lc.verify.reports() == [] and np.isfinite(final)
    assert lc.metrics.counters()["verified_programs"] >= 2
