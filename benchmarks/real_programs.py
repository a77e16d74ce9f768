"""Published NumPy programs, run unchanged eagerly and lazily in the same process.

Each program in ``benchmarks/_real_programs`` is the author's code as a function
``program(np, inputs)``: eagerly ``np`` is NumPy and the inputs are NumPy arrays; lazily
``np`` is ``namespace.lazy_numpy_namespace()`` (NumPy with lazy_numpy's creation
functions) and the array inputs are wrapped by ``lnp.asarray``. Every program runs at
its published size and at ten times that size (``--quick``: a few programs at tiny
sizes). Per program and size:

- the first run of each implementation (lazy: with an empty compile cache, so it
  includes tracing and compilation), then warm runs, NumPy and lazy_numpy interleaved
  (their order alternating), medians; the time is quoted per loop iteration;
- the lazy result checked against NumPy's (values, shapes, dtypes);
- compiles: in the first run, in a run of the same program cut to two iterations (also
  with an empty cache), their difference (= compiles after the second iteration, which
  should be 0) and per warm run; per warm run also syncs by cause, traced ops, cache hits,
  fallbacks and tracing µs/op (what explains a slow lazy figure).

lazy_torch ports (``_real_programs/torch_ports.py``) of two programs run the same way
against eager PyTorch.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import os
import statistics
import time

import numpy as np

from ._harness import ImplTimeout, _deadline, error_text, progress, row, selected

BENCH = "real_programs"
QUICK_PROGRAMS = ("game_of_life", "softmax_loss", "heat_diffusion")
MIN_RUNS, MAX_RUNS, MIN_TIME_S = 3, 20, 1.0
CASE_BUDGET_S = 20.0  # timed rounds stop after this (at least MIN_RUNS each)
COMPILE_WAIT_S = 30.0  # how long a warm-up waits for background compiles (tier "auto")
# Re-run some cases only (with ``--merge``): LAZYTENSOR_REAL_PROGRAMS=kmeans,nbody/10x
CASES_VAR = "LAZYTENSOR_REAL_PROGRAMS"
QUICK_RUNS = 2  # --quick: proves the suite runs, times mean nothing
LAZY_TIMEOUT_S = 300.0  # a lazy first run past this is an error row, the run goes on
COUNTERS = ("syncs", "compiles", "cache_hits", "cache_misses", "traced_ops", "fallbacks",
            "executions", "host_transfers")


def _module(name):
    return importlib.import_module(f"benchmarks._real_programs.{name}")


def sizes(quick: bool) -> list[tuple[str, str]]:
    from ._real_programs import PROGRAMS

    if quick:
        return [(p, "tiny") for p in QUICK_PROGRAMS]
    return [(p, s) for s in ("published", "10x") for p in PROGRAMS]


# --- running one program ------------------------------------------------------------------

def _flat(result) -> list:
    out = []
    for r in result if isinstance(result, tuple | list) else (result,):
        out += _flat(r) if isinstance(r, tuple | list) else [r]
    return out


def host(result) -> list[np.ndarray]:
    """The program's results as NumPy values (a lazy result is materialized here)."""
    return [np.asarray(r) for r in _flat(result)]


class Impl:
    """One way to run a program: ``run()`` gives fresh state inputs and returns host
    results. ``setup`` converts the inputs once (not timed), as a user loads data once."""

    def __init__(self, mod, inputs: dict, lazy: bool):
        self.mod, self.lazy = mod, lazy
        self.inputs = inputs
        if lazy:
            import lazy_numpy as lnp

            from ._real_programs.namespace import lazy_numpy_namespace

            self.np, self._wrap = lazy_numpy_namespace(), lnp.asarray
        else:
            self.np, self._wrap = np, np.copy
        self.loaded = {k: (self._wrap(v) if isinstance(v, np.ndarray) else v)
                       for k, v in inputs.items()}
        if lazy:
            lnp.sync()

    def run(self, inputs: dict | None = None) -> list[np.ndarray]:
        if inputs is None:
            inputs = dict(self.loaded)
            for k in self.mod.STATE:  # updated in place by the program: fresh each run
                inputs[k] = self._wrap(self.inputs[k])
        else:
            inputs = {k: (self._wrap(v) if isinstance(v, np.ndarray) else v)
                      for k, v in inputs.items()}
        with contextlib.redirect_stdout(io.StringIO()):  # the programs' progress prints
            return host(self.mod.program(self.np, inputs))


def check(got: list, want: list, rtol: float, atol: float) -> float:
    """Values, shapes and dtypes against NumPy's; the largest absolute error."""
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} results, NumPy gave {len(want)}")
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or g.dtype != w.dtype:
            raise AssertionError(f"result {i}: {g.dtype}{g.shape} vs NumPy's {w.dtype}{w.shape}")
        if g.size and w.dtype.kind in "fc":
            worst = max(worst, float(np.max(np.abs(g - w))))
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"result {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {i}")
    return worst


def _counters():
    import lazycore as lc

    return lc.metrics.counters()


def _delta(before: dict, after: dict) -> dict:
    keys = set(COUNTERS) | {k for k in after if k.startswith(("sync::", "fallback::"))}
    d = {k: after.get(k, 0) - before.get(k, 0) for k in sorted(keys)}
    return {k: v for k, v in d.items() if v or k in COUNTERS}


def _tiers():
    import lazycore as lc

    return getattr(lc, "tiers", None)


def wait_compiles(timeout: float = COMPILE_WAIT_S) -> bool:
    """Let background compiles (tier ``"auto"``) finish; False if some still run."""
    tiers = _tiers()
    return tiers.wait_compiles(timeout) if tiers is not None else True


def _cold(fn):
    """Run ``fn`` as a first run: empty in-memory compile cache, no program seen before.
    Returns (seconds, result, counter delta); the delta includes the background compiles
    the run started (waited for after the timing)."""
    import lazycore as lc

    wait_compiles()
    lc.cache.clear()
    if _tiers() is not None:
        _tiers().reset()
    gc.collect()
    before = _counters()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    wait_compiles()
    return seconds, out, _delta(before, _counters())


def _profiled(fn) -> tuple[dict, float | None]:
    """One more warm run: its counters and the tracing µs per recorded op."""
    import lazycore as lc

    before = _counters()
    timers = lc.metrics.timers().get("trace", {"count": 0, "total_s": 0.0})
    fn()
    after = lc.metrics.timers().get("trace", {"count": 0, "total_s": 0.0})
    ops = after["count"] - timers["count"]
    us = (after["total_s"] - timers["total_s"]) / ops * 1e6 if ops > 0 else None
    return _delta(before, _counters()), us


def _tier() -> str:
    import lazycore as lc

    return getattr(lc.settings, "tier", "compile")


def _two_iterations(mod, inputs: dict) -> dict | None:
    key = getattr(mod, "ITER_KEY", None)
    if key is None:
        return None
    short = dict(inputs)
    short[key] = mod.two_iterations(inputs) if hasattr(mod, "two_iterations") else 2
    return short


def interleaved(steps: dict, budget_s: float, quick: bool = False) -> dict[str, list[float]]:
    """Time the steps in turns (order alternating each round) until each has
    ``MIN_RUNS`` runs and ``MIN_TIME_S`` of timed work, or ``MAX_RUNS`` runs, or the
    round would pass ``budget_s`` (``quick``: ``QUICK_RUNS`` runs)."""
    min_runs, max_runs, min_time = (QUICK_RUNS, QUICK_RUNS, 0.0) if quick else (
        MIN_RUNS, MAX_RUNS, MIN_TIME_S)
    times = {name: [] for name in steps}
    names = list(steps)
    start = time.perf_counter()
    gc_was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        rnd = 0
        while True:
            done = all(len(t) >= min_runs and (sum(t) >= min_time or len(t) >= max_runs)
                       for t in times.values())
            if done or (rnd >= 2 and time.perf_counter() - start > budget_s):
                break
            for name in (names if rnd % 2 == 0 else names[::-1]):
                t0 = time.perf_counter()
                steps[name]()
                times[name].append(time.perf_counter() - t0)
            rnd += 1
            if rnd % 20 == 0:
                gc.collect()
    finally:
        if gc_was:
            gc.enable()
    return times


def _summary(times: list[float], iters: int) -> dict:
    med = statistics.median(times)
    return {"median_s": med / iters, "run_median_s": med, "runs": len(times),
            "min_s": min(times) / iters, "iterations": iters}


def measure_program(name: str, mod, size: str, pair: tuple[str, str], quick: bool,
                    make_impls) -> list[dict]:
    """Rows for one program at one size: the eager baseline and its lazy counterpart."""
    inputs = mod.make_inputs(**mod.SIZES[size])
    iters = mod.iterations(inputs)
    eager_name, lazy_name = pair
    case = f"{name}/{size}"
    extra = {"size": size, "source": mod.SOURCE, "params": mod.SIZES[size]}
    eager, lazy = make_impls(mod, inputs)
    rows = []

    t0 = time.perf_counter()
    want = eager.run()
    eager_first = time.perf_counter() - t0
    rtol, atol = getattr(mod, "TOLERANCE", (1e-6, 1e-9))

    lazy_row = {}
    lazy_ok = selected(lazy_name)
    if lazy_ok:
        try:
            with _deadline(LAZY_TIMEOUT_S if not quick else 120.0):
                first_s, got, first_counts = _cold(lazy.run)
                lazy_row["max_abs_err"] = check(got, want, rtol, atol)
                lazy_row["compile_s"] = first_s
                lazy_row["compiles_first_run"] = first_counts["compiles"]
                short = _two_iterations(mod, inputs)
                if short is not None:
                    _, _, two = _cold(lambda: lazy.run(short))
                    lazy_row["compiles_two_iterations"] = two["compiles"]
                    lazy_row["compiles_after_second_iteration"] = (
                        first_counts["compiles"] - two["compiles"])
                lazy.run()  # warm-up: the programs run a second time (compiled in the
                lazy.run()  # background in tier "auto"), then a third with the executables
                lazy_row["compiles_pending_after_warmup"] = not wait_compiles()
        except (Exception, ImplTimeout) as exc:  # noqa: BLE001 - one failure, one row
            lazy_row = {"error": error_text(exc)}
            lazy_ok = False
    eager.run()  # warm-up

    steps = {eager_name: eager.run}
    if lazy_ok:
        steps[lazy_name] = lazy.run
    budget_s = 20.0 if quick else CASE_BUDGET_S
    try:
        with _deadline(budget_s * 3):
            times = interleaved(steps, budget_s, quick)
    except (Exception, ImplTimeout) as exc:  # noqa: BLE001
        rows.append(row(BENCH, case, eager_name, median_s=None, runs=0, error=error_text(exc),
                        **extra))
        return rows

    er = row(BENCH, case, eager_name, **_summary(times[eager_name], iters),
             compile_s=eager_first, **extra)
    progress(er)
    rows.append(er)
    if lazy_ok:
        per_run, lazy_row["trace_us_per_op"] = _profiled(lazy.run)
        lazy_row.update(_summary(times[lazy_name], iters))
        lazy_row["per_warm_run"] = per_run
        lazy_row["compiles_per_warm_run"] = per_run["compiles"]
        lazy_row["syncs_per_iteration"] = per_run["syncs"] / iters
        lazy_row["tier"] = _tier()
        lazy_row["speedup"] = er["median_s"] / lazy_row["median_s"]
        lazy_row["first_run_ratio"] = lazy_row["compile_s"] / eager_first
    elif "error" not in lazy_row:
        return rows
    if "error" in lazy_row:
        lr = row(BENCH, case, lazy_name, median_s=None, runs=0, **lazy_row, **extra)
    else:
        lr = row(BENCH, case, lazy_name, **lazy_row, **extra)
    progress(lr)
    rows.append(lr)
    return rows


def _numpy_impls(mod, inputs):
    return Impl(mod, inputs, lazy=False), Impl(mod, inputs, lazy=True)


@contextlib.contextmanager
def memory_cap(fraction: float = 0.6):
    """Cap this process's heap (``RLIMIT_DATA``) at ``fraction`` of the memory available
    now: a program that would exhaust the machine (the 10× Black-Scholes interpreted
    with every intermediate alive needed 22 GB) fails with an allocation error, which
    becomes its row's error, instead of the kernel's OOM killer ending the run (or a
    neighbour's)."""
    try:
        import resource

        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        avail = int(info["MemAvailable"].split()[0]) * 1024
        old = resource.getrlimit(resource.RLIMIT_DATA)
        cap = int(avail * fraction)
        if old[0] != resource.RLIM_INFINITY:
            cap = min(cap, old[0])
        resource.setrlimit(resource.RLIMIT_DATA, (cap, old[1]))
    except (OSError, ValueError, KeyError, ImportError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, old)


def run(quick: bool) -> list[dict]:
    """``--quick`` runs in this process; a full run gives every case its own process
    (``python -m benchmarks.real_programs NAME SIZE OUT``), so a program that exhausts
    memory or aborts inside XLA costs its own row only."""
    if quick:
        with memory_cap():
            return _run(quick)
    rows = []
    from ._real_programs import torch_ports

    wanted = {c.strip() for c in os.environ.get(CASES_VAR, "").split(",") if c.strip()}
    for name, size in sizes(False) + torch_ports.sizes(False):
        if not wanted or name in wanted or f"{name}/{size}" in wanted:
            rows += _in_subprocess(name, size)
    return rows


def _in_subprocess(name: str, size: str) -> list[dict]:
    import json
    import subprocess
    import sys
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.json")
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks.real_programs", name, size, out],
                cwd=root, capture_output=True, text=True, timeout=3 * LAZY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess([], 124, "", f"ran past {3 * LAZY_TIMEOUT_S:.0f} s")
        sys.stderr.write("".join(line + "\n" for line in proc.stderr.splitlines()
                                 if line.startswith("[bench]")))
        if proc.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                return json.load(f)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    tail = [line for line in lines if "Check failed" in line or "Error" in line][-2:] or lines[-3:]
    why = (f"the case's process died (exit {proc.returncode}"
           f"{', killed by signal ' + str(-proc.returncode) if proc.returncode < 0 else ''}): "
           + " | ".join(tail))[:400]
    print(f"[bench]   {BENCH} {name}/{size}: ERROR {why}", file=sys.stderr, flush=True)
    impl = "eager_torch" if name.endswith("_torch") else "numpy"
    return [row(BENCH, f"{name}/{size}", impl, median_s=None, runs=0, error=why, size=size)]


def _case(name: str, size: str) -> list[dict]:
    from ._real_programs import torch_ports

    with memory_cap():
        if name in torch_ports.PORTS:
            return measure_program(name, torch_ports.module(name), size,
                                   ("eager_torch", "lazy_torch"), False, torch_ports.impls)
        return measure_program(name, _module(name), size, ("numpy", "lazy_numpy"), False,
                               _numpy_impls)


def _run(quick: bool) -> list[dict]:
    rows = []
    for name, size in sizes(quick):
        try:
            rows += measure_program(name, _module(name), size, ("numpy", "lazy_numpy"), quick,
                                    _numpy_impls)
        except Exception as exc:  # noqa: BLE001 - the baseline itself failed
            rows.append(row(BENCH, f"{name}/{size}", "numpy", median_s=None, runs=0,
                            error=error_text(exc)))
    from ._real_programs import torch_ports

    for name, size in torch_ports.sizes(quick):
        try:
            rows += measure_program(name, torch_ports.module(name), size,
                                    ("eager_torch", "lazy_torch"), quick, torch_ports.impls)
        except Exception as exc:  # noqa: BLE001
            rows.append(row(BENCH, f"{name}/{size}", "eager_torch", median_s=None, runs=0,
                            error=error_text(exc)))
    return rows


# --- the docs' table ----------------------------------------------------------------------

def summary_table(rows: list[dict]) -> str:
    """One markdown line per program and size (the table in docs/performance.md):
    eager and lazy time per iteration, the speedup, both first runs, and what explains
    the lazy figure (compiles after the 2nd iteration, syncs per iteration, tracing
    µs/op). Errors are spelled out under the table."""
    from ._report import fmt_time

    mine = [r for r in rows if r["bench"] == BENCH]
    lazy_of = {"numpy": "lazy_numpy", "eager_torch": "lazy_torch"}
    by = {(r["case"], r["impl"]): r for r in mine}
    lines = ["| program / size | eager / iter | lazy / iter | lazy × | eager first run "
             "| lazy first run | first ÷ eager | compiles after 2nd iter | syncs / iter "
             "| trace µs/op |", "|" + "---|" * 10]
    notes = []
    for r in mine:
        if r["impl"] not in lazy_of:
            continue
        lz = by.get((r["case"], lazy_of[r["impl"]]), {})
        label = r["case"] + ("" if r["impl"] == "numpy" else " (torch)")
        if lz.get("error"):
            notes.append(f"- {label}, {lz['impl']}: {lz['error']}")

        def num(key, fmt, src=lz):
            v = src.get(key)
            return "–" if v is None else fmt(v)

        lines.append("| " + " | ".join([
            label, fmt_time(r.get("median_s")), fmt_time(lz.get("median_s")),
            num("speedup", lambda v: f"**{v:.2f}×**" if v < 1 else f"{v:.2f}×"),
            fmt_time(r.get("compile_s")), fmt_time(lz.get("compile_s")),
            num("first_run_ratio", lambda v: f"{v:.1f}×"),
            num("compiles_after_second_iteration", lambda v: f"{v:g}"),
            num("syncs_per_iteration", lambda v: f"{v:.2f}"),
            num("trace_us_per_op", lambda v: f"{v:.1f}")]) + " |")
    return "\n".join(lines + ([""] + notes if notes else []))


if __name__ == "__main__":  # one case in its own process (see ``run``)
    import json
    import sys

    _name, _size, _out = sys.argv[1:4]
    _rows = _case(_name, _size)
    with open(_out, "w") as _f:
        json.dump(_rows, _f, default=str)
