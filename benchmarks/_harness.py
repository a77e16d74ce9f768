"""Timing, guarding and row building shared by every benchmark module.

A benchmark module builds, per implementation, a *step*: a no-argument callable that
runs the computation once and returns a host-visible result (NumPy array or Python
number), so a lazy implementation is timed through trace + compile-cache lookup +
execution + device-to-host copy, never through tracing alone. ``measure`` times the
first call separately (it compiles), warms up, then reports the median of repeated runs.

Every implementation is guarded: an exception (a frontend that is not ready, a missing
lowering, a wrong result) becomes a row with an ``error`` field and the run goes on.
"""

from __future__ import annotations

import gc
import math
import signal
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

IMPLS = ("eager_torch", "lazy_torch", "torch_compile", "jax_jit", "numpy", "lazy_numpy",
         "numexpr", "eager_tf", "lazy_tf", "tf_xla")


@dataclass(frozen=True)
class Budget:
    """How long to sample one implementation: at least ``min_runs`` timed runs, then
    more until ``min_time_s`` of timed work or ``max_runs``."""

    warmup: int = 2
    min_runs: int = 5
    max_runs: int = 200
    min_time_s: float = 1.0
    timeout_s: float = 600.0


# Implementations to run (``--impls``); None = all. Others yield rows marked "skipped",
# which the runner drops.
SELECTED: set[str] | None = None


def selected(impl: str) -> bool:
    return SELECTED is None or impl in SELECTED


FULL = Budget()
QUICK = Budget(warmup=1, min_runs=2, max_runs=3, min_time_s=0.0, timeout_s=120.0)


def budget(quick: bool) -> Budget:
    return QUICK if quick else FULL


class WrongResult(AssertionError):
    """An implementation's result differs from the reference implementation's."""


class ImplTimeout(Exception):
    """An implementation ran past its budget's ``timeout_s``."""


@contextmanager
def _deadline(seconds: float):
    """Raise ``ImplTimeout`` in the main thread after ``seconds`` (best effort: a long
    native call is interrupted only when it returns to Python)."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def _fire(signum, frame):
        raise ImplTimeout(f"ran past {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def error_text(exc: BaseException) -> str:
    """One line naming the exception and where it came from (the innermost frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" [{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}]" if tb else ""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg[:300]}{where}"


def row(bench: str, case: str, impl: str, **fields) -> dict:
    return {"bench": bench, "case": case, "impl": impl, **fields}


def error_row(bench: str, case: str, impl: str, exc: BaseException, **fields) -> dict:
    return row(bench, case, impl, median_s=None, runs=0, error=error_text(exc), **fields)


def to_host(value):
    """Normalize a step's result for comparison: NumPy array or float."""
    if isinstance(value, int | float | np.floating | np.integer | bool):
        return float(value)
    return np.asarray(value)


def check_close(got, want, rtol: float, atol: float) -> float:
    """Largest absolute error; raises ``WrongResult`` past the tolerance."""
    got, want = to_host(got), to_host(want)
    if np.shape(got) != np.shape(want):
        raise WrongResult(f"shape {np.shape(got)} != reference {np.shape(want)}")
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    err = float(np.max(np.abs(g - w))) if g.size else 0.0
    if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        raise WrongResult(f"max abs error {err:.3g} vs reference (rtol={rtol}, atol={atol})")
    return err


def sample(step: Callable[[], object], b: Budget) -> list[float]:
    """Warm up, then time ``step`` repeatedly; returns the per-run seconds."""
    for _ in range(b.warmup):
        step()
    if "lazycore" in sys.modules:  # warm means compiled: let tier auto's compiles finish
        sys.modules["lazycore"].tiers.wait_compiles()
    times: list[float] = []
    total = 0.0
    gc_was = gc.isenabled()
    gc.collect()
    gc.disable()  # a collection landing in one run is noise, not the implementation's cost
    try:
        while len(times) < b.min_runs or (total < b.min_time_s and len(times) < b.max_runs):
            t0 = time.perf_counter()
            step()
            dt = time.perf_counter() - t0
            times.append(dt)
            total += dt
            if len(times) % 50 == 0:
                gc.collect()
    finally:
        if gc_was:
            gc.enable()
    return times


def summarize(times: list[float]) -> dict:
    qs = np.percentile(times, [25, 75]) if times else [math.nan, math.nan]
    return {
        "median_s": statistics.median(times),
        "runs": len(times),
        "min_s": min(times),
        "p25_s": float(qs[0]),
        "p75_s": float(qs[1]),
    }


def measure(bench: str, case: str, impl: str, setup: Callable[[], Callable[[], object]], *,
            quick: bool, reference=None, rtol: float = 1e-4, atol: float = 1e-5,
            extra: dict | None = None) -> tuple[dict, object]:
    """Time one implementation; returns ``(row, first_result)``.

    ``setup()`` builds the step (moves data to the device, builds models: not timed).
    The first call is reported as ``compile_s`` (trace + compile + one run). When a
    ``reference`` result is given, the first result must match it.
    """
    b = budget(quick)
    extra = dict(extra or {})
    if not selected(impl):
        return row(bench, case, impl, median_s=None, runs=0, skipped=True), None
    try:
        with _deadline(b.timeout_s):
            t0 = time.perf_counter()
            step = setup()
            setup_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            first = step()
            compile_s = time.perf_counter() - t0
            if reference is not None:
                extra["max_abs_err"] = check_close(first, reference, rtol, atol)
            times = sample(step, b)
    except Exception as exc:  # noqa: BLE001 - any failure is one row, not a crashed run
        r = error_row(bench, case, impl, exc, **extra)
        progress(r)
        return r, None
    finally:
        gc.collect()
    r = row(bench, case, impl, **summarize(times), compile_s=compile_s, setup_s=setup_s,
            **extra)
    progress(r)
    return r, first


def progress(r: dict) -> None:
    """One line per measured implementation on stderr (the run can be long)."""
    what = (f"ERROR {r['error']}" if r.get("error") else
            f"median {r['median_s'] * 1e3:.3f} ms over {r['runs']} runs"
            + (f", first call {r['compile_s']:.2f} s" if r.get("compile_s") is not None else ""))
    print(f"[bench]   {r['bench']} {r['case']} {r['impl']}: {what}", file=sys.stderr, flush=True)


def guarded(bench: str, case: str, impl: str, fn: Callable[[], list[dict]]) -> list[dict]:
    """Run ``fn`` (which returns rows); any exception becomes one error row."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return [error_row(bench, case, impl, exc)]


def geomean(values) -> float:
    vals = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else math.nan
