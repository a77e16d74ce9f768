"""Fill leaves: a Python scalar broadcast to a shape is ONE param/const leaf whose
value is the scalar (``x * 0.5`` records two nodes, not three). Every way a value
leaves the core -- a program's input, ``to_numpy``, ``materialize``, a sharded
program, the persistent cache -- must see the broadcast value."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lazycore as lc
from lazycore.lowering import arg_layout, linearize
from lazycore.trace import filled, scalar


@pytest.mark.parametrize("value, dtype, kind", [(0.5, np.float32, "param"),
                                                (1, np.int32, "const"),
                                                (7, np.int64, "param"),
                                                (True, np.bool_, "const")])
def test_fill_is_one_leaf_with_the_shaped_aval(value, dtype, kind):
    t = filled(value, dtype, (2, 3))
    assert t.node.op == kind and t.node.operands == ()
    assert t.shape == (2, 3) and t.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(lc.to_numpy(t), np.full((2, 3), value, dtype))
    assert lc.to_numpy(t).flags.writeable


def test_broadcast_of_a_host_scalar_is_a_fill():
    t = lc.numeric.broadcast_to(scalar(2.5, np.float32), (4,))
    assert t.node.op == "param" and t.shape == (4,)
    c = lc.numeric.broadcast_to(scalar(0, np.float32), (4,))
    assert c.node.op == "const" and c.shape == (4,)
    kept = lc.numeric.broadcast_to(scalar(1.0, np.float32, bake=False), (4,))
    assert kept.node.op == "param"  # an explicit parameter is never baked by the broadcast
    np.testing.assert_array_equal(lc.to_numpy(kept), np.ones(4, np.float32))


def test_fills_in_a_program_are_packed_and_broadcast():
    x = lc.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = lc.ops.add(lc.ops.mul(x, filled(0.5, np.float32, (2, 3))), filled(1, np.float32, (2, 3)))
    program = linearize([y.node])
    assert len(program.nodes) == 5  # x, the param fill, mul, the const fill, add
    layout = arg_layout(program)
    assert layout.packed and all(program.inputs[i].op == "data" for i in layout.direct)
    np.testing.assert_allclose(lc.to_numpy(y), np.arange(6).reshape(2, 3) * 0.5 + 1)


def test_a_single_fill_param_program_and_a_new_value_hit_the_cache():
    x = lc.asarray(np.arange(3, dtype=np.float32))
    outs = []
    for v in (0.25, 4.0):
        before = lc.metrics.counters().get("compiles", 0)
        outs.append(lc.to_numpy(lc.ops.mul(x, filled(v, np.float32, (3,)))))
        compiles = lc.metrics.counters().get("compiles", 0) - before
    assert compiles == 0  # the second value reuses the first's program
    np.testing.assert_allclose(outs[0], np.arange(3) * 0.25)
    np.testing.assert_allclose(outs[1], np.arange(3) * 4.0)


def test_fill_materializes_as_device_data_and_joins_programs():
    t = filled(3.0, np.float32, (2, 2))
    array = t.device_array()
    assert array.shape == (2, 2) and t.node.op == "data"
    np.testing.assert_array_equal(np.asarray(array), np.full((2, 2), 3.0, np.float32))
    np.testing.assert_array_equal(lc.to_numpy(lc.ops.add(t, t)), np.full((2, 2), 6.0))


def test_fill_as_a_program_output_alone():
    x = lc.asarray(np.ones(3, np.float32))
    f = filled(2.0, np.float32, (3,))
    y = lc.ops.mul(x, f)
    lc.sync()
    np.testing.assert_array_equal(lc.to_numpy(f), np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(lc.to_numpy(y), np.full(3, 2.0, np.float32))


def test_gradient_through_a_fill():
    x = lc.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    loss = lc.numeric.sum(lc.ops.mul(x, filled(0.5, np.float32, (3,))))
    (g,) = lc.autodiff.grad([loss], [x])
    np.testing.assert_allclose(lc.to_numpy(g), np.full(3, 0.5))


def test_persistent_cache_tells_a_fill_from_a_scalar_and_data(tmp_path):
    """Programs that differ only in what kind of leaf an input is (device data, a
    rank-0 param, a fill) take different arguments: each gets its own executable,
    in this process and in the next."""
    script = textwrap.dedent(f"""
        import numpy as np, lazycore as lc
        from lazycore.trace import filled, scalar
        lc.configure(persistent_cache_dir={str(tmp_path)!r})
        x = lc.asarray(np.arange(4, dtype=np.float32))
        a = lc.to_numpy(lc.ops.mul(x, filled(0.5, np.float32, (4,))))
        b = lc.to_numpy(lc.ops.mul(x, lc.asarray(np.full(4, 3.0, np.float32))))
        c = lc.to_numpy(lc.ops.mul(scalar(2.0, np.float32), scalar(5.0, np.float32)))
        print(a.tolist(), b.tolist(), c.tolist(),
              lc.metrics.counters().get("persistent_cache_hits", 0))
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout.split("\n")[-2] for _ in range(2)]
    want = "[0.0, 0.5, 1.0, 1.5] [0.0, 3.0, 6.0, 9.0] 10.0"
    assert runs[0] == want + " 0"
    assert runs[1] == want + " 3"


def test_persistent_cache_on_a_host_with_several_devices(tmp_path):
    """A one-device program loaded from the cache runs on that one device, also where
    the backend has several (multi-GPU hosts; here 4 simulated CPU devices)."""
    script = textwrap.dedent(f"""
        import numpy as np, lazycore as lc
        from lazycore.trace import filled
        lc.configure(persistent_cache_dir={str(tmp_path)!r})
        x = lc.asarray(np.arange(4, dtype=np.float32))
        y = lc.ops.add(lc.ops.mul(x, filled(0.5, np.float32, (4,))), x)
        print(lc.to_numpy(y).tolist(), lc.metrics.counters().get("persistent_cache_hits", 0))
    """)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
           "JAX_PLATFORMS": "cpu"}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, env=env).stdout.split("\n")[-2] for _ in range(2)]
    assert runs == ["[0.0, 1.5, 3.0, 4.5] 0", "[0.0, 1.5, 3.0, 4.5] 1"]
