"""``python -m benchmarks [--quick] [--only a,b] [--out PATH] [--update-docs]``

Runs every benchmark module in this package (each module not starting with ``_`` that
defines ``run(quick: bool) -> list[dict]``), writes ``{"machine", "results", ...}`` as
JSON (``benchmarks/results/latest.json``; ``quick.json`` for ``--quick``) and the
markdown report next to it (same name, ``.md``). ``--update-docs`` also puts the report
into ``docs/performance.md`` between its ``bench:begin`` / ``bench:end`` markers.
A module that raises becomes one error row; the run goes on.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import pkgutil
import sys
import time

# TF's C++ logging (oneDNN notices, absl warnings) would bury the progress lines.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import traceback

from . import _harness, _machine, _report, _threads

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
# Modules listed here run first, in this order; any other module runs after, by name.
ORDER = ("torchy_chain", "numexpr_expr", "train_step", "trace_overhead", "cold_start")
ROW_KEYS = ("bench", "case", "impl", "median_s", "runs")


def discover() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules([HERE])
             if not m.name.startswith("_") and not m.ispkg]
    return [n for n in ORDER if n in names] + sorted(n for n in names if n not in ORDER)


def _normalize(rows, name: str) -> list[dict]:
    out, skipped = [], 0
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, dict) and r.get("skipped"):
            skipped += 1
            continue
        if not isinstance(r, dict):
            continue
        r = dict(r)
        r.setdefault("bench", name)
        for key in ROW_KEYS:
            r.setdefault(key, None)
        out.append(r)
    if not out and not skipped and _harness.SELECTED is None:
        out.append({"bench": name, "case": "*", "impl": "*", "median_s": None, "runs": 0,
                    "error": "run() returned no rows"})
    return out


def run_module(name: str, quick: bool) -> tuple[list[dict], dict]:
    t0 = time.perf_counter()
    info: dict = {}
    try:
        mod = importlib.import_module(f"benchmarks.{name}")
        run = getattr(mod, "run", None)
        if not callable(run):
            return [], {"skipped": "no run(quick) function"}
        rows = _normalize(run(quick), name)
    except Exception as exc:  # noqa: BLE001 - one broken module must not end the suite
        traceback.print_exc()
        rows = [{"bench": name, "case": "*", "impl": "*", "median_s": None, "runs": 0,
                 "error": f"{type(exc).__name__}: {exc}"[:400]}]
        info["error"] = rows[0]["error"]
    info["wall_s"] = round(time.perf_counter() - t0, 2)
    return rows, info


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def update_docs(markdown: str, path: str = DOCS) -> bool:
    """Replace the text between the markers in docs/performance.md; False if absent."""
    if not os.path.exists(path):
        return False
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        return False
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    _write(path, f"{head}{BEGIN}\n{markdown}\n{END}{tail}")
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="tiny sizes: proves the suite runs")
    p.add_argument("--only", default="", help="comma-separated benchmark names")
    p.add_argument("--threads", type=int, default=None,
                   help="pin every framework to N intra-op threads (busy machines; see _threads)")
    p.add_argument("--impls", default="", help="comma-separated implementations (default all)")
    p.add_argument("--out", default=None, help="JSON path (markdown goes beside it)")
    p.add_argument("--update-docs", action="store_true",
                   help="put the report into docs/performance.md between its markers")
    p.add_argument("--merge", action="store_true",
                   help="keep the rows of the existing --out file that this run did not "
                        "measure (re-run one implementation after a fix); the JSON records it")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    a = p.parse_args(argv)

    names = discover()
    if a.list:
        print("\n".join(names))
        return 0
    if a.only:
        wanted = [n.strip() for n in a.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            p.error(f"unknown benchmark(s): {', '.join(unknown)} (have: {', '.join(names)})")
        names = [n for n in names if n in wanted]
    if a.threads:
        _threads.pin(a.threads)
    if a.impls:
        _harness.SELECTED = {i.strip() for i in a.impls.split(",") if i.strip()}
    out = a.out or os.path.join(HERE, "results", "quick.json" if a.quick else "latest.json")

    machine = _machine.describe()
    results, modules = [], {}
    t0 = time.perf_counter()
    for name in names:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        rows, info = run_module(name, a.quick)
        results += rows
        modules[name] = info
        n_err = sum(1 for r in rows if r.get("error"))
        print(f"[bench] {name}: {len(rows)} rows, {n_err} errors, {info['wall_s']} s",
              file=sys.stderr, flush=True)
    machine["load_average_end"] = _machine.load_average()
    doc = {"machine": machine, "quick": a.quick, "wall_s": round(time.perf_counter() - t0, 2),
           "benchmarks": modules, "results": results}
    if a.merge and os.path.exists(out):
        doc = _merge(out, doc)
    doc["targets"] = _report.targets(doc["results"])
    _write(out, json.dumps(_finite(doc), indent=1, default=_jsonable, allow_nan=False) + "\n")
    markdown = _report.render(doc)
    _write(os.path.splitext(out)[0] + ".md", markdown + "\n")
    print(markdown)
    print(f"[bench] wrote {out}", file=sys.stderr)
    if a.update_docs and not update_docs(markdown):
        print(f"[bench] {DOCS} has no {BEGIN}/{END} markers: not updated", file=sys.stderr)
    return 0


def _merge(path: str, doc: dict) -> dict:
    """Re-measured rows replace their namesakes in the run at ``path`` (kept in place);
    the earlier run's machine block stays the document's, and ``remeasured`` records
    which rows came from this later run and on what machine state."""
    with open(path) as f:
        old = json.load(f)
    by_key = {(r["bench"], r["case"], r["impl"]): r for r in doc["results"]}
    fresh = [f"{b} {c} {i}" for b, c, i in by_key]
    merged = []
    for r in old.get("results", []):
        merged.append(by_key.pop((r["bench"], r["case"], r["impl"]), r))
    merged += list(by_key.values())
    return {**old, "results": merged,
            "benchmarks": {**old.get("benchmarks", {}), **doc["benchmarks"]},
            "remeasured": old.get("remeasured", []) + [{"machine": doc["machine"],
                                                         "rows": fresh}]}


def _finite(value):
    """NaN and infinities are not JSON: they become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _jsonable(value):
    """NumPy scalars and other stragglers in rows: plain JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple | set):
        return list(value)
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
