"""Mesh, mark_sharding, placement, cache keys and debug output on 8 simulated devices."""

import jax
import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm


@pytest.fixture(scope="module")
def mesh():
    return lc.Mesh((4, 2), ("data", "model"))


def test_mesh_over_jax_devices(mesh):
    assert mesh.shape == (4, 2) and mesh.size == 8
    assert mesh.device_ids == tuple(d.id for d in jax.devices())
    assert isinstance(mesh.jax_mesh, jax.sharding.Mesh)
    assert mesh == lc.Mesh((4, 2), ("data", "model")) and hash(mesh) == hash(lc.Mesh((4, 2), ("data", "model")))
    assert mesh != lc.Mesh((2, 4), ("data", "model"))
    assert repr(mesh) == "Mesh(data=4, model=2)"
    assert lc.Mesh((-1,), "x").shape == (8,)
    assert lc.Mesh((2,), ("x",), devices=[6, 7]).device_ids == (6, 7)
    assert repr(lc.Mesh((2,), ("x",), devices=[6, 7])) == "Mesh(x=2, devices=[6, 7])"
    assert lc.Mesh((4,), ("x",)).device_ids == (0, 1, 2, 3)  # a sub-mesh of the host


@pytest.mark.parametrize("shape, names", [((16,), ("x",)), ((2, 2), ("x",)), ((2,), ("x", "x")),
                                          ((0,), ("x",))])
def test_bad_mesh_raises(shape, names):
    with pytest.raises(lc.ShapeError):
        lc.Mesh(shape, names)


@pytest.mark.parametrize("spec", [("nope", None), ("data", "data"), (None, None, None),
                                  (("data", "model"), None), (5,)])
def test_bad_spec_raises_at_the_call(mesh, spec):
    t = lc.asarray(np.ones((4, 6), np.float32))  # 6 rows do not split 8 ways
    with pytest.raises(lc.ShapeError):
        lc.mark_sharding(t, mesh, spec)


def test_data_is_placed_sharded_and_gathers(mesh):
    host = np.arange(48, dtype=np.float32).reshape(8, 6)
    t = lc.mark_sharding(lc.asarray(host), mesh, ("data", "model"))
    array = t.device_array()
    assert len(array.sharding.device_set) == 8
    assert {s.data.shape for s in array.addressable_shards} == {(2, 3)}
    np.testing.assert_array_equal(lc.to_numpy(t), host)  # materializing gathers
    # a spec entry may name several axes, or a mesh axis by index
    u = lc.mark_sharding(lc.asarray(host), mesh, ((0, 1),))
    assert u.device_array().sharding.shard_shape(u.shape) == (1, 6)


def test_pending_value_gets_a_constraint_in_the_ir(mesh):
    x = lc.asarray(np.ones((8, 4), np.float32))
    y = lc.ops.mul(x, x)
    before = lc.debug.graph_hash([y])
    lc.mark_sharding(y, mesh, ("data", None))
    assert y.is_pending and y.node.op == "sharding_constraint"
    assert "sharding_constraint" in lc.debug.ir_text([y]) and "data" in lc.debug.ir_text([y])
    assert lc.debug.graph_hash([y]) != before
    np.testing.assert_array_equal(lc.to_numpy(y), np.ones((8, 4)))
    assert y.device_array().sharding.shard_shape((8, 4)) == (2, 4)  # the output keeps it


def test_constraint_spec_is_part_of_the_cache_key(mesh):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    for spec in [("data", None), ("data", None), (None, "model"), ("data", None)]:
        y = lc.ops.add(lc.asarray(x), lc.asarray(x))
        lc.mark_sharding(y, mesh, spec)
        np.testing.assert_array_equal(lc.to_numpy(y), 2 * x)
    c = lc.metrics.counters()
    assert c["compiles"] == 2 and c["cache_hits"] == 2


def test_input_sharding_is_part_of_the_cache_key(mesh):
    host = np.arange(32, dtype=np.float32).reshape(8, 4)
    specs = [("data", None), ("data", None), (None, "model"), None]
    for spec in specs:
        x = lc.asarray(host)
        if spec is not None:
            lc.mark_sharding(x, mesh, spec)
        np.testing.assert_allclose(lc.to_numpy(lc.ops.exp(x)), np.exp(host), rtol=1e-6)
    c = lc.metrics.counters()
    assert c["compiles"] == 3 and c["cache_hits"] == 1


def test_unannotated_inputs_are_replicated_onto_the_mesh(mesh):
    x = lc.mark_sharding(lc.asarray(np.ones((8, 4), np.float32)), mesh, ("data", None))
    w = lc.asarray(np.full((4, 3), 2.0, np.float32))  # one device
    out = nm.matmul(x, w)
    np.testing.assert_allclose(lc.to_numpy(out), np.full((8, 3), 8.0))
    assert len(w.device_array().sharding.device_set) == 8  # moved once, kept there
    assert w.device_array().sharding.is_fully_replicated


def test_python_scalars_stay_parameters_on_a_mesh(mesh):
    x = lc.mark_sharding(lc.asarray(np.ones((8, 2), np.float32)), mesh, ("data", None))
    for lr in (0.5, 0.25):
        np.testing.assert_allclose(lc.to_numpy(nm.elementwise("mul", x, lr)), lr)
    assert lc.metrics.counters()["compiles"] == 1


def test_different_device_sets_raise(mesh):
    a = lc.mark_sharding(lc.asarray(np.ones(4)), lc.Mesh((4,), ("x",), devices=[0, 1, 2, 3]),
                         ("x",))
    b = lc.mark_sharding(lc.asarray(np.ones(4)), lc.Mesh((4,), ("x",), devices=[4, 5, 6, 7]),
                         ("x",))
    with pytest.raises(lc.LazyError, match="different device sets"):
        lc.to_numpy(lc.ops.add(a, b))


def test_grad_through_a_constraint(mesh):
    w = lc.asarray(np.arange(8, dtype=np.float32))
    h = lc.ops.mul(w, w)
    lc.mark_sharding(h, mesh, (("data", "model"),))
    (g,) = lc.grad([nm.sum(h)], [w])
    np.testing.assert_allclose(lc.to_numpy(g), 2 * np.arange(8))


def test_sharding_text_shows_per_device_shapes(mesh):
    t = lc.mark_sharding(lc.asarray(np.zeros((8, 6), np.float32)), mesh, ("data", "model"))
    text = lc.debug.sharding_text(t)
    assert "Mesh(data=4, model=2)" in text and "('data', 'model')" in text
    assert "per-device shape (2, 3)" in text
    assert "[0:2, 0:3]" in text and "[6:8, 3:6]" in text
    assert len(text.splitlines()) == 2 + 8
    # a pending value: what XLA's propagation chose, without running anything
    executions = lc.metrics.counters()["executions"]
    y = lc.ops.exp(t)
    assert "per-device shape (2, 3)" in lc.debug.sharding_text(y)
    assert y.is_pending and lc.metrics.counters()["executions"] == executions
    r = lc.asarray(np.zeros(3, np.float32))
    assert "replicated" in lc.debug.sharding_text(r)


def test_donation_still_works_on_a_mesh(mesh):
    """A weight overwritten in a full sync is donated; values stay right."""
    w = lc.mark_sharding(lc.asarray(np.ones((8, 4), np.float32)), mesh, ("data", None))
    for _ in range(3):
        w.assign(nm.elementwise("mul", w, 2.0))
        lc.sync()
    np.testing.assert_array_equal(lc.to_numpy(w), np.full((8, 4), 8.0))
    assert lc.metrics.counters()["compiles"] == 1


def test_recompile_reason_names_the_sharding(mesh):
    host = np.ones((8, 4), np.float32)
    for spec in [("data", None), (None, "model")]:
        x = lc.mark_sharding(lc.asarray(host), mesh, spec)
        lc.to_numpy(lc.ops.neg(x))
    (site, reason), = lc.metrics.recompile_reasons()
    assert "test_api.py" in site
    assert reason == ("input 0 sharding Mesh(data=4, model=2) spec=(('data',), None) -> "
                      "Mesh(data=4, model=2) spec=(None, ('model',))")


def test_a_sharded_jax_array_from_outside_is_used_as_is(mesh):
    from jax.sharding import NamedSharding, PartitionSpec

    host = np.arange(16.0).reshape(8, 2)
    array = jax.device_put(host, NamedSharding(mesh.jax_mesh, PartitionSpec("data")))
    x = lc.asarray(array)
    y = nm.elementwise("mul", x, 3.0)
    assert lc.debug.sharding_of(y).shard_shape((8, 2)) == (2, 2)
    np.testing.assert_array_equal(lc.to_numpy(y), 3 * host)
    assert len(y.device_array().sharding.device_set) == 8


def test_sharded_programs_go_through_the_persistent_cache(mesh, tmp_path):
    old = lc.settings.persistent_cache_dir
    lc.configure(persistent_cache_dir=str(tmp_path))
    try:
        results = []
        for _ in range(2):
            lc.cache.clear()  # the in-memory layer: the second round must load from disk
            x = lc.mark_sharding(lc.asarray(np.arange(16.0).reshape(8, 2)), mesh,
                                 ("data", "model"))
            y = nm.matmul(x, lc.asarray(np.ones((2, 3))))
            results.append(lc.to_numpy(y))
            assert y.device_array().sharding.shard_shape((8, 3)) == (2, 3)
        np.testing.assert_array_equal(results[0], results[1])
        c = lc.metrics.counters()
        assert c["compiles"] == 1 and c["persistent_cache_hits"] == 1
    finally:
        lc.configure(persistent_cache_dir=old)
