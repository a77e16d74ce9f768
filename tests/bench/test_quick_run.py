"""CI check: ``python -m benchmarks --quick`` runs every benchmark and writes valid JSON.

Asserts structure only, never timing. Baseline implementations (the frameworks' own
eager and compiled modes) must produce a result; a lazy frontend's row may carry an
``error`` instead (its own test suites cover it), but must then say why.
"""

import json
import os
import subprocess
import sys

from benchmarks import __main__ as runner
from benchmarks._harness import IMPLS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAZY = {"lazy_torch", "lazy_numpy", "lazy_tf"}
ROW_KEYS = {"bench", "case", "impl", "median_s", "runs"}
# Benchmarks owned here, whose rows must use the implementation names.
OWN = {"torchy_chain", "numexpr_expr", "train_step", "trace_overhead", "cold_start"}


def test_quick_suite_runs_and_writes_json(tmp_path):
    out = tmp_path / "quick.json"
    env = dict(os.environ, PYTHONHASHSEED="0", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]

    doc = json.loads(out.read_text())  # strict JSON: no NaN
    assert doc["quick"] is True
    for key in ("cpu", "cpus", "python", "packages", "date_utc"):
        assert key in doc["machine"]
    rows = doc["results"]
    benches = {r["bench"] for r in rows}
    assert OWN <= benches and len(benches) >= len(runner.discover())
    for r in rows:
        assert ROW_KEYS <= set(r), r
        if r["bench"] in OWN:
            assert r["impl"] in IMPLS, r
        if r.get("error"):
            assert r["median_s"] is None and isinstance(r["error"], str) and r["error"]
            assert r["bench"] not in OWN or r["impl"] in LAZY, f"baseline failed: {r}"
        else:
            assert isinstance(r["median_s"], float) and r["median_s"] >= 0, r
            assert r["runs"] >= 1

    own = [r for r in rows if r["bench"] in OWN]
    seen = {(r["bench"], r["impl"]) for r in own}
    for bench, impl in [("torchy_chain", "eager_torch"), ("torchy_chain", "torch_compile"),
                        ("torchy_chain", "jax_jit"), ("numexpr_expr", "numexpr"),
                        ("train_step", "eager_tf"), ("train_step", "tf_xla"),
                        ("trace_overhead", "numpy"), ("cold_start", "jax_jit")]:
        assert (bench, impl) in seen
    train = [r for r in own if r["bench"] == "train_step" and r["impl"] == "eager_torch"]
    assert all(r.get("peak_mb") is not None for r in train if "steps_per_run" not in r), train
    pipelined = [r for r in train if "steps_per_run" in r]  # memory is the plain case's
    assert pipelined and all(r["steps_per_run"] > 1 for r in pipelined), train
    assert [t["status"] for t in doc["targets"]]

    md = (tmp_path / "quick.md").read_text()
    for bench in benches:
        assert f"### {bench}" in md
