"""Runtime behaviour: compile once, parameters, dead values, async, donation, fallback."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore import ops


def step(x, w, lr):
    y = nm.elementwise("mul", x, w)
    return nm.elementwise("sub", w, nm.elementwise("mul", y, lr))


def test_identical_programs_compile_once():
    x = lc.asarray(np.ones(8, np.float32))
    w = lc.asarray(np.full(8, 2.0, np.float32))
    for _ in range(5):
        w = step(x, w, 0.5)
        lc.sync()
    c = lc.metrics.counters()
    assert c["compiles"] == 1 and c["cache_hits"] == 4 and c["executions"] == 5
    np.testing.assert_allclose(lc.to_numpy(w), 2.0 * 0.5 ** 5)


def test_changing_python_scalar_does_not_recompile():
    x = lc.asarray(np.ones(4, np.float32))
    w = lc.asarray(np.ones(4, np.float32))
    for lr in (0.1, 0.2, 0.3, 0.05):
        w = step(x, w, lr)
        lc.sync()
    assert lc.metrics.counters()["compiles"] == 1
    np.testing.assert_allclose(lc.to_numpy(w), (1 - 0.1) * (1 - 0.2) * (1 - 0.3) * (1 - 0.05),
                               rtol=1e-6)


def test_baking_switch_recompiles_for_new_scalars():
    lc.configure(bake_scalars=True)
    try:
        x = lc.asarray(np.ones(4, np.float32))
        for lr in (0.1, 0.2):
            lc.to_numpy(nm.elementwise("mul", x, lr))
        assert lc.metrics.counters()["compiles"] == 2
    finally:
        lc.configure(bake_scalars=False)


def test_scalars_zero_and_one_are_baked():
    assert lc.scalar(1.0, np.float32).node.op == "const"
    assert lc.scalar(0, np.int64).node.op == "const"
    assert lc.scalar(-1, np.int64).node.op == "const"
    assert lc.scalar(0.5, np.float32).node.op == "param"


def test_dead_values_are_not_computed():
    x = lc.asarray(np.arange(4.0))
    kept = ops.exp(x)
    dead = ops.sin(x)  # noqa: F841 - dropped before the sync
    del dead
    lc.sync()
    # the program had exactly one output; the sine never ran
    assert not kept.is_pending
    text = lc.debug.ir_text([ops.cos(x)])
    assert "sin" not in text


def test_sync_outputs_only_live_values():
    x = lc.asarray(np.arange(4.0))
    a = ops.exp(x)
    b = ops.exp(ops.neg(x))
    del b
    lc.sync()
    assert lc.metrics.counters()["executions"] == 1
    np.testing.assert_allclose(lc.to_numpy(a), np.exp(np.arange(4.0)))


def test_same_graph_twice_hashes_the_same():
    def build():
        x = lc.asarray(np.ones((3, 3)))
        return nm.softmax(nm.elementwise("add", x, 2.5))

    assert lc.debug.graph_hash([build()]) == lc.debug.graph_hash([build()])


def test_shared_leaves_are_part_of_the_key():
    a = lc.asarray(np.ones(3))
    b = lc.asarray(np.full(3, 2.0))
    s1 = ops.add(a, a)
    s2 = ops.add(a, b)
    assert s1.node.hash == s2.node.hash  # structurally equal nodes ...
    np.testing.assert_allclose(lc.to_numpy(s1), 2.0)
    np.testing.assert_allclose(lc.to_numpy(s2), 3.0)  # ... but different programs


def test_async_sync_returns_before_execution_ends():
    x = lc.asarray(np.random.default_rng(0).standard_normal((1500, 1500)).astype(np.float32))
    y = x
    for _ in range(12):
        y = nm.matmul(y, x)
        y = ops.tanh(y)
    lc.to_numpy(ops.add(x, x))  # warm-up unrelated compile path
    lc.sync()  # compile this program once
    lc.wait()
    y = x
    for _ in range(12):
        y = nm.matmul(y, x)
        y = ops.tanh(y)
    start = time.perf_counter()
    lc.sync()
    dispatched = time.perf_counter() - start
    assert y.node.op == "data"
    lc.wait()
    finished = time.perf_counter() - start
    assert lc.metrics.counters()["cache_hits"] >= 1
    assert dispatched < finished / 2, (dispatched, finished)


def test_overwritten_buffers_are_donated():
    w = lc.asarray(np.ones(1000, np.float32))
    old = w.node.value
    w.assign(ops.add(w, lc.asarray(np.ones(1000, np.float32))))
    lc.sync()
    lc.wait()
    assert old.is_deleted()
    np.testing.assert_allclose(lc.to_numpy(w), 2.0)


def test_values_still_held_are_not_donated():
    x = lc.asarray(np.ones(10, np.float32))
    keep = lc.Tensor(x.node)
    x.assign(ops.add(x, x))
    lc.sync()
    np.testing.assert_allclose(lc.to_numpy(keep), 1.0)
    np.testing.assert_allclose(lc.to_numpy(x), 2.0)


def test_bad_shape_raises_at_the_call_and_keeps_materialized_values():
    a = lc.asarray(np.ones((2, 3)))
    b = ops.exp(a)
    lc.sync()
    with pytest.raises(lc.ShapeError, match=r"\(2, 3\).*\(4,\)|broadcast"):
        nm.elementwise("add", a, lc.asarray(np.ones(4)))
    np.testing.assert_allclose(lc.to_numpy(b), np.e)


def test_fallback_runs_on_host_and_is_counted():
    x = lc.asarray(np.array([3.0, 1.0, 2.0]))
    y = ops.mul(x, x)
    out = lc.fallback("median", lambda v: np.asarray(np.median(v)), [y])
    assert isinstance(out, lc.Tensor)
    assert float(lc.to_numpy(out)) == 4.0
    c = lc.metrics.counters()
    assert c["fallbacks"] == 1 and c["fallback::median"] == 1


def test_recompile_reason_names_the_changed_input():
    for n in (13, 14):
        x = lc.asarray(np.ones(n))
        lc.to_numpy(ops.expm1(x))  # same call site, different input shape
    reasons = [r for _, r in lc.metrics.recompile_reasons()]
    assert any("input 0 shape float64[13] -> float64[14]" in r for r in reasons), reasons
    assert "recompiles" in lc.metrics.report()


def test_cache_is_an_lru_with_a_size_setting():
    old = lc.settings.cache_size
    lc.cache.clear()
    lc.configure(cache_size=2)
    try:
        for n in (1, 2, 3):
            lc.to_numpy(ops.exp(lc.asarray(np.ones(n))))
        assert lc.cache.size() == 2
        lc.to_numpy(ops.exp(lc.asarray(np.ones(1))))  # evicted -> compiles again
        assert lc.metrics.counters()["compiles"] == 4
    finally:
        lc.configure(cache_size=old)


def test_metrics_counters_and_report_keys():
    lc.to_numpy(ops.exp(lc.asarray(np.ones(2))))
    c = lc.metrics.counters()
    for key in ("traced_ops", "syncs", "cache_hits", "cache_misses", "compiles", "executions",
                "host_transfers", "fallbacks"):
        assert key in c
    assert c["host_transfers"] == 1 and c["traced_ops"] == 1
    t = lc.metrics.timers()
    for key in ("trace", "lower", "compile", "execute", "transfer"):
        assert key in t
    lc.metrics.reset()
    assert lc.metrics.counters()["compiles"] == 0


def test_debug_text_dumps():
    y = nm.elementwise("add", ops.exp(lc.asarray(np.ones(3))), 2.5)
    assert "exp" in lc.debug.ir_text([y]) and "param" in lc.debug.ir_text([y])
    assert "stablehlo.exponential" in lc.debug.stablehlo_text([y])
    assert "exponential" in lc.debug.hlo_text([y])


def test_debug_logging_names_cause_and_site(capsys):
    lc.configure(debug=True)
    try:
        lc.to_numpy(ops.exp(lc.asarray(np.ones(2))))
    finally:
        lc.configure(debug=False)
    err = capsys.readouterr().err
    assert "cause=materialize" in err and "test_runtime.py" in err


def test_persistent_cache_is_reused_across_processes(tmp_path):
    script = textwrap.dedent(f"""
        import numpy as np, lazycore as lc
        lc.configure(persistent_cache_dir={str(tmp_path)!r})
        x = lc.asarray(np.ones((64, 64), np.float32))
        y = lc.numeric.softmax(lc.numeric.matmul(x, x))
        print(lc.to_numpy(y).sum(), lc.metrics.counters()["compiles"],
              lc.metrics.counters().get("persistent_cache_hits", 0))
    """)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True)
        total, compiles, loads = out.stdout.split()
        assert abs(float(total) - 64.0) < 1e-3
        runs.append((int(compiles), int(loads)))
    assert runs == [(1, 0), (0, 1)]  # the second process loads instead of compiling


def test_core_imports_no_frontend():
    """The core knows no frontend: no torch, tensorflow or lazy_* import in its sources."""
    import pathlib
    import re

    root = pathlib.Path(lc.__file__).parent
    pattern = re.compile(r"^\s*(import|from)\s+(torch|tensorflow|lazy_numpy|lazy_torch|lazy_tf)\b",
                         re.M)
    offenders = [p.name for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_asarray_copies_host_memory():
    host = np.ones(1000, np.float32)
    x = lc.asarray(host)
    host[:] = 5.0  # the user's later write is not seen by the lazy value
    np.testing.assert_allclose(lc.to_numpy(x), 1.0)
    y = lc.asarray(np.ones(1000, np.float32))
    keep = np.ones(1000, np.float32)
    z = lc.asarray(keep)
    y.assign(ops.add(y, z))
    del z
    lc.sync()  # may donate z's buffer: never the user's array
    lc.wait()
    np.testing.assert_allclose(keep, 1.0)


def test_changing_host_indices_do_not_recompile():
    x = lc.asarray(np.arange(10.0))
    for idx in ([1, 2], [3, 7], [9, 0]):
        np.testing.assert_allclose(lc.to_numpy(nm.getitem(x, (np.array(idx),))), idx)
    assert lc.metrics.counters()["compiles"] == 1


def test_sync_of_the_same_handle_twice():
    x = ops.exp(lc.asarray(np.zeros(3)))
    a, b = lc.to_numpy_many([x, x])
    np.testing.assert_allclose(a, 1.0)
    np.testing.assert_allclose(b, 1.0)


def _shifted_sum(z):
    """A stencil: four overlapping shifted slices of ``z`` (8x8 -> 6x6) summed."""
    parts = [ops.slice(z, start_indices=(i, j), limit_indices=(6 + i, 6 + j))
             for i, j in ((0, 0), (0, 2), (2, 0), (2, 2))]
    total = parts[0]
    for p in parts[1:]:
        total = nm.elementwise("add", total, p)
    return total


def test_a_computed_value_read_by_overlapping_slices_is_materialized_once():
    """XLA:CPU recomputes a stencil's fused producer in each slice (Game of Life ran
    17x slower per step); the lowering puts an optimization barrier on such a value,
    and on nothing else (a data input, disjoint slices)."""
    z = lc.asarray(np.arange(64, dtype=np.float32).reshape(8, 8))
    computed = nm.elementwise("mul", z, 2.0)
    stencil = _shifted_sum(computed)
    assert "optimization_barrier" in lc.debug.stablehlo_text([stencil])
    assert "optimization_barrier" not in lc.debug.stablehlo_text([_shifted_sum(z)])
    halves = [ops.slice(computed, start_indices=(0, 0), limit_indices=(4, 8)),
              ops.slice(computed, start_indices=(4, 0), limit_indices=(8, 8))]
    disjoint = nm.elementwise("add", *halves)
    assert "optimization_barrier" not in lc.debug.stablehlo_text([disjoint])
    host = np.arange(64, dtype=np.float32).reshape(8, 8) * 2
    want = host[0:6, 0:6] + host[0:6, 2:8] + host[2:8, 0:6] + host[2:8, 2:8]
    np.testing.assert_array_equal(lc.to_numpy(stencil), want)


@pytest.mark.parametrize("env, expected", [
    # lazycore's setting picks JAX's CPU dispatch at import; configure() changes it while
    # JAX's CPU client does not exist, and raises (the setting kept) once it does
    ({"LAZYCORE_CPU_DISPATCH": "sync"}, "False True 1 [2.0, 2.0] RuntimeError async"),
    # a choice made through JAX's own environment variable is kept at import
    ({"LAZYCORE_CPU_DISPATCH": "sync", "JAX_CPU_ENABLE_ASYNC_DISPATCH": "true"},
     "True False 1 [2.0, 2.0] RuntimeError sync"),
])
def test_cpu_dispatch_setting(env, expected):
    script = textwrap.dedent("""
        import numpy as np, lazycore as lc
        from jax._src import xla_bridge
        flag = xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value
        lc.configure(cpu_dispatch="sync" if flag else "async")  # no client yet: applies
        changed = xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value
        x = lc.asarray(np.ones(2))
        value = lc.to_numpy(lc.ops.add(x, x)).tolist()
        try:
            lc.configure(cpu_dispatch="async" if flag else "sync")
            error = "none"
        except RuntimeError:
            error = "RuntimeError"
        print(flag, changed, lc.metrics.counters()["executions"], value, error,
              lc.settings.cpu_dispatch)
    """)
    environ = {k: v for k, v in os.environ.items()
               if k not in ("JAX_CPU_ENABLE_ASYNC_DISPATCH", "LAZYCORE_CPU_DISPATCH")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**environ, **env})
    assert out.stdout.split("\n")[-2] == expected


def test_import_keeps_a_cpu_dispatch_chosen_through_jax_config():
    """Without LAZYCORE_CPU_DISPATCH, importing lazycore leaves JAX's own choice alone."""
    script = ("import jax; jax.config.update('jax_cpu_enable_async_dispatch', False)\n"
              "import lazycore\nfrom jax._src import xla_bridge\n"
              "print(xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value)")
    environ = {k: v for k, v in os.environ.items()
               if k not in ("JAX_CPU_ENABLE_ASYNC_DISPATCH", "LAZYCORE_CPU_DISPATCH")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=environ)
    assert out.stdout.split("\n")[-2] == "False"
