"""SPMD weak scaling: data-parallel MLP training throughput against device count.

Each device keeps the same per-device batch, so the global batch grows with the mesh
(weak scaling). For 1, 2, 4, 8 ... devices (up to what the machine has) one training
step -- forward, ``lazycore.grad``, SGD update, full sync, loss to host -- runs with
the batch split over a ``lazycore.Mesh`` axis ``"data"`` and the weights replicated;
XLA's SPMD partitioner inserts the gradient all-reduce. ``jax_jit`` is the same step
hand-written in JAX with the same shardings (the floor lazycore's overhead is measured
against). Rows carry ``devices``, ``global_batch``, ``samples_per_s`` and
``efficiency`` (throughput over ``devices`` x the 1-device throughput).

The measurement runs in a child process: on CPU it sets
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` before jax starts, so CI sees 8
simulated devices. Those share the host's cores, so CPU rows check that the path works
and what the partitioning costs, not speedup; on a machine with several GPUs/TPUs the
same code measures real scaling (the flag only affects the host platform).
``python -m benchmarks.spmd_scaling --worker [--quick]`` runs the child directly.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

BENCH = "spmd_scaling"
SIMULATED_DEVICES = 8
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LR = 0.01


def config(quick: bool) -> dict:
    return ({"sizes": (32, 64, 64, 10), "per_device_batch": 16} if quick else
            {"sizes": (784, 512, 512, 10), "per_device_batch": 128})


def run(quick: bool) -> list[dict]:
    env = dict(os.environ)
    flag = f"--xla_force_host_platform_device_count={SIMULATED_DEVICES}"
    if "xla_force_host_platform_device_count" not in env.get("XLA_FLAGS", ""):
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flag).strip()
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "benchmarks.spmd_scaling", "--worker"] + (
        ["--quick"] if quick else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env,
                              timeout=900)
    except subprocess.TimeoutExpired:
        return [_error("worker ran past 900 s")]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not rows:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        rows.append(_error(f"worker exited {proc.returncode}: {tail[:300]}"))
    return rows


def _error(text: str) -> dict:
    return {"bench": BENCH, "case": "*", "impl": "*", "median_s": None, "runs": 0,
            "error": text}


# -- the child process -------------------------------------------------------------------

def _init(sizes, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        params.append((rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        params.append(np.zeros(n_out, np.float32))
    return params


def _batch(sizes, n, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, sizes[0])).astype(np.float32),
            rng.integers(0, sizes[-1], n).astype(np.int64))


def lazycore_step(sizes, devices: int, global_batch: int):
    """setup() for the harness: returns the step (builds and places everything)."""
    import lazycore as lc
    from lazycore import numeric as nm

    mesh = lc.Mesh((devices,), ("data",))
    params = [lc.asarray(p) for p in _init(sizes)]
    x_np, y_np = _batch(sizes, global_batch)
    x = lc.mark_sharding(lc.asarray(x_np), mesh, ("data", None))
    y = lc.mark_sharding(lc.asarray(y_np), mesh, ("data",))

    def loss_of(ps):
        h = x
        for i in range(0, len(ps), 2):
            h = nm.elementwise("add", nm.matmul(h, ps[i]), ps[i + 1])
            if i < len(ps) - 2:
                h = nm.relu(h)
        return nm.cross_entropy(h, y)

    def step():
        loss = loss_of(params)
        grads = lc.grad([loss], params)
        for p, g in zip(params, grads, strict=True):
            p.assign(nm.elementwise("sub", p, nm.elementwise("mul", g, LR)))
        lc.sync()
        return float(lc.to_numpy(loss))

    return step


def jax_step(sizes, devices: int, global_batch: int):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:devices]), ("data",))
    rep = NamedSharding(mesh, P())
    params = [jax.device_put(p, rep) for p in _init(sizes)]
    x_np, y_np = _batch(sizes, global_batch)
    x = jax.device_put(x_np, NamedSharding(mesh, P("data", None)))
    y = jax.device_put(y_np, NamedSharding(mesh, P("data")))

    def loss_of(ps, x, y):
        h = x
        for i in range(0, len(ps), 2):
            h = h @ ps[i] + ps[i + 1]
            if i < len(ps) - 2:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def sgd(ps, x, y):
        loss, grads = jax.value_and_grad(loss_of)(ps, x, y)
        return loss, [p - LR * g for p, g in zip(ps, grads, strict=True)]

    update = jax.jit(sgd, donate_argnums=0)
    state = [params]

    def step():
        loss, state[0] = update(state[0], x, y)
        return float(loss)

    return step


def worker(quick: bool) -> None:
    import jax

    import lazycore  # noqa: F401  (x64 on, like every lazycore program)

    from ._harness import measure

    cfg = config(quick)
    sizes, per_device = cfg["sizes"], cfg["per_device_batch"]
    available = len(jax.devices())
    platform = jax.devices()[0].platform
    simulated = platform == "cpu" and available > 1
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64) if n <= available]
    base: dict[str, float] = {}
    for n in counts:
        global_batch = per_device * n
        case = f"mlp_dp_{n}dev"
        reference = None
        for impl, make in (("jax_jit", jax_step), ("lazycore", lazycore_step)):
            extra = {"devices": n, "global_batch": global_batch, "platform": platform,
                     "simulated": simulated}
            r, first = measure(BENCH, case, impl, lambda m=make, n=n, b=global_batch: m(sizes, n, b),
                               quick=quick, reference=reference, rtol=1e-4, atol=1e-5,
                               extra=extra)
            reference = first if reference is None else reference
            if r.get("median_s"):
                r["samples_per_s"] = global_batch / r["median_s"]
                base.setdefault(impl, r["samples_per_s"])
                r["efficiency"] = r["samples_per_s"] / (n * base[impl])
            print(json.dumps(r), flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.spmd_scaling")
    p.add_argument("--worker", action="store_true", help="measure in this process")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    if a.worker:
        worker(a.quick)
    else:
        for r in run(a.quick):
            print(json.dumps(r))


if __name__ == "__main__":
    main()
