"""First-step time in a fresh process, with and without the persistent compile cache.

Each row is one fresh interpreter (``_probe``) running one implementation's first step
(trace + compile or cache load + execute, to a host-visible result; imports and model
construction excluded and reported as ``import_s`` / ``setup_s``):

* ``no_cache``     - persistent cache off: what every new process pays today;
* ``cache_first``  - cache on, empty directory: pays the compile and writes the cache;
* ``cache_second`` - cache on, the directory the first process wrote: a second process.
* ``cache_second_seeded`` - the same pair of processes, both with ``PYTHONHASHSEED=0``
  (only the second is reported): shows what the cache gives when program keys do not
  depend on Python's per-process string-hash randomization.

Processes run with ``PYTHONHASHSEED`` removed from the environment (random, as users
run), except in the seeded mode.

Each mode runs ``REPEATS`` times (fresh processes, fresh cache directories) and reports
the median first step: a single process's first step varies by tens of percent with
page-cache and allocator state, more than the ms-scale steps being compared.

Workloads: the MLP training step (``train_step``'s) for lazy_torch, lazy_tf and
hand-written ``jax.jit`` (JAX's own persistent cache, for reference), and numexpr's
``where`` expression for lazy_numpy. The target compares ``cache_second`` with
``no_cache``.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile

from ._harness import progress, row, selected
from ._probe import probe

BENCH = "cold_start"
MODES = ("no_cache", "cache_first", "cache_second", "cache_second_seeded")

# impl -> (benchmark module, case)
WORKLOADS = {
    "lazy_torch": ("train_step", "mlp"),
    "lazy_tf": ("train_step", "mlp"),
    "lazy_numpy": ("numexpr_expr", "where"),
    "jax_jit": ("train_step", "mlp"),
}
QUICK_IMPLS = ("lazy_numpy", "jax_jit")
REPEATS = 3  # full runs; --quick runs each mode once


def _env(impl: str, cache_dir: str | None, seed: str | None = None) -> dict:
    """Environment for one probe: the cache switched on (at ``cache_dir``) or off."""
    env = {"PYTHONHASHSEED": seed}
    if impl == "jax_jit":
        if cache_dir is None:
            return {**env, "JAX_COMPILATION_CACHE_DIR": None}
        return {**env, "JAX_COMPILATION_CACHE_DIR": cache_dir,
                "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    return {**env, "LAZYCORE_PERSISTENT_CACHE": cache_dir, "JAX_COMPILATION_CACHE_DIR": None}


def _one(impl: str, quick: bool, repeats: int) -> list[dict]:
    module, case = WORKLOADS[impl]
    samples: dict[str, list[dict]] = {m: [] for m in MODES}
    for _ in range(repeats):
        samples["no_cache"].append(probe(module, case, impl, quick=quick, steps=1,
                                         env=_env(impl, None)))
        pairs = [(None, ("cache_first", "cache_second"))]
        if not quick:  # the seeded pair only guards a regression: full runs only
            pairs.append(("0", (None, "cache_second_seeded")))
        for seed, modes in pairs:
            cache_dir = tempfile.mkdtemp(prefix="lazytensor-cold-")
            try:
                for mode in modes:
                    result = probe(module, case, impl, quick=quick, steps=1,
                                   env=_env(impl, cache_dir, seed))
                    if mode is not None:
                        samples[mode].append(result)
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
    rows = []
    for mode, results in samples.items():
        label = f"{module}.{case}/{mode}"
        if not results:
            continue
        errors = [r["error"] for r in results if "error" in r]
        if errors:
            rows.append(row(BENCH, label, impl, median_s=None, runs=0, error=errors[0]))
            progress(rows[-1])
            continue
        firsts = [r["first_step_s"] for r in results]
        rows.append(row(
            BENCH, label, impl, median_s=statistics.median(firsts), runs=len(firsts),
            import_s=statistics.median(r["import_s"] for r in results),
            setup_s=statistics.median(r["setup_s"] for r in results),
            process_s=statistics.median(r["process_s"] for r in results),
            counters=results[-1].get("counters_after_first", {}), mode=mode))
        progress(rows[-1])
    return rows


def run(quick: bool) -> list[dict]:
    rows = []
    impls = QUICK_IMPLS if quick else tuple(WORKLOADS)
    for impl in impls:
        if not selected(impl):
            continue
        rows += _one(impl, quick, repeats=1 if quick else REPEATS)
    return rows

