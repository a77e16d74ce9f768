"""Fast checks of the benchmark harness itself: guarding, checking, reporting, discovery.
No timing is asserted anywhere."""

import json

import numpy as np
import pytest

from benchmarks import __main__ as runner
from benchmarks import _harness, _report


def test_discovery_finds_every_benchmark_module():
    names = runner.discover()
    for name in ("torchy_chain", "numexpr_expr", "train_step", "trace_overhead", "cold_start"):
        assert name in names
    assert not [n for n in names if n.startswith("_")]


def test_a_failing_implementation_becomes_an_error_row():
    def setup():
        raise ImportError("frontend not ready")

    row, first = _harness.measure("b", "c", "lazy_torch", setup, quick=True)
    assert first is None
    assert row["median_s"] is None and row["runs"] == 0
    assert row["error"].startswith("ImportError: frontend not ready")


def test_a_wrong_result_is_an_error_row_not_a_timing():
    row, _ = _harness.measure("b", "c", "numpy", lambda: (lambda: np.ones(3)), quick=True,
                              reference=np.zeros(3))
    assert "WrongResult" in row["error"]


def test_a_good_implementation_reports_median_and_compile_separately():
    calls = []
    row, first = _harness.measure("b", "c", "numpy", lambda: (lambda: calls.append(1) or 2.0),
                                  quick=True, reference=2.0)
    assert first == 2.0 and "error" not in row
    assert row["runs"] == len(calls) - 1 - _harness.QUICK.warmup  # first call timed apart
    assert row["median_s"] >= 0 and row["compile_s"] >= 0


def test_check_close_compares_shapes_and_values():
    assert _harness.check_close(np.ones(2), np.ones(2), 1e-6, 0) == 0.0
    with pytest.raises(_harness.WrongResult):
        _harness.check_close(np.ones(2), np.ones(3), 1e-6, 0)
    with pytest.raises(_harness.WrongResult):
        _harness.check_close(1.0, 1.1, 1e-6, 0)


def _rows():
    r = _harness.row
    return [
        r("torchy_chain", "1000x1000/32ops", "eager_torch", median_s=0.020, runs=5),
        r("torchy_chain", "1000x1000/32ops", "lazy_torch", median_s=0.002, runs=5),
        r("torchy_chain", "1000x1000/32ops", "jax_jit", median_s=0.0019, runs=5),
        r("numexpr_expr", "linear", "lazy_numpy", median_s=None, runs=0, error="Boom: x"),
        r("numexpr_expr", "linear", "numpy", median_s=0.004, runs=5),
    ]


def test_report_ratios_targets_and_errors():
    rows = _rows()
    targets = {t["target"]: t for t in _report.targets(rows)}
    speed = next(t for k, t in targets.items() if "speedup over eager PyTorch" in k)
    assert speed["value"] == pytest.approx(10.0) and speed["status"] == "met"
    peer = next(t for k, t in targets.items() if "lazy_torch ÷ jax.jit" in k and "torchy" in k)
    assert peer["value"] == pytest.approx(0.002 / 0.0019) and peer["status"] == "met"
    geo = next(t for k, t in targets.items() if "over NumPy" in k)
    assert geo["status"] == "n/a"  # lazy_numpy failed: not measured, not "met"
    doc = {"machine": {"cpu": "x"}, "results": rows}
    md = _report.render(doc)
    assert "### torchy_chain" in md and "10.00×" in md
    assert "error[1]" in md and "Boom: x" in md


def test_update_docs_replaces_only_between_markers(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text(f"intro\n{runner.BEGIN}\nold\n{runner.END}\noutro\n")
    assert runner.update_docs("NEW TABLE", str(doc))
    text = doc.read_text()
    assert "old" not in text and "NEW TABLE" in text
    assert text.startswith("intro\n") and text.endswith("outro\n")
    assert not runner.update_docs("x", str(tmp_path / "missing.md"))


def test_non_finite_numbers_become_null_json():
    assert json.dumps(runner._finite({"a": [float("nan"), 1.0]})) == '{"a": [null, 1.0]}'


def test_merge_replaces_remeasured_rows_and_keeps_the_rest(tmp_path):
    r = _harness.row
    old = {"machine": {"date_utc": "earlier"}, "benchmarks": {"a": {}},
           "results": [r("a", "c", "lazy_tf", median_s=None, runs=0, error="x"),
                       r("a", "c", "eager_tf", median_s=1.0, runs=5)]}
    path = tmp_path / "latest.json"
    path.write_text(json.dumps(old))
    new = {"machine": {"date_utc": "later"}, "benchmarks": {"a": {}},
           "results": [r("a", "c", "lazy_tf", median_s=0.5, runs=5)]}
    doc = runner._merge(str(path), new)
    assert [(x["impl"], x["median_s"]) for x in doc["results"]] == [("lazy_tf", 0.5),
                                                                     ("eager_tf", 1.0)]
    assert doc["machine"]["date_utc"] == "earlier"
    assert doc["remeasured"][0]["machine"]["date_utc"] == "later"
    assert "Re-measured in a later run (later UTC" in _report.render(doc)
