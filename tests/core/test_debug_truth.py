"""The debugging tools report what happened: step spans, storm advice, reports, names,
sources, dumps, and the device loader's order, barriers and overlap."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore import ops


def _line() -> int:
    return sys._getframe(1).f_lineno


# -- recompile storms --------------------------------------------------------------------

def test_storm_with_varying_input_count_still_names_the_varying_dim():
    """An optimizer's state appears at step 2 (more inputs) while the batch varies: the
    advice names both (issue 17: AdamW said only 'the number of inputs varies')."""
    w = lc.asarray(np.ones((4, 2), np.float32))
    state = None
    lc.diagnostics.reset()
    for n in (3, 5, 7, 9, 11, 13):
        x = lc.asarray(np.ones((n, 4), np.float32))
        g = nm.sum(nm.matmul(x, w), axis=0)
        state = g if state is None else ops.add(state, g)  # state: an input from step 2 on
        lc.sync(); site = f"{__file__}:{_line()}"  # noqa: E702
    text = lc.diagnostics.summary()
    assert f"compiled 6 times at {site}" in text
    assert "the number of inputs varies" in text
    assert "shape varies in dim 0 (sizes 5, 7, 9, 11, 13)" in text
    assert "pad or bucket it" in text


# -- profile: a step holds its own compile -----------------------------------------------

def test_profile_step_span_contains_its_own_compile_not_the_previous_one(monkeypatch):
    monkeypatch.setattr(lc.settings, "tier", "compile", raising=False)  # compile at step 1
    monkeypatch.setattr(lc.settings, "persistent_cache_dir", None)
    lc.cache.clear()  # an earlier test may have compiled the same program
    w = lc.asarray(np.ones((32, 32), np.float32))
    with lc.profile(None) as prof:
        for _ in range(3):
            w.assign(ops.tanh(nm.elementwise("mul", nm.matmul(w, w), 0.01)))
            lc.sync()
    steps = {e["name"]: e for e in prof.spans()
             if e["name"].startswith("step ") and "unfinished" not in e["name"]}
    compiles = prof.spans("compile")
    assert set(steps) == {"step 1", "step 2", "step 3"} and len(compiles) == 1

    def inside(span, step, slack=0.01):  # us: ts and dur are each rounded to 1 ns
        return (step["ts"] - slack <= span["ts"]
                and span["ts"] + span["dur"] <= step["ts"] + step["dur"] + slack)

    assert inside(compiles[0], steps["step 1"])
    assert not any(inside(c, steps["step 2"]) for c in compiles)
    executes = prof.spans("execute")
    assert [sum(inside(e, steps[f"step {i}"]) for e in executes) for i in (1, 2, 3)] == [1, 1, 1]
    assert steps["step 2"]["ts"] == pytest.approx(steps["step 1"]["ts"] + steps["step 1"]["dur"],
                                                  abs=1.0)


# -- report, names, sources ---------------------------------------------------------------

def test_metrics_report_prints_no_nan():
    lc.to_numpy(ops.exp(lc.asarray(np.ones(3))))
    text = lc.metrics.report()
    assert "nan" not in text.lower() and "trace" in text


def test_hlo_module_is_named_after_the_graph_in_the_sync_log():
    x = lc.asarray(np.ones(3))
    y = ops.sin(ops.exp(x))
    hlo = lc.debug.stablehlo_text([y])
    lc.diagnostics.reset()
    lc.to_numpy(y)
    graph = lc.diagnostics.sync_log()[-1].graph
    assert f"jit_lazy_{graph:08x}" in hlo and "jit_run" not in hlo


def test_ir_text_accepts_frontend_tensors_through_the_protocol():
    lnp = pytest.importorskip("lazy_numpy")
    a = lnp.asarray(np.ones(3))
    b = np.exp(a) + 1
    assert "exp" in lc.debug.ir_text(b) and "exp" in lc.debug.ir_text([b])
    assert lc.debug.ir_dot(b).startswith("digraph")
    assert lnp.debug.ir_text(b) == lc.debug.ir_text([b])
    with pytest.raises(TypeError):
        lc.debug.ir_text([np.ones(3)])


def test_ops_carry_their_source_line_only_when_asked():
    x = lc.asarray(np.ones(3))
    plain = ops.exp(x)
    assert lc.sources.site_of(plain.node) is None  # off by default: tracing pays nothing
    lc.configure(sources=True)
    try:
        y = ops.exp(x); line = _line()  # noqa: E702
        z = nm.softmax(y)  # a composite: every op it records names this line
        z_line = _line() - 1
    finally:
        lc.configure(sources=False)
    assert lc.sources.site_of(y.node) == f"{__file__}:{line}"
    text = lc.debug.ir_text([z])
    assert f"exp(%0) : float64[3]  # {__file__}:{line}" in text
    assert text.count(f"# {__file__}:{z_line}") >= 3
    assert f"test_debug_truth.py:{line}" in lc.debug.ir_dot(z)


def test_env_switches_verify_and_dump_every_compiled_graph(tmp_path):
    """LAZYCORE_VERIFY=1 checks each program; LAZYCORE_DUMP_DIR writes IR + HLO per compile."""
    program = textwrap.dedent("""
        import numpy as np, lazycore as lc
        from lazycore import ops
        x = lc.asarray(np.ones(3))
        y = ops.exp(x)
        print(lc.to_numpy(y).sum(), lc.metrics.counters()["verified_programs"])
    """)
    dump = tmp_path / "dump"
    env = dict(os.environ, LAZYCORE_VERIFY="1", LAZYCORE_DUMP_DIR=str(dump), JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[1] == "1"
    files = sorted(p.name for p in dump.iterdir())
    assert len(files) == 3 and files[0].startswith("0001-lazy_"), files
    ir = next(p for p in dump.iterdir() if p.name.endswith(".ir.txt")).read_text()
    assert "exp(%0)" in ir and "<string>:5" in ir  # the op's line, sources on with verify
    hlo = next(p for p in dump.iterdir() if p.name.endswith(".hlo.txt")).read_text()
    assert "HloModule jit_lazy_" in hlo and "exponential" in hlo


# -- device loader ---------------------------------------------------------------------------

def test_device_loader_keeps_order_values_and_structure():
    batches = [{"x": np.full((2, 3), i, np.float32), "y": (np.int64(i), f"label{i}")}
               for i in range(7)]
    got = list(lc.DeviceLoader(batches, batches_per_execution=3, prefetch=2))
    assert len(got) == 7
    for i, b in enumerate(got):
        assert isinstance(b["x"], lc.Tensor) and not b["x"].is_pending
        np.testing.assert_array_equal(lc.to_numpy(b["x"]), np.full((2, 3), i, np.float32))
        assert int(lc.to_numpy(b["y"][0])) == i and b["y"][1] == f"label{i}"


def test_device_loader_syncs_every_batches_per_execution():
    w = lc.asarray(np.zeros(2))
    lc.diagnostics.reset()
    lc.metrics.reset()
    for batch in lc.DeviceLoader([np.ones(2)] * 6, batches_per_execution=2):
        w.assign(ops.add(w, batch))
        assert lc.metrics.counters().get("sync::explicit", 0) <= 3
    assert lc.metrics.counters()["sync::explicit"] == 3  # after batches 2, 4, 6
    np.testing.assert_array_equal(lc.to_numpy(w), [6.0, 6.0])


def test_device_loader_raises_the_source_error_in_the_loop_and_stops_early():
    def source():
        yield np.ones(1)
        raise KeyError("bad record")

    loader = lc.DeviceLoader(source())
    it = iter(loader)
    next(it)
    with pytest.raises(KeyError, match="bad record"):
        next(it)
    pulled = []

    def endless():
        i = 0
        while True:
            pulled.append(i)
            yield np.full(1, i)
            i += 1

    for i, _b in enumerate(lc.DeviceLoader(endless(), prefetch=2)):
        if i == 2:
            break
    time.sleep(0.1)
    assert len(pulled) <= 6  # a bounded read-ahead, and the thread stopped
    assert not any(t.name == "lazycore-device-loader" for t in threading.enumerate())
    with pytest.raises(ValueError):
        lc.DeviceLoader([], batches_per_execution=0)


def test_device_loader_copies_overlap_the_steps_in_the_profile(tmp_path):
    def slow_batches():
        for i in range(4):
            time.sleep(0.02)  # a data pipeline's own work
            yield np.full((64, 64), i, np.float32)

    w = lc.asarray(np.eye(64, dtype=np.float32))
    path = tmp_path / "trace.json"
    with lc.profile(path) as prof:
        for batch in lc.DeviceLoader(slow_batches(), prefetch=2):
            w.assign(ops.tanh(nm.elementwise("mul", nm.matmul(w, batch), 1e-3)))
            time.sleep(0.03)  # the step's own host work: the next copy runs meanwhile
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert "loader" in names
    copies = [e for e in prof.spans() if e["name"].startswith("h2d batch")]
    steps = [e for e in prof.spans() if e["name"].startswith("step ")]
    assert [c["name"] for c in copies] == [f"h2d batch {i}" for i in range(4)]

    def overlaps(a, b):
        return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]

    # a later batch's copy ran during an earlier step
    assert any(overlaps(c, s) for c in copies[1:] for s in steps[:-1])


def test_docs_table_lists_every_environment_variable_the_code_reads():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    used = set()
    for path in (root / "packages").rglob("*.py"):
        used |= set(re.findall(r"LAZYCORE_[A-Z_]+", path.read_text(encoding="utf-8")))
    table = (root / "docs" / "debugging.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(LAZYCORE_[A-Z_]+)` \|", table, re.M))
    assert used <= documented, sorted(used - documented)
