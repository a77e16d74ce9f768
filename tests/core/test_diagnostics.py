"""Debugging tools: sync log, recompile summary, allow_sync, Chrome trace, DOT and fusions."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lazycore as lc
from lazycore import numeric as nm
from lazycore import ops


@pytest.fixture(autouse=True)
def _fresh_diagnostics():
    lc.diagnostics.reset()
    yield
    lc.diagnostics.reset()


def _line_of(marker: str) -> int:
    """Line number in this file of the line containing ``marker``."""
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


# -- sync log ---------------------------------------------------------------------------

def test_sync_log_records_cause_site_size_and_hit():
    x = lc.asarray(np.arange(3.0))
    for _ in range(2):
        y = ops.exp(ops.mul(x, x))
        lc.to_numpy_many([y], cause="item")  # MARK-item
    log = lc.diagnostics.sync_log()
    assert [r.cause for r in log] == ["item", "item"]
    assert [r.hit for r in log] == [False, True]
    assert log[0].reason == "first compile" and log[1].reason is None
    assert log[0].site == f"{__file__}:{_line_of('MARK-item')}"
    assert log[0].ops == 2 and log[0].inputs == 1 and log[0].outputs == 1
    assert log[0].graph == log[1].graph
    assert "cache hit" in log[1].line() and "cause=item" in log[1].line()


def test_recompile_reason_names_changed_input_dim():
    for n in (3, 4):
        lc.to_numpy(ops.exp(lc.asarray(np.ones((n, 2)))))  # same site, new shape
    second = lc.diagnostics.sync_log()[-1]
    assert not second.hit
    assert "input 0 shape float64[3,2] -> float64[4,2]" in second.reason


def test_debug_switch_prints_one_line_per_sync(capsys):
    lc.configure(debug=True)
    try:
        x = lc.asarray(np.ones(2))
        lc.to_numpy_many([ops.neg(x)], cause="print")
        lc.to_numpy_many([ops.neg(x)], cause="print")
    finally:
        lc.configure(debug=False)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[lazycore]")]
    assert len(lines) == 2
    assert "cause=print" in lines[0] and "test_diagnostics.py" in lines[0]
    assert "ops=1" in lines[0] and "cache miss, compiled in" in lines[0]
    assert lines[1].endswith("cache hit")


def test_debug_off_prints_nothing(capsys):
    lc.to_numpy(ops.neg(lc.asarray(np.ones(2))))
    assert "[lazycore]" not in capsys.readouterr().err


def test_cause_vocabulary_is_documented():
    for cause in ("explicit", "item", "print", "host_transfer", "fallback:<op>", "materialize"):
        assert cause in lc.diagnostics.CAUSES


# -- summary ----------------------------------------------------------------------------

def test_summary_names_recompile_storm_and_varying_dim():
    for n in range(1, lc.diagnostics.STORM_COMPILES + 2):
        lc.to_numpy(nm.sum(lc.asarray(np.ones((n, 3)))))  # MARK-storm
    text = lc.diagnostics.summary()
    site = f"{__file__}:{_line_of('MARK-storm')}"
    assert f"compiled {lc.diagnostics.STORM_COMPILES + 1} times at {site}" in text
    assert "input 0 shape varies in dim 0" in text and "pad or bucket" in text


def test_summary_flags_dtype_changes_and_graph_changes():
    avals = [(lc.Aval((2,), np.dtype(d)),) for d in ("float32", "float64")]
    assert "input 0 dtype varies (float32, float64)" in lc.diagnostics.explain_storm(avals)
    same = [(lc.Aval((2,), np.dtype("float32")),)] * 3
    assert "graph changes between steps" in lc.diagnostics.explain_storm(same, {3, 4, 5})


def test_summary_flags_frequent_implicit_syncs_but_not_explicit_ones():
    x = lc.asarray(np.ones(2))
    for _ in range(lc.diagnostics.FREQUENT_SYNCS):
        x.assign(ops.neg(x))
        lc.sync()
    assert lc.diagnostics.summary() == ""
    assert lc.diagnostics.steps() == lc.diagnostics.FREQUENT_SYNCS
    for _ in range(lc.diagnostics.FREQUENT_SYNCS):
        x.assign(ops.neg(x))
        lc.to_numpy_many([x], cause="item")
    text = lc.diagnostics.summary()
    assert f"{lc.diagnostics.FREQUENT_SYNCS} implicit syncs" in text and "item x" in text
    assert "(1.0 per step)" in text


def test_summary_printed_at_exit_only_when_debugging():
    script = textwrap.dedent("""
        import numpy as np, lazycore as lc
        for n in range(1, 8):
            lc.to_numpy(lc.ops.exp(lc.asarray(np.ones(n))))
    """)
    env = dict(os.environ, LAZYCORE_DEBUG="1", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True)
    assert "lazycore summary:" in out.stderr and "compiled 7 times at <string>:4" in out.stderr
    assert "input 0 shape varies in dim 0" in out.stderr
    env["LAZYCORE_DEBUG"] = "0"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stderr.strip() == ""


# -- allow_sync -------------------------------------------------------------------------

def test_allow_sync_false_raises_on_implicit_sync_naming_the_line():
    x = lc.asarray(np.ones(3))
    y = ops.exp(x)
    with lc.allow_sync(False):
        with pytest.raises(lc.ImplicitSyncError) as info:
            lc.to_numpy_many([y], cause="item")  # MARK-hidden-item
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, lc.LazyError)
    assert err.cause == "item"
    assert err.site == f"{__file__}:{_line_of('MARK-hidden-item')}"
    assert "MARK-hidden-item" in str(err)  # quotes the source line
    assert y.is_pending  # nothing ran
    np.testing.assert_allclose(lc.to_numpy(y), np.exp(np.ones(3)))  # fine outside


def test_allow_sync_false_lets_explicit_sync_run_but_not_host_reads():
    x = lc.asarray(np.ones(3))
    with lc.allow_sync(False):
        y = ops.exp(x)
        lc.sync()
        assert not y.is_pending
        z = ops.neg(y)
        lc.sync(cause="mark_step")  # a frontend's step barrier
        assert not z.is_pending
        with pytest.raises(lc.ImplicitSyncError, match="cause=host_transfer"):
            lc.to_numpy(y)
        with pytest.raises(lc.ImplicitSyncError, match="cause=materialize"):
            lc.materialize(ops.neg(y))
        with pytest.raises(lc.ImplicitSyncError):
            lc.fallback("sort", np.sort, [ops.neg(y)])
    assert lc.diagnostics.sync_allowed()


def test_allow_sync_nests_and_restores_after_an_error():
    x = ops.exp(lc.asarray(np.ones(2)))
    with pytest.raises(lc.ImplicitSyncError):
        with lc.allow_sync(False):
            with lc.allow_sync(True):
                lc.to_numpy(ops.neg(x))  # allowed in the inner block
            lc.to_numpy(x)
    assert lc.diagnostics.sync_allowed()
    lc.to_numpy(x)


# -- profile ----------------------------------------------------------------------------

def test_profile_writes_chrome_trace_with_phases_and_steps(tmp_path):
    path = tmp_path / "trace.json"
    w = lc.asarray(np.ones((4, 4), np.float32))
    with lc.profile(path) as prof:
        for _ in range(3):
            w.assign(ops.tanh(nm.matmul(w, w)))
            lc.sync()
            lc.to_numpy(w)
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert events == prof.events
    names = [e["name"] for e in events if e["ph"] == "X"]
    for phase in ("trace", "lower", "compile", "execute", "host_wait"):
        assert phase in names, phase
    assert names.count("compile") == 1 and names.count("execute") == 3
    assert [n for n in names if n.startswith("step")] == ["step 1", "step 2", "step 3",
                                                           "step 4 (unfinished)"]
    for e in events:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0 and {"pid", "tid", "cat"} <= set(e)
    syncs = [e for e in events if e["ph"] == "i"]
    assert len(syncs) == 3 and syncs[0]["args"]["cache"] == "miss"
    assert syncs[1]["args"]["cache"] == "hit" and "test_diagnostics.py" in syncs[0]["args"]["site"]
    trace_ops = sum(e["args"]["ops"] for e in events if e["name"] == "trace")
    assert trace_ops >= 3 * 2  # matmul + tanh per step at least
    # spans on the phase track do not overlap
    phases = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                    if e["ph"] == "X" and e["tid"] == 1)
    assert all(a[1] <= b[0] + 1.0 for a, b in zip(phases, phases[1:], strict=False))


def test_profile_is_off_outside_the_block_and_not_nestable(tmp_path):
    with lc.profile(None) as prof:
        with pytest.raises(RuntimeError):
            with lc.profile(None):
                pass
    count = len(prof.events)
    lc.to_numpy(ops.exp(lc.asarray(np.ones(5))))
    assert len(prof.events) == count
    assert lc.metrics._span_hooks == [] and lc.diagnostics._listeners == []


# -- IR dumps ---------------------------------------------------------------------------

def test_ir_dot_is_a_digraph_with_one_node_per_ir_node():
    x = lc.asarray(np.ones((2, 2)))
    y = nm.elementwise("add", ops.exp(x), 2.5)
    dot = lc.debug.ir_dot(y)
    assert dot.startswith('digraph "lazycore" {') and dot.endswith("}")
    nodes = [ln for ln in dot.splitlines() if "[label=" in ln]
    edges = [ln for ln in dot.splitlines() if "->" in ln]
    text_lines = lc.debug.ir_text([y]).splitlines()[:-1]  # minus "return"
    assert len(nodes) == len(text_lines)
    assert len(edges) == sum(ln.count("%") - 1 for ln in text_lines)
    assert any("param 2.5" in ln and "khaki" in ln for ln in nodes)
    assert sum("peripheries=2" in ln for ln in nodes) == 1
    assert dot.count("{") == dot.count("}")


def test_fusions_show_what_xla_fused():
    x = lc.asarray(np.ones((8, 8), np.float32))
    y = x
    for _ in range(6):
        y = ops.tanh(ops.exp(ops.neg(y)))
    fused = lc.debug.fusions(y)
    assert lc.debug.fusion_count([y]) == len(fused) >= 1
    assert len(fused) < 18  # 18 elementwise ops fused into far fewer kernels
    inside = [op for f in fused for op in f.ops]
    assert inside.count("tanh") == 6 and "exponential" in inside
    assert all(f.kind.startswith("k") for f in fused)


def test_parse_fusions_on_fixed_text():
    hlo = textwrap.dedent("""\
        %fused_computation (param_0: f32[4]) -> f32[4] {
          %param_0 = f32[4]{0} parameter(0)
          %exp.0 = f32[4]{0} exponential(%param_0)
          ROOT %neg.0 = f32[4]{0} negate(%exp.0)
        }

        ENTRY %main (a: f32[4]) -> (f32[4], f32[]) {
          %a = f32[4]{0} parameter(0)
          %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused_computation
          %t = (f32[4]{0}, f32[]) tuple(%f, %f)
          ROOT %g = f32[4]{0} fusion(%f), kind=kInput, calls=%missing
        }
    """)
    fused = lc.debug.parse_fusions(hlo)
    assert [(f.name, f.kind, f.ops) for f in fused] == [
        ("f", "kLoop", ("exponential", "negate")), ("g", "kInput", ())]
    assert str(fused[0]) == "f (kLoop): exponential, negate"


def test_recompile_for_a_donation_change_says_so():
    w = lc.asarray(np.ones(3))
    hold = [lc.Tensor(w.node)]  # a second handle keeps the input buffer alive: no donation
    for _ in range(2):
        w.assign(ops.neg(w))    # the same graph twice, at the same line
        lc.sync()
        hold.clear()            # now the input may be overwritten in place
    first, second = lc.diagnostics.sync_log()[-2:]
    assert first.graph == second.graph and first.site == second.site
    if lc.settings.donate:
        assert not second.hit and "buffer donation" in second.reason
    else:
        assert second.hit
