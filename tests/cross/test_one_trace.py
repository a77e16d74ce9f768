"""One trace across frameworks: NumPy preprocessing -> PyTorch model -> TF post-processing
becomes ONE XLA program, and gives what the same pipeline gives eagerly."""

import numpy as np
import pytest
import tensorflow as tf
import torch

import lazy_numpy as lnp
import lazy_tf as ltf
import lazy_torch
import lazycore as lc

RAW = np.random.default_rng(0).standard_normal((16, 6)).astype(np.float32)


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 5))


def _eager_pipeline():
    x = (RAW - RAW.mean(0)) / RAW.std(0)
    logits = _model()(torch.from_numpy(x).float())
    p = tf.constant(logits.detach().numpy())
    top = tf.math.top_k(tf.nn.softmax(p), k=3)
    return top.values.numpy(), top.indices.numpy()


def test_pipeline_is_one_program():
    model = _model().to(lazy_torch.device())
    lc.sync()
    lc.metrics.reset()
    x = lnp.asarray(RAW)
    x = (x - x.mean(0)) / x.std(0)
    t = lazy_torch.from_lazy(x)
    assert isinstance(t, torch.Tensor) and t.device.type == "lazy"
    assert tuple(t.shape) == RAW.shape and t.dtype == torch.float32
    logits = model(t.float())
    p = ltf.from_lazy(logits)
    assert p.shape == (16, 5) and p.dtype == tf.float32
    top = tf.math.top_k(tf.nn.softmax(p), k=3)
    values = top.values.numpy()
    c = lc.metrics.counters()
    assert c["compiles"] == 1 and c["executions"] == 1, lc.metrics.report()
    want_values, want_indices = _eager_pipeline()
    np.testing.assert_allclose(values, want_values, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(top.indices.numpy(), want_indices)


def test_values_pass_back_into_numpy_without_a_sync():
    t = torch.arange(6.0).to(lazy_torch.device()) * 2
    a = lnp.from_lazy(t)
    s = np.sum(a.reshape(2, 3), axis=0)
    lc.metrics.reset()
    np.testing.assert_allclose(np.asarray(s), [6.0, 10.0, 14.0])
    assert lc.metrics.counters()["executions"] == 1
    u = ltf.from_lazy(a)
    np.testing.assert_allclose(tf.reduce_sum(u).numpy(), 30.0)


def test_each_frontend_keeps_its_own_dtype_rules():
    a = lnp.asarray(np.arange(3, dtype=np.int32))
    t = lazy_torch.from_lazy(a)
    assert (t * 1.5).dtype == torch.float32  # PyTorch: int tensor * float -> default float
    assert (a * 1.5).dtype == np.float64  # NumPy: NEP 50 -> float64
    u = ltf.from_lazy(a)
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        u * 1.5  # TF: a Python float cannot become int32


def test_torch_model_trains_on_numpy_preprocessing():
    model = _model().to(lazy_torch.device())
    eager_model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    eager_opt = torch.optim.SGD(eager_model.parameters(), lr=0.1)
    target = torch.randint(0, 5, (16,), generator=torch.Generator().manual_seed(1))
    losses, eager_losses = [], []
    for _ in range(3):
        x = lnp.asarray(RAW)
        x = (x - x.mean(0)) / x.std(0)
        t = lazy_torch.from_lazy(x)
        assert not t.requires_grad  # a constant for autograd, as eagerly
        loss = torch.nn.functional.cross_entropy(model(t), target.to(lazy_torch.device()))
        opt.zero_grad()
        loss.backward()
        opt.step()
        lazy_torch.sync()
        losses.append(loss.item())
        xe = torch.from_numpy((RAW - RAW.mean(0)) / RAW.std(0))
        eager_loss = torch.nn.functional.cross_entropy(eager_model(xe), target)
        eager_opt.zero_grad()
        eager_loss.backward()
        eager_opt.step()
        eager_losses.append(eager_loss.item())
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)


def test_materialized_values_cross_by_dlpack():
    t = torch.arange(4.0).to(lazy_torch.device()) + 1
    core = lc.interop.unwrap(t)
    device_array = lc.interop.to_dlpack_capsule_source(core)
    host = torch.from_dlpack(device_array)
    np.testing.assert_allclose(host.numpy(), [1, 2, 3, 4])
    back = lc.interop.from_dlpack(np.arange(3.0))
    np.testing.assert_allclose(lc.to_numpy(back), [0, 1, 2])


def test_lnp_asarray_adopts_lazy_values_of_other_frontends():
    t = torch.arange(6.0).to(lazy_torch.device()) * 2
    lc.sync()
    u = ltf.from_lazy(t) + 1.0
    lc.metrics.reset()
    a = lnp.asarray(t)
    b = lnp.asarray(u, dtype=np.float64)
    assert lc.metrics.counters()["syncs"] == 0
    np.testing.assert_allclose(np.asarray(a + b), np.arange(6.0) * 4 + 1)
