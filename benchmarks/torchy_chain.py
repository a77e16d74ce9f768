"""Torchy's microbenchmark: chains of pointwise add/mul/div/sub over 9 float32 inputs.

The chain is one function written once for PyTorch (run eagerly, lazily through
lazy_torch, and by ``torch.compile``) and once, by hand, in ``jax.numpy`` under
``jax.jit``: the limit for XLA on the same computation. Op ``i`` combines the running
value with input ``1 + i % 8`` using ``add, mul, div, sub`` in turn; inputs lie in
[1, 2) so the values stay finite at every length.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import _threads
from ._harness import measure

BENCH = "torchy_chain"
N_INPUTS = 9


def cases(quick: bool) -> list[tuple[int, int]]:
    """(side, ops): the issue's 100x100 and 1000x1000 at 8, 16 and 32 ops."""
    if quick:
        return [(16, 8)]
    return [(side, n) for side in (100, 1000) for n in (8, 16, 32)]


def inputs(side: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(1.0, 2.0, (side, side)).astype(np.float32) for _ in range(N_INPUTS)]


def chain(n_ops: int):
    """The chain as a function of 9 tensors, using only Python operators (any framework)."""

    def f(*xs):
        y = xs[0]
        for i in range(n_ops):
            x = xs[1 + i % 8]
            k = i % 4
            if k == 0:
                y = y + x
            elif k == 1:
                y = y * x
            elif k == 2:
                y = y / x
            else:
                y = y - x
        return y

    return f


def chain_jax(n_ops: int):
    """The same chain hand-written for jax.jit (jnp ops, one program)."""
    import jax
    import jax.numpy as jnp

    ops = (jnp.add, jnp.multiply, jnp.divide, jnp.subtract)

    def f(*xs):
        y = xs[0]
        for i in range(n_ops):
            y = ops[i % 4](y, xs[1 + i % 8])
        return y

    return jax.jit(f)


# --- implementations: setup(arrays, n_ops) -> step() returning a host NumPy array ----------

def eager_torch(arrays, n_ops):
    import torch

    _threads.torch_threads()
    ts = [torch.from_numpy(a) for a in arrays]
    f = chain(n_ops)
    return lambda: f(*ts).numpy()


def lazy_torch(arrays, n_ops):
    import torch

    _threads.torch_threads()
    import lazy_torch as lt

    dev = lt.device()
    ts = [torch.from_numpy(a).to(dev) for a in arrays]
    lt.sync()
    f = chain(n_ops)
    return lambda: f(*ts).cpu().numpy()


def torch_compile(arrays, n_ops):
    import torch

    _threads.torch_threads()
    ts = [torch.from_numpy(a) for a in arrays]
    f = torch.compile(chain(n_ops), backend="inductor", dynamic=False)
    return lambda: f(*ts).numpy()


def jax_jit(arrays, n_ops):
    import jax

    xs = [jax.device_put(a) for a in arrays]
    f = chain_jax(n_ops)
    return lambda: np.asarray(f(*xs))


IMPLS = {"eager_torch": eager_torch, "lazy_torch": lazy_torch,
         "torch_compile": torch_compile, "jax_jit": jax_jit}


def make_step(case: str, impl: str, quick: bool):
    """The probe's entry point; ``case`` is ``"<side>x<side>/<n>ops"``."""
    side, n_ops = case.split("/")
    return IMPLS[impl](inputs(int(side.split("x")[0])), int(n_ops.removesuffix("ops")))


def run(quick: bool) -> list[dict]:
    rows = []
    for side, n_ops in cases(quick):
        arrays = inputs(side)
        case = f"{side}x{side}/{n_ops}ops"
        reference = chain(n_ops)(*[a.astype(np.float64) for a in arrays])
        for impl, make in IMPLS.items():
            r, _ = measure(BENCH, case, impl, partial(make, arrays, n_ops),
                           quick=quick, reference=reference, rtol=1e-4, atol=1e-4,
                           extra={"side": side, "n_ops": n_ops})
            rows.append(r)
    return rows
