"""The markdown report: one pivot table per benchmark, ratios, and the issue's targets.

Ratios are computed from the rows of one run. "× vs eager" is the speedup of an
implementation over its framework's eager baseline (higher is better); "÷ peer" is a
lazy frontend's time over its peer's (the limit it is held to; lower is better).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ._harness import IMPLS, geomean

# impl -> the eager baseline its speedup is measured against
EAGER_OF = {"eager_torch": "eager_torch", "lazy_torch": "eager_torch",
            "torch_compile": "eager_torch", "numpy": "numpy", "lazy_numpy": "numpy",
            "numexpr": "numpy", "eager_tf": "eager_tf", "lazy_tf": "eager_tf",
            "tf_xla": "eager_tf"}
# lazy frontend -> the peer whose time it is compared with
PEER_OF = {"lazy_torch": "jax_jit", "lazy_numpy": "numexpr", "lazy_tf": "tf_xla"}
LAZY = ("lazy_torch", "lazy_numpy", "lazy_tf")


def fmt_time(s) -> str:
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "–"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_ratio(r) -> str:
    return "–" if r is None or not math.isfinite(r) else f"{r:.2f}×"


def _ok(r: dict) -> bool:
    return r.get("median_s") is not None and "error" not in r


def _index(rows) -> dict:
    return {(r["bench"], r["case"], r["impl"]): r for r in rows}


def _time(idx, bench, case, impl):
    r = idx.get((bench, case, impl))
    return r["median_s"] if r is not None and _ok(r) else None


def _ratio(a, b):
    return a / b if a and b else None


# Table columns: each framework's eager, lazy and compiled runs together; jax.jit last.
COLUMNS = tuple(i for i in IMPLS if i != "jax_jit") + ("jax_jit",)


def _order(impls) -> list[str]:
    known = [i for i in COLUMNS if i in impls]
    return known + sorted(i for i in impls if i not in COLUMNS)


def _eager_of(impl: str, present) -> str | None:
    if impl == "jax_jit":  # hand-written JAX is set against the group's first eager framework
        return next((e for e in ("eager_torch", "numpy", "eager_tf") if e in present), None)
    return EAGER_OF.get(impl)


def _table(header: list[str], lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cells) + " |" for cells in lines]
    return out


def bench_table(bench: str, rows: list[dict]) -> list[str]:
    mine = [r for r in rows if r["bench"] == bench]
    idx = _index(mine)
    cases = list(dict.fromkeys(r["case"] for r in mine))
    impls = _order({r["impl"] for r in mine})
    per_op = bench == "trace_overhead"
    lazies = [i for i in LAZY if i in impls]
    header = ["case"] + impls
    for lz in lazies:
        if not per_op and EAGER_OF[lz] in impls:
            header.append(f"{lz} × vs {EAGER_OF[lz]}")
        if PEER_OF[lz] in impls:
            header.append(f"{lz} ÷ {PEER_OF[lz]}")
    if per_op:
        header = ["case"] + [f"{i} (µs/op)" for i in impls]
    lines, errors = [], []
    for case in cases:
        cells = [case]
        for impl in impls:
            r = idx.get((bench, case, impl))
            if r is None:
                cells.append("")
            elif not _ok(r):
                errors.append(f"{case} / {impl}: {r.get('error', 'no result')}")
                cells.append(f"error[{len(errors)}]")
            elif per_op:
                cells.append(f"{r['median_s'] * 1e6:.2f}")
            else:
                cells.append(fmt_time(r["median_s"]))
        if not per_op:
            for lz in lazies:
                t = _time(idx, bench, case, lz)
                if EAGER_OF[lz] in impls:
                    cells.append(fmt_ratio(_ratio(_time(idx, bench, case, EAGER_OF[lz]), t)))
                if PEER_OF[lz] in impls:
                    cells.append(fmt_ratio(_ratio(t, _time(idx, bench, case, PEER_OF[lz]))))
        lines.append(cells)
    out = _table(header, lines)
    extra = _extra_tables(bench, mine, cases, impls)
    if extra:
        out += [""] + extra
    if errors:
        out += [""] + [f"- error[{i}] {e}" for i, e in enumerate(errors, 1)]
    return out


def _extra_tables(bench, rows, cases, impls) -> list[str]:
    """First-call (compile) times and, where measured, peak memory."""
    idx = _index(rows)
    out = []
    for key, title, fmt in (("compile_s", "first call incl. compile", fmt_time),
                            ("peak_mb", "peak memory rise (MB)", lambda v: f"{v:.0f}"),
                            # real_programs: what explains a lazy figure
                            ("compiles_after_second_iteration", "compiles after the 2nd "
                             "iteration (first run)", lambda v: f"{v:g}"),
                            ("compiles_per_warm_run", "compiles per warm run", lambda v: f"{v:g}"),
                            ("syncs_per_iteration", "syncs per iteration (warm)",
                             lambda v: f"{v:.2f}"),
                            ("trace_us_per_op", "tracing µs per recorded op", lambda v: f"{v:.1f}")):
        if not any(key in r for r in rows):
            continue
        lines = []
        for case in cases:
            cells = [case]
            for impl in impls:
                r = idx.get((bench, case, impl))
                cells.append(fmt(r[key]) if r is not None and r.get(key) is not None else "")
            if any(cells[1:]):  # a case that does not report this figure gets no line
                lines.append(cells)
        out += [f"*{title}:*", ""] + _table(["case"] + impls, lines) + [""]
    return out[:-1] if out else out


# --- targets ----------------------------------------------------------------------------------

def _t(rows, bench, case, impl):
    return _time(_index(rows), bench, case, impl)


def _trace_worst(rows, impl):
    vals = [r["median_s"] * 1e6 for r in rows
            if r["bench"] == "trace_overhead" and r["impl"] == impl and _ok(r)]
    return max(vals) if vals else None


def _trace_growth(rows, impl):
    """Per-op cost at the longest chain over the shortest, worst over the op kinds."""
    worst = None
    for kind in ("tensor", "scalar"):
        pts = sorted((r["n_ops"], r["median_s"]) for r in rows
                     if r["bench"] == "trace_overhead" and r["impl"] == impl and _ok(r)
                     and r["case"].startswith(kind + "/"))
        if len(pts) >= 2:
            g = pts[-1][1] / pts[0][1]
            worst = g if worst is None else max(worst, g)
    return worst


def _numexpr_geo(rows, impl, other):
    cases = {r["case"] for r in rows if r["bench"] == "numexpr_expr" and r["case"] != "geomean"}
    ratios = [_ratio(_t(rows, "numexpr_expr", c, other), _t(rows, "numexpr_expr", c, impl))
              for c in cases]
    return geomean(ratios) if ratios and all(ratios) else None


def _cold(rows, impl, mode="cache_second"):
    for r in rows:
        if r["bench"] == "cold_start" and r["impl"] == impl and r.get("mode") == "no_cache":
            stem = r["case"].rsplit("/", 1)[0]
            return _ratio(r.get("median_s"), _t(rows, "cold_start", f"{stem}/{mode}", impl))
    return None


# (description, measured value, predicate, how the value reads)
TARGETS: list[tuple[str, Callable, Callable, str]] = [
    ("torchy_chain 1000×1000/32 ops: lazy_torch speedup over eager PyTorch ≥ 10×",
     lambda R: _ratio(_t(R, "torchy_chain", "1000x1000/32ops", "eager_torch"),
                      _t(R, "torchy_chain", "1000x1000/32ops", "lazy_torch")),
     lambda v: v >= 10, "×"),
    ("torchy_chain 1000×1000/32 ops: lazy_torch ÷ jax.jit ≤ 1.15",
     lambda R: _ratio(_t(R, "torchy_chain", "1000x1000/32ops", "lazy_torch"),
                      _t(R, "torchy_chain", "1000x1000/32ops", "jax_jit")),
     lambda v: v <= 1.15, "×"),
    ("numexpr_expr: lazy_numpy geomean speedup over numexpr ≥ 1",
     lambda R: _numexpr_geo(R, "lazy_numpy", "numexpr"), lambda v: v >= 1, "×"),
    ("numexpr_expr: lazy_numpy geomean speedup over NumPy ≥ 2",
     lambda R: _numexpr_geo(R, "lazy_numpy", "numpy"), lambda v: v >= 2, "×"),
    ("train_step mlp: lazy_torch ÷ jax.jit ≤ 1.15",
     lambda R: _ratio(_t(R, "train_step", "mlp", "lazy_torch"), _t(R, "train_step", "mlp", "jax_jit")),
     lambda v: v <= 1.15, "×"),
    ("train_step mlp: lazy_tf ÷ tf.function(jit_compile=True) ≤ 1.15",
     lambda R: _ratio(_t(R, "train_step", "mlp", "lazy_tf"), _t(R, "train_step", "mlp", "tf_xla")),
     lambda v: v <= 1.15, "×"),
    ("train_step mlp_pipelined (informational, loss read every 10th step): lazy_torch ÷ jax.jit"
     " ≤ 1.15",
     lambda R: _ratio(_t(R, "train_step", "mlp_pipelined", "lazy_torch"),
                      _t(R, "train_step", "mlp_pipelined", "jax_jit")),
     lambda v: v <= 1.15, "×"),
    ("train_step mlp_pipelined (informational, loss read every 10th step): lazy_tf ÷ "
     "tf.function(jit_compile=True) ≤ 1.15",
     lambda R: _ratio(_t(R, "train_step", "mlp_pipelined", "lazy_tf"),
                      _t(R, "train_step", "mlp_pipelined", "tf_xla")),
     lambda v: v <= 1.15, "×"),
    ("trace_overhead: lazy_torch worst µs/op ≤ 10",
     lambda R: _trace_worst(R, "lazy_torch"), lambda v: v <= 10, "µs"),
    ("trace_overhead: lazy_numpy worst µs/op ≤ 5",
     lambda R: _trace_worst(R, "lazy_numpy"), lambda v: v <= 5, "µs"),
    ("trace_overhead: lazy_tf worst µs/op ≤ 5",
     lambda R: _trace_worst(R, "lazy_tf"), lambda v: v <= 5, "µs"),
] + [
    (f"trace_overhead: {lz} per-op cost, longest ÷ shortest chain ≤ 1.5 (no growth)",
     lambda R, lz=lz: _trace_growth(R, lz), lambda v: v <= 1.5, "×") for lz in LAZY
] + [
    (f"cold_start: {lz} first step, no cache ÷ second process with cache ≥ 5",
     lambda R, lz=lz: _cold(R, lz), lambda v: v >= 5, "×") for lz in LAZY
] + [
    (f"cold_start (informational): {lz}, the same with PYTHONHASHSEED=0 in both processes",
     lambda R, lz=lz: _cold(R, lz, "cache_second_seeded"), lambda v: v >= 5, "×") for lz in LAZY
]


def _real(rows, impl, size, key, pick):
    """``pick`` over the ``real_programs`` rows of one lazy frontend at one size."""
    vals = [r[key] for r in rows if r["bench"] == "real_programs" and r["impl"] == impl
            and r.get("size") == size and r.get(key) is not None]
    return pick(vals) if vals else None


TARGETS += [
    ("real_programs 10×: every program's lazy_numpy speedup over NumPy ≥ 1 (worst)",
     lambda R: _real(R, "lazy_numpy", "10x", "speedup", min), lambda v: v >= 1, "×"),
    ("real_programs 10×: lazy_numpy geomean speedup over NumPy ≥ 2",
     lambda R: _real(R, "lazy_numpy", "10x", "speedup", geomean), lambda v: v >= 2, "×"),
    ("real_programs published size: every program's lazy_numpy speedup ≥ 0.8 (worst)",
     lambda R: _real(R, "lazy_numpy", "published", "speedup", min), lambda v: v >= 0.8, "×"),
] + [
    (f"real_programs {size}: {lz} first run ÷ eager first run ≤ 2 (worst program)",
     lambda R, lz=lz, size=size: _real(R, lz, size, "first_run_ratio", max),
     lambda v: v <= 2, "×") for lz in ("lazy_numpy", "lazy_torch") for size in ("published", "10x")
] + [
    (f"real_programs {size}: {lz} compiles after the second iteration, most of any program = 0",
     lambda R, lz=lz, size=size: _real(R, lz, size, "compiles_after_second_iteration", max),
     lambda v: v == 0, "n") for lz in ("lazy_numpy", "lazy_torch") for size in ("published", "10x")
]


def targets(rows) -> list[dict]:
    out = []
    for desc, value, ok, unit in TARGETS:
        try:
            v = value(rows)
        except Exception:  # noqa: BLE001 - a target over missing rows is "not measured"
            v = None
        status = "n/a" if v is None else ("met" if ok(v) else "MISSED")
        out.append({"target": desc, "value": v, "unit": unit, "status": status})
    return out


def render(doc: dict) -> str:
    rows = doc["results"]
    m = doc["machine"]
    lines = [f"Run {m.get('date_utc')} UTC on {m.get('cpu')} ({m.get('cpus_usable')} usable "
             f"CPUs, {m.get('mem_gb')} GB), {m.get('platform')}, Python {m.get('python')}; "
             f"load average {m.get('load_average_start')} at start, "
             f"{m.get('load_average_end')} at end; "
             f"git {m.get('git', {}).get('commit')}{' (dirty)' if m.get('git', {}).get('dirty') else ''}"
             f"{'; every framework pinned to ' + m['env']['LAZYTENSOR_BENCH_THREADS'] + ' intra-op thread(s) (--threads)' if m.get('env', {}).get('LAZYTENSOR_BENCH_THREADS') else ''}"
             f"{'; QUICK run (tiny sizes: proves the suite runs, times mean nothing)' if doc.get('quick') else ''}.",
             *[line for again in doc.get("remeasured", []) for line in (
                 "", f"Re-measured in a later run ({again['machine'].get('date_utc')} UTC, load "
                     f"average {again['machine'].get('load_average_start')}) and merged in: "
                     + ", ".join(again["rows"]) + ".")],
             "", "Versions: " + ", ".join(f"{k} {v}" for k, v in m.get("packages", {}).items()),
             "", "Medians; times are per step / per evaluation and end in a host-visible result.",
             ""]
    lines += ["### Targets", ""]
    tlines = []
    for t in targets(rows):
        v = t["value"]
        shown = "–" if v is None else (f"{v:.2f} µs" if t["unit"] == "µs" else
                                       f"{v:g}" if t["unit"] == "n" else f"{v:.2f}×")
        tlines.append([t["target"], shown, t["status"]])
    lines += _table(["target", "measured", "status"], tlines) + [""]
    benches = list(dict.fromkeys(r["bench"] for r in rows))
    for bench in benches:
        lines += [f"### {bench}", ""] + bench_table(bench, rows) + [""]
    return "\n".join(lines)
