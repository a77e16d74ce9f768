"""``--threads N``: pin every framework's intra-op parallelism to N threads.

On an idle machine the frameworks' defaults are what users run, and the suite keeps
them. On a shared, oversubscribed machine, OpenMP-style spin-waiting makes multi-threaded
eager PyTorch tens of times slower than it is alone (measured here: a tiny MLP step went
from 2 ms with one thread to 110 ms with two under a load average of 10), which says
nothing about the frameworks. ``--threads 1`` gives every implementation one thread so
a busy machine slows them alike. The setting travels in the environment, so probe
subprocesses inherit it, and is recorded in the JSON's ``machine.env``.
"""

from __future__ import annotations

import os

VAR = "LAZYTENSOR_BENCH_THREADS"


def pin(n: int) -> None:
    """Set the environment before any framework is imported (called by the runner)."""
    n = str(int(n))
    os.environ[VAR] = n
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS", "TF_NUM_INTRAOP_THREADS"):
        os.environ[name] = n
    if n == "1":  # XLA CPU: no Eigen thread pool inside one program
        flags = os.environ.get("XLA_FLAGS", "")
        extra = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        if extra not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {extra}".strip()


def pinned() -> int | None:
    value = os.environ.get(VAR)
    return int(value) if value else None


def torch_threads() -> None:
    n = pinned()
    if n:
        import torch

        torch.set_num_threads(n)


def tf_threads() -> None:
    n = pinned()
    if n:
        import tensorflow as tf

        try:  # only possible before TF's context starts; TF_NUM_INTRAOP_THREADS covers later
            tf.config.threading.set_intra_op_parallelism_threads(n)
        except RuntimeError:
            pass
