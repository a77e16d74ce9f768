"""One implementation's step in a fresh process: first-step time and peak memory.

``python -m benchmarks._probe MODULE CASE IMPL [--quick] [--steps N]`` imports the
implementation's frameworks (not measured), resets the resident-set high-water mark,
builds the step (``MODULE.make_step(case, impl, quick)``), times the first call (trace +
compile or cache load + run, to a host-visible result), runs ``N - 1`` more steps and
prints one JSON line. Native buffers (XLA, PyTorch, TF allocators) count, unlike with
``tracemalloc``: the measure is the kernel's ``VmHWM`` (falling back to ``ru_maxrss``).

``probe(...)`` runs it from the parent and returns the parsed dict (or ``{"error"}``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time

# TF's C++ logging (oneDNN notices, absl warnings) would bury the progress lines.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# What each implementation imports before its step exists (so imports are not counted).
IMPORTS = {
    "eager_torch": ("torch",), "torch_compile": ("torch", "torch._inductor"),
    "lazy_torch": ("torch", "lazy_torch"), "jax_jit": ("jax",), "numpy": ("numpy",),
    "lazy_numpy": ("lazy_numpy",), "numexpr": ("numexpr",), "eager_tf": ("tensorflow",),
    "tf_xla": ("tensorflow",), "lazy_tf": ("tensorflow", "lazy_tf"),
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the kernel's high-water mark (Linux >= 4.0); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _counters() -> dict:
    if "lazycore" not in sys.modules:
        return {}
    m = sys.modules["lazycore"].metrics
    c = m.counters()
    out = {k: c.get(k, 0) for k in ("compiles", "cache_hits", "cache_misses", "syncs",
                                    "executions", "traced_ops")}
    for name, t in m.timers().items():  # where the first step's time went, by phase
        if t.get("total_s") is not None:
            out[f"{name}_s"] = round(t["total_s"], 4)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks._probe")
    p.add_argument("module")
    p.add_argument("case")
    p.add_argument("impl")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args(argv)

    t0 = time.perf_counter()
    for name in IMPORTS.get(a.impl, ()):
        importlib.import_module(name)
    mod = importlib.import_module(f"benchmarks.{a.module.rsplit('.', 1)[-1]}")
    import_s = time.perf_counter() - t0

    exact = _reset_peak()
    base_kb = _status_kb("VmRSS") or 0
    base_max_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    step = mod.make_step(a.case, a.impl, a.quick)
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = step()
    first_step_s = time.perf_counter() - t0
    counters_first = _counters()
    later = []
    for _ in range(max(a.steps - 1, 0)):
        t0 = time.perf_counter()
        step()
        later.append(time.perf_counter() - t0)
    peak_kb = _status_kb("VmHWM") if exact else None
    if peak_kb is None:  # ru_maxrss also covers the imports: the delta is a lower bound
        peak_kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, base_max_kb)
    out = {
        "import_s": import_s, "setup_s": setup_s, "first_step_s": first_step_s,
        "step_median_s": statistics.median(later) if later else None,
        "base_rss_mb": base_kb / 1024, "peak_rss_mb": peak_kb / 1024,
        "peak_delta_mb": (peak_kb - base_kb) / 1024, "peak_exact": exact,
        "first_result": float(first) if isinstance(first, int | float) else None,
        "counters_after_first": counters_first,
    }
    print(json.dumps(out))


def probe(module: str, case: str, impl: str, *, quick: bool, steps: int = 5,
          env: dict | None = None, timeout_s: float = 600.0) -> dict:
    """Run the probe in a fresh interpreter; ``env`` entries are added to the environment
    (``None`` values removed)."""
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "benchmarks._probe", module.rsplit(".", 1)[-1], case, impl,
           "--steps", str(steps)] + (["--quick"] if quick else [])
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              cwd=ROOT, env=full_env)
    except subprocess.TimeoutExpired:
        return {"error": f"probe ran past {timeout_s:.0f} s"}
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"probe exited {proc.returncode}: {tail[:300]}"}
    out = json.loads(lines[-1])
    out["process_s"] = wall
    return out


if __name__ == "__main__":
    main()
