"""Microseconds per op on tiny tensors: each frontend's tracing next to eager dispatch.

One loop, written once with Python operators, alternates ``x = x * y`` and
``x = x + z`` on 4-element tensors (``y``, ``z`` tensors, or Python floats in the
``scalar`` cases). Eager frameworks run each op (their per-op dispatch cost); lazy
frontends only record it, so this is the one benchmark that times tracing alone: the
lazy chain is checked once against eager, then every timed chain is dropped without
a sync. Chains of several lengths show whether the per-op cost grows with the length
of the pending trace (it must not: hashing, registration and graph walks stay O(1)).

``median_s`` is seconds per op (the median over repetitions of chain time / length);
``us_per_op`` is the same in microseconds. The garbage collector stays on: its passes
over a growing graph are part of what a user pays.
"""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np

from . import _threads
from ._harness import check_close, error_row, progress, row, selected

BENCH = "trace_overhead"


def lengths(quick: bool) -> tuple[int, ...]:
    return (10, 100) if quick else (100, 1000, 5000)


def _without_cuts(n_ops: int):
    """Raise lazycore's ``max_pending_ops`` above the longest chain (a scalar op records
    two nodes), so no automatic trace cut -- a sync and a compile -- lands in a timing;
    returns the previous value."""
    import lazycore as lc

    previous = lc.settings.max_pending_ops
    lc.configure(max_pending_ops=max(previous, 4 * n_ops + 1000))
    return previous


def reps(quick: bool) -> int:
    return 2 if quick else 9


def chain(x, y, z, n: int):
    for i in range(n):
        x = x * y if i % 2 == 0 else x + z
    return x


# --- implementations: setup(kind) -> (x, y, z, to_host, barrier) ---------------------------

def _data(kind, convert):
    x = convert(np.ones(4, np.float32))
    if kind == "scalar":
        return x, 0.5, 0.25
    return x, convert(np.full(4, 0.5, np.float32)), convert(np.full(4, 0.25, np.float32))


def eager_torch(kind):
    import torch

    _threads.torch_threads()
    return (*_data(kind, torch.from_numpy), lambda t: t.numpy(), None)


def lazy_torch(kind):
    import torch

    _threads.torch_threads()
    import lazy_torch as lt

    dev = lt.device()
    return (*_data(kind, lambda a: torch.from_numpy(a).to(dev)), lambda t: t.cpu().numpy(),
            lt.sync)


def numpy_impl(kind):
    return (*_data(kind, np.asarray), np.asarray, None)


def lazy_numpy(kind):
    import lazy_numpy as lnp

    return (*_data(kind, lnp.asarray), np.asarray, lnp.sync)


def eager_tf(kind):
    import tensorflow as tf

    _threads.tf_threads()
    return (*_data(kind, tf.convert_to_tensor), lambda t: t.numpy(), None)


def lazy_tf(kind):
    import lazy_tf as ltf

    return (*_data(kind, ltf.convert_to_tensor), lambda t: np.asarray(t.numpy()), ltf.sync)


IMPLS = {"eager_torch": eager_torch, "lazy_torch": lazy_torch, "numpy": numpy_impl,
         "lazy_numpy": lazy_numpy, "eager_tf": eager_tf, "lazy_tf": lazy_tf}
LAZY = {"lazy_torch", "lazy_numpy", "lazy_tf"}


def _one(impl: str, kind: str, quick: bool) -> list[dict]:
    x, y, z, to_host, barrier = IMPLS[impl](kind)
    if impl in LAZY:
        import lazycore as lc

        previous = _without_cuts(max(lengths(quick)))
        try:
            return _measure(impl, kind, quick, x, y, z, to_host, barrier)
        finally:
            lc.configure(max_pending_ops=previous)
    return _measure(impl, kind, quick, x, y, z, to_host, barrier)


def _measure(impl, kind, quick, x, y, z, to_host, barrier) -> list[dict]:
    if barrier:
        barrier()
    # The recorded chain must compute what eager NumPy computes.
    want = chain(np.ones(4, np.float32), np.float32(0.5), np.float32(0.25), 64)
    check_close(to_host(chain(x, y, z, 64)), want, rtol=1e-5, atol=1e-6)
    chain(x, y, z, 200)  # warm-up: caches, lazy imports, first-call paths
    if barrier:
        barrier()
    rows = []
    for n in lengths(quick):
        per_op = []
        for _ in range(reps(quick)):
            gc.collect()
            t0 = time.perf_counter()
            out = chain(x, y, z, n)
            dt = time.perf_counter() - t0
            per_op.append(dt / n)
            del out  # dropped unsynced: a lazy chain is never compiled here
            if barrier:
                barrier()
        med = statistics.median(per_op)
        rows.append(row(BENCH, f"{kind}/n={n}", impl, median_s=med, runs=len(per_op),
                        min_s=min(per_op), us_per_op=med * 1e6, n_ops=n, lazy=impl in LAZY))
        progress(rows[-1])
    return rows


def run(quick: bool) -> list[dict]:
    rows = []
    for kind in ("tensor", "scalar"):
        for impl in IMPLS:
            if not selected(impl):
                continue
            try:
                rows += _one(impl, kind, quick)
            except Exception as exc:  # noqa: BLE001 - a frontend not ready is a row
                rows += [error_row(BENCH, f"{kind}/n={n}", impl, exc) for n in lengths(quick)]
    return rows
