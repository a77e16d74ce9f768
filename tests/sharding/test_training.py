"""Data- and tensor-parallel training on 8 simulated devices matches 1 device."""

import numpy as np
import pytest
from models import (
    MLP_TP_SPECS,
    TRANSFORMER_TP_SPECS,
    batches,
    mlp_loss,
    mlp_params,
    train,
    transformer_loss,
    transformer_params,
)

import lazycore as lc

STEPS = 4
RTOL = 1e-5


def _run(loss_fn, params, data, **kw):
    lc.metrics.reset()
    losses, final = train(loss_fn, params, data, **kw)
    return losses, final, lc.metrics.counters()


@pytest.fixture(scope="module")
def mlp_case():
    rng = np.random.default_rng(0)
    params, data = mlp_params(rng), batches(rng, STEPS, (32, 16))
    return params, data, _run(mlp_loss, params, data)


@pytest.fixture(scope="module")
def transformer_case():
    rng = np.random.default_rng(1)
    params, data = transformer_params(rng), batches(rng, STEPS, (8, 6, 16))
    return params, data, _run(transformer_loss, params, data)


def _assert_same(reference, sharded):
    ref_losses, ref_params, _ = reference
    losses, params, _ = sharded
    np.testing.assert_allclose(losses, ref_losses, rtol=RTOL)
    for k in ref_params:
        np.testing.assert_allclose(params[k], ref_params[k], rtol=1e-4, atol=1e-6)
    assert losses[-1] < losses[0]  # it trains


def test_single_device_compiles_once(mlp_case):
    *_, (_, _, counters) = mlp_case
    assert counters["compiles"] == 1
    assert counters["cache_hits"] == STEPS - 1


@pytest.mark.parametrize("shape", [(8,), (4, 2)])
def test_mlp_data_parallel(mlp_case, shape):
    params, data, reference = mlp_case
    names = ("data",) if len(shape) == 1 else ("data", "model")
    mesh = lc.Mesh(shape, names)
    result = _run(mlp_loss, params, data, mesh=mesh, batch_specs=(("data", None), ("data",)))
    _assert_same(reference, result)
    assert result[2]["compiles"] == 1 and result[2]["cache_hits"] == STEPS - 1


def test_mlp_tensor_parallel(mlp_case):
    params, data, reference = mlp_case
    mesh = lc.Mesh((2, 4), ("data", "model"))
    result = _run(mlp_loss, params, data, mesh=mesh, batch_specs=(("data", None), ("data",)),
                  param_specs=MLP_TP_SPECS)
    _assert_same(reference, result)
    assert result[2]["compiles"] == 1


def test_transformer_tensor_parallel(transformer_case):
    """Data parallel on one mesh axis, Megatron tensor parallel on the other (lazy_torch's
    tests run the data-parallel-only transformer too)."""
    params, data, reference = transformer_case
    mesh = lc.Mesh((2, 4), ("data", "model"))
    result = _run(transformer_loss, params, data, mesh=mesh,
                  batch_specs=(("data", None, None), ("data",)), param_specs=TRANSFORMER_TP_SPECS)
    _assert_same(reference, result)
    assert result[2]["compiles"] == 1


def test_parameters_keep_their_sharding():
    """After a step the updated weights are still split as annotated (outputs keep
    their shardings), so the next step's inputs match the compiled program."""
    rng = np.random.default_rng(2)
    mesh = lc.Mesh((2, 4), ("data", "model"))
    p = {k: lc.asarray(v) for k, v in mlp_params(rng).items()}
    lc.mark_sharding(p["w0"], mesh, (None, "model"))
    x, y = batches(rng, 1, (32, 16))[0]
    x, y = lc.asarray(x), lc.asarray(y)
    lc.mark_sharding(x, mesh, ("data", None))
    loss = mlp_loss(p, x, y)
    (g,) = lc.grad([loss], [p["w0"]])
    p["w0"].assign(lc.numeric.elementwise("sub", p["w0"], g))
    lc.sync()
    s = p["w0"].device_array().sharding
    assert s.shard_shape(p["w0"].shape) == (16, 8)


def _grad_step_hlo(mesh, batch_spec, param_specs):
    rng = np.random.default_rng(3)
    p = {k: lc.asarray(v) for k, v in mlp_params(rng).items()}
    for k, spec in param_specs.items():
        lc.mark_sharding(p[k], mesh, spec)
    x, y = batches(rng, 1, (32, 16))[0]
    x, y = lc.asarray(x), lc.asarray(y)
    lc.mark_sharding(x, mesh, batch_spec)
    loss = mlp_loss(p, x, y)
    grads = lc.grad([loss], list(p.values()))
    return lc.debug.hlo_text([loss, *grads])


def test_data_parallel_hlo_has_gradient_all_reduce():
    hlo = _grad_step_hlo(lc.Mesh((8,), ("data",)), ("data", None), {})
    assert "all-reduce(" in hlo
    # the partitioner split the batch: each device's program takes 32/8 = 4 rows of x
    entry = hlo[hlo.index("entry_computation_layout"):].splitlines()[0]
    assert "f32[4,16]" in entry and "f32[32,16]" not in entry


def test_unsharded_program_has_no_collectives():
    hlo = _grad_step_hlo(lc.Mesh((8,), ("data",)), None, {})
    assert "all-reduce" not in hlo and "all-gather" not in hlo


def test_tensor_parallel_hlo_splits_weights():
    mesh = lc.Mesh((1, 8), ("data", "model"))
    hlo = _grad_step_hlo(mesh, (None, None), MLP_TP_SPECS)
    assert "f32[16,4]" in hlo  # w0's 32 columns over 8 devices
    assert "all-reduce(" in hlo  # the row-split layer sums partial products
