"""Run PyTorch's OpInfo database (float32 samples) on the lazy device vs eager CPU.

Used by ``test_opinfo.py`` and runnable directly to refresh the counts in
``docs/lazy_torch.md``: ``python tests/torch/opinfo_sweep.py``.
"""

from __future__ import annotations

import itertools
import sys
import time
import traceback

import torch
from torch.utils._pytree import tree_flatten, tree_map

import lazy_torch
import lazycore as lc

SAMPLES_PER_OP = 2
RTOL, ATOL = 1e-4, 1e-5  # float32, XLA's transcendental functions differ by a few ulps


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _to(dev):
    def move(v):
        if isinstance(v, torch.Tensor) and v.device.type == "cpu":
            return v.detach().to(dev)
        return v
    return move


def _cpu(v):
    return v.cpu() if isinstance(v, torch.Tensor) else v


def run_op(op, dev):
    """One OpInfo entry: 'pass' | 'fallback' (correct, but through the CPU fallback) |
    'no-float32' | 'eager-error'; raises on a lazy error or a mismatch."""
    if torch.float32 not in op.supported_dtypes("cpu"):
        return "no-float32"
    samples = list(itertools.islice(op.sample_inputs("cpu", torch.float32), SAMPLES_PER_OP))
    expected = []
    for s in samples:
        try:
            expected.append(op(s.input, *s.args, **s.kwargs))
        except Exception:  # noqa: BLE001 - an invalid sample for eager too
            return "eager-error"
    before = lc.metrics.counters()["fallbacks"]
    got = []
    for s in samples:
        inp, args, kwargs = tree_map(_to(dev), (s.input, s.args, s.kwargs))
        got.append(op(inp, *args, **kwargs))
    lazy_torch.sync()
    fell_back = lc.metrics.counters()["fallbacks"] > before
    for g, e in zip(got, expected, strict=True):
        g_flat, _ = tree_flatten(g)
        e_flat, _ = tree_flatten(e)
        assert len(g_flat) == len(e_flat), "different output structure"
        for a, b in zip(g_flat, e_flat, strict=True):
            if isinstance(b, torch.Tensor):
                assert isinstance(a, torch.Tensor), f"expected a tensor, got {type(a)}"
                torch.testing.assert_close(_cpu(a), b, rtol=RTOL, atol=ATOL, equal_nan=True)
            else:
                assert a == b or (a != a and b != b), f"{a!r} != {b!r}"
    return "fallback" if fell_back else "pass"


def sweep(skip: dict[str, str], dev=None, verbose=False):
    from torch.testing._internal.common_methods_invocations import op_db

    dev = dev or lazy_torch.device()
    results: dict[str, str] = {}
    errors: dict[str, str] = {}
    for op in op_db:
        key = op_key(op)
        if key in skip:
            results[key] = "skipped"
            continue
        start = time.perf_counter()
        try:
            results[key] = run_op(op, dev)
        except Exception as e:  # noqa: BLE001 - collected and reported
            results[key] = "fail"
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
            errors[key] = msg
            if verbose > 1:
                traceback.print_exc()
        if verbose:
            print(f"{key:45s} {results[key]:10s} {time.perf_counter() - start:6.2f}s "
                  f"{errors.get(key, '')}", flush=True)
    return results, errors


def summary(results) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in results.values():
        counts[v] = counts.get(v, 0) + 1
    return counts


if __name__ == "__main__":
    import ast

    src = open(__file__.rsplit("/", 1)[0] + "/test_opinfo.py").read()
    skip_src = src[src.index("SKIP: dict[str, str] = ") + len("SKIP: dict[str, str] = "):]
    skip_src = skip_src[:skip_src.index("\n}\n") + 2]
    skip = ast.literal_eval(skip_src)
    res, errs = sweep({} if "--all" in sys.argv else skip, verbose=1)
    print(summary(res))
    for k, v in errs.items():
        print(f'    "{k}": "{v}",')
