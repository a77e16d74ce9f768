"""Every frontend's ``mark_sharding`` on 8 simulated devices: the same results as one
device, one compile per distinct graph, and the collectives in the compiled HLO."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import lazycore as lc

STEPS = 3


# -- lazy_torch -----------------------------------------------------------------------

torch = pytest.importorskip("torch")
lazy_torch = pytest.importorskip("lazy_torch")
F = torch.nn.functional

def _torch_models():
    """tests/torch/models.py, loaded by path (tests/sharding has a models.py of its own)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch",
                        "models.py")
    spec = importlib.util.spec_from_file_location("_torch_test_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODELS


MODELS = _torch_models()

# Megatron-style tensor parallelism for TinyTransformer (torch Linear weights are [out, in])
TORCH_TP = {"layer.self_attn.in_proj_weight": ("model", None),
            "layer.self_attn.in_proj_bias": ("model",),
            "layer.self_attn.out_proj.weight": (None, "model"),
            "layer.linear1.weight": ("model", None), "layer.linear1.bias": ("model",),
            "layer.linear2.weight": (None, "model")}


def _torch_batch(kind, g):
    if kind == "mlp":
        return torch.randn(16, 16, generator=g), torch.randint(0, 5, (16,), generator=g)
    return torch.randint(0, 11, (8, 6), generator=g), torch.randint(0, 11, (8,), generator=g)


def train_torch(kind, mesh=None, param_specs=None):
    dev = lazy_torch.device()
    torch.manual_seed(0)
    model = MODELS[kind]().to(dev)
    for name, p in model.named_parameters():
        if mesh is not None and name in (param_specs or {}):
            lazy_torch.mark_sharding(p, mesh, param_specs[name])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)  # one graph per step: one compile
    g = torch.Generator().manual_seed(0)
    lc.metrics.reset()
    losses = []
    for _ in range(STEPS):
        x, y = (t.to(dev) for t in _torch_batch(kind, g))
        if mesh is not None:
            lazy_torch.mark_sharding(x, mesh, ("data",) + (None,) * (x.ndim - 1))
            lazy_torch.mark_sharding(y, mesh, ("data",))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lazy_torch.mark_step()
        losses.append(loss.item())
    return np.array(losses), lc.metrics.counters()["compiles"], model


@pytest.fixture(scope="module")
def torch_reference():
    return {kind: train_torch(kind) for kind in ("mlp", "transformer")}


@pytest.mark.parametrize("kind", ["mlp", "transformer"])
def test_torch_data_parallel(torch_reference, kind):
    ref_losses, ref_compiles, _ = torch_reference[kind]
    losses, compiles, _ = train_torch(kind, lc.Mesh((8,), ("data",)))
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert compiles == ref_compiles == 1  # one graph per step: one compile


def test_torch_transformer_tensor_parallel(torch_reference):
    ref_losses, ref_compiles, _ = torch_reference["transformer"]
    mesh = lc.Mesh((2, 4), ("data", "model"))
    losses, compiles, model = train_torch("transformer", mesh, TORCH_TP)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert compiles == ref_compiles == 1
    w = lazy_torch.core(model.layer.linear1.weight)
    assert w.device_array().sharding.shard_shape(w.shape) == (8, 16)  # still split


def test_torch_gradients_are_all_reduced():
    dev = lazy_torch.device()
    torch.manual_seed(0)
    model = MODELS["mlp"]().to(dev)
    x, y = (t.to(dev) for t in _torch_batch("mlp", torch.Generator().manual_seed(0)))
    mesh = lc.Mesh((8,), ("data",))
    lazy_torch.mark_sharding(x, mesh, ("data", None))
    F.cross_entropy(model(x), y).backward()
    grads = [lazy_torch.core(p.grad) for p in model.parameters()]
    hlo = lc.debug.hlo_text(grads)
    assert "all-reduce(" in hlo
    assert "f32[2,16]" in hlo.split("entry_computation_layout", 1)[1].splitlines()[0]


def test_torch_bad_spec_raises_runtime_error():
    x = torch.ones(6, 4).to(lazy_torch.device())
    with pytest.raises(RuntimeError):
        lazy_torch.mark_sharding(x, lc.Mesh((8,), ("data",)), ("data", None))


# -- lazy_numpy -----------------------------------------------------------------------

def test_numpy_program_with_a_sharded_array():
    lnp = pytest.importorskip("lazy_numpy")
    rng = np.random.default_rng(0)
    a_np, w_np = rng.normal(size=(16, 8)), rng.normal(size=(8, 4))
    mesh = lc.Mesh((4, 2), ("data", "model"))

    def program(xp, a, w):
        h = xp.tanh(a) @ w + 1.0
        return h, (h * h).sum(axis=0), xp.maximum(h, 0).mean()

    a = lnp.mark_sharding(lnp.asarray(a_np), mesh, ("data", None))
    w = lnp.asarray(w_np)
    h, s, m = program(np, a, w)
    text = lc.debug.sharding_text(h._t)  # pending: what XLA chose for it
    assert "per-device shape (4, 4)" in text
    assert "all-reduce" in lc.debug.hlo_text([s._t])  # the sum runs over the split rows
    lnp.sync()  # h, s and m in one program
    for got, want in zip((h, s, m), program(np, a_np, w_np), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert lc.metrics.counters()["compiles"] == 1
    assert lc.debug.sharding_of(h._t).shard_shape(h.shape) == (4, 4)
    with pytest.raises(ValueError):
        lnp.mark_sharding(lnp.asarray(np.ones(6)), mesh, ("data",))


# -- lazy_tf --------------------------------------------------------------------------

def train_tf(mesh=None, param_specs=()):
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    rng = np.random.default_rng(0)
    ws = [ltf.Variable(rng.normal(size=s).astype(np.float32) * 0.3)
          for s in [(16, 32), (32,), (32, 4), (4,)]]
    for w, spec in zip(ws, param_specs, strict=False):  # the leading variables only
        ltf.mark_sharding(w, mesh, spec)
    lc.metrics.reset()
    losses = []
    for _ in range(STEPS):
        x = ltf.convert_to_tensor(rng.normal(size=(32, 16)).astype(np.float32))
        y = ltf.convert_to_tensor(rng.integers(0, 4, 32).astype(np.int64))
        if mesh is not None:
            ltf.mark_sharding(x, mesh, ("data", None))
            ltf.mark_sharding(y, mesh, ("data",))
        with ltf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, ws[0]) + ws[1])
            logits = tf.matmul(h, ws[2]) + ws[3]
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, ws)
        for w, g in zip(ws, grads, strict=True):
            w.assign_sub(0.1 * g)
        ltf.sync()
        losses.append(float(loss))
    return np.array(losses), lc.metrics.counters()["compiles"]


def test_tf_mlp_with_a_sharded_batch():
    ref_losses, ref_compiles = train_tf()
    losses, compiles = train_tf(lc.Mesh((8,), ("data",)))
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert losses[-1] < losses[0]
    assert compiles == ref_compiles
    # and with the hidden layer split over a "model" axis (variables stay split)
    mesh = lc.Mesh((4, 2), ("data", "model"))
    losses, compiles = train_tf(mesh, [(None, "model"), ("model",), ("model", None)])
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert compiles == ref_compiles


def test_tf_bad_spec_raises_value_error():
    ltf = pytest.importorskip("lazy_tf")
    with pytest.raises(ValueError):
        ltf.mark_sharding(ltf.convert_to_tensor(np.ones(6)), lc.Mesh((8,), ("data",)), ("data",))
    with pytest.raises(TypeError):
        ltf.mark_sharding(np.ones(8), lc.Mesh((8,), ("data",)), ("data",))
