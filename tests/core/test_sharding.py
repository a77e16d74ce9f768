"""Sharding on the default single device: a 1-device mesh works and costs nothing.

The multi-device behaviour is tested in tests/sharding (8 simulated devices)."""

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm


def test_one_device_mesh_roundtrip():
    mesh = lc.Mesh((1,), ("data",))
    x = lc.mark_sharding(lc.asarray(np.arange(6.0).reshape(3, 2)), mesh, ("data", None))
    y = lc.mark_sharding(nm.elementwise("mul", x, 2.0), mesh, (None, "data"))
    assert y.node.op == "sharding_constraint"
    np.testing.assert_array_equal(lc.to_numpy(y), 2 * np.arange(6.0).reshape(3, 2))
    assert "per-device shape (3, 2)" in lc.debug.sharding_text(y)


def test_constraint_op_is_identity_and_differentiable():
    mesh = lc.Mesh((1,), ("d",))
    w = lc.asarray(np.array([1.0, 2.0, 3.0]))
    h = lc.ops.sharding_constraint(lc.ops.mul(w, w), mesh=mesh, spec=(("d",),))
    assert h.aval == w.aval
    (g,) = lc.grad([nm.sum(h)], [w])
    np.testing.assert_allclose(lc.to_numpy(g), [2.0, 4.0, 6.0])


def test_errors_are_value_errors_at_the_call():
    mesh = lc.Mesh((1,), ("d",))
    with pytest.raises(ValueError):
        lc.mark_sharding(lc.asarray(np.ones(3)), mesh, ("e",))
    with pytest.raises(TypeError):
        lc.mark_sharding(np.ones(3), mesh, ("d",))
    with pytest.raises(lc.ShapeError):
        lc.Mesh((2,), ("d",))  # one device here


def test_training_loop_still_compiles_once_after_meshes_exist():
    """Once a mesh exists every sync plans placement; plain programs still hit the cache."""
    lc.Mesh((1,), ("d",))
    w = lc.asarray(np.ones(4, np.float32))
    for _ in range(3):
        w.assign(nm.elementwise("mul", w, 0.5))
        lc.sync()
    np.testing.assert_allclose(lc.to_numpy(w), 0.125)
    assert lc.metrics.counters()["compiles"] == 1
