"""Steady-state training steps: an MLP and a small transformer encoder, AdamW.

Every implementation starts from the same initial weights and trains on the same fixed
batch, so the first step's loss is the same number everywhere (checked against eager
PyTorch). A step ends in a host-visible loss (``float``); the lazy ones sync the step
barrier first, so the parameter updates are computed in the timed step too.

Case ``mlp_pipelined`` runs the same MLP steps the way training loops usually read
the loss: every ``PIPELINE``-th step. Each lazy step still ends in its barrier
(``sync``/``mark_step``), but only the last step of a run reads the loss, so the
tracing of step n+1 overlaps XLA's asynchronous execution of step n (as in
PyTorch/XLA); ``jax.jit`` dispatches asynchronously too. Times are per step (a run's
time divided by ``PIPELINE``), and every run still ends in a host-visible loss.

* MLP 784-512-512-10, batch 128: eager PyTorch, lazy_torch, ``torch.compile`` (model and
  optimizer step; ``lazy_compiled``: the same on lazy_torch with the ``lazytensor``
  backend, timed by ``python -m benchmarks.train_step``), hand-written ``jax.jit`` (AdamW written out, buffers donated), and one
  TF function run eagerly, by lazy_tf, and by ``tf.function(jit_compile=True)``.
* Transformer encoder (2 layers, d_model 128, 4 heads, seq 64, batch 16) with a mean-pool
  classifier head: eager PyTorch, lazy_torch, ``torch.compile``.

Peak memory is measured per implementation in a fresh subprocess (``_probe``): the rise
of the resident-set high-water mark over the resident set after imports.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import _threads
from ._harness import measure
from ._probe import probe

BENCH = "train_step"
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 1e-2

PIPELINE = 10  # steps per timed run in the pipelined case (the loss is read once)
MLP_IMPLS = ("eager_torch", "lazy_torch", "torch_compile", "jax_jit", "eager_tf", "lazy_tf",
             "tf_xla")
TRANSFORMER_IMPLS = ("eager_torch", "lazy_torch", "torch_compile")


def config(case: str, quick: bool) -> dict:
    if case == "mlp":
        return {"sizes": (32, 16, 16, 10), "batch": 8} if quick else {
            "sizes": (784, 512, 512, 10), "batch": 128}
    if case == "transformer":
        return {"layers": 1, "d_model": 16, "heads": 2, "seq": 8, "batch": 2, "ffn": 32,
                "classes": 10} if quick else {
            "layers": 2, "d_model": 128, "heads": 4, "seq": 64, "batch": 16, "ffn": 512,
            "classes": 10}
    raise KeyError(case)


# --- the models, written once ------------------------------------------------------------

def torch_model(case: str, cfg: dict):
    import torch
    from torch import nn

    _threads.torch_threads()
    torch.manual_seed(0)
    if case == "mlp":
        s = cfg["sizes"]
        layers = []
        for i in range(len(s) - 1):
            layers.append(nn.Linear(s[i], s[i + 1]))
            if i < len(s) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(cfg["d_model"], cfg["heads"], cfg["ffn"],
                                               dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, cfg["layers"],
                                                 enable_nested_tensor=False)
            self.head = nn.Linear(cfg["d_model"], cfg["classes"])

        def forward(self, x):
            return self.head(self.encoder(x).mean(dim=1))

    return Encoder()


def batch(case: str, cfg: dict) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    if case == "mlp":
        x = rng.standard_normal((cfg["batch"], cfg["sizes"][0]), dtype=np.float32)
        y = rng.integers(0, cfg["sizes"][-1], cfg["batch"])
    else:
        x = rng.standard_normal((cfg["batch"], cfg["seq"], cfg["d_model"]), dtype=np.float32)
        y = rng.integers(0, cfg["classes"], cfg["batch"])
    return x, y.astype(np.int64)


def mlp_weights(cfg: dict) -> list[np.ndarray]:
    """The MLP's initial weights as [W1 (in, out), b1, W2, b2, ...] for x @ W + b."""
    model = torch_model("mlp", cfg)
    out = []
    for layer in model:
        if hasattr(layer, "weight"):
            out += [layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy()]
    return out


# --- PyTorch: eager, lazy, compiled -------------------------------------------------------

def _torch_step(case, cfg, device=None, compiled=None, barrier=None):
    import torch
    import torch.nn.functional as F

    _threads.torch_threads()
    model = torch_model(case, cfg)
    xs, ys = batch(case, cfg)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    if device is not None:
        model = model.to(device)
        x, y = x.to(device), y.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(BETA1, BETA2), eps=EPS,
                            weight_decay=WD)
    forward = torch.compile(model, backend=compiled) if compiled else model
    opt_step = torch.compile(opt.step, backend=compiled) if compiled else opt.step
    if barrier is not None:
        barrier()

    def step(observe=True):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt_step()
        if barrier is not None:
            barrier()
        return loss.item() if observe else None

    return step


def eager_torch(case, cfg):
    return _torch_step(case, cfg)


def lazy_torch(case, cfg):
    import lazy_torch as lt

    return _torch_step(case, cfg, device=lt.device(), barrier=lt.sync)


def torch_compile(case, cfg):
    return _torch_step(case, cfg, compiled="inductor")


def lazy_compiled(case, cfg):
    import lazy_torch as lt

    return _torch_step(case, cfg, device=lt.device(), compiled="lazytensor", barrier=lt.sync)


# --- JAX, hand-written ----------------------------------------------------------------------

def jax_jit(case, cfg):
    if case != "mlp":
        raise NotImplementedError("hand-written jax.jit exists for the MLP only")
    import jax
    import jax.numpy as jnp

    params = [jnp.asarray(w) for w in mlp_weights(cfg)]
    m = [jnp.zeros_like(p) for p in params]
    v = [jnp.zeros_like(p) for p in params]
    t = jnp.zeros((), jnp.float32)
    xs, ys = batch(case, cfg)
    x, y = jnp.asarray(xs), jnp.asarray(ys.astype(np.int32))

    def loss_fn(params, x, y):
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def train(params, m, v, t, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        bc1 = 1 - BETA1 ** t
        bc2_sqrt = jnp.sqrt(1 - BETA2 ** t)
        new_p, new_m, new_v = [], [], []
        for p, g, mi, vi in zip(params, grads, m, v, strict=True):
            p = p * (1 - LR * WD)
            mi = mi + (1 - BETA1) * (g - mi)
            vi = vi * BETA2 + (1 - BETA2) * g * g
            p = p - (LR / bc1) * mi / (jnp.sqrt(vi) / bc2_sqrt + EPS)
            new_p.append(p)
            new_m.append(mi)
            new_v.append(vi)
        return new_p, new_m, new_v, t, loss

    jtrain = jax.jit(train, donate_argnums=(0, 1, 2, 3))
    state = [params, m, v, t]

    def step(observe=True):
        out = jtrain(*state, x, y)
        state[:] = out[:4]
        return float(out[4]) if observe else None

    return step


# --- TensorFlow: one step function, run eagerly, lazily and by XLA -------------------------

def tf_mlp_step(tf, variable, tape_cls, cfg, x, y):
    """The TF MLP step written once; ``variable``/``tape_cls`` pick the framework's."""
    params = [variable(w) for w in mlp_weights(cfg)]
    m = [variable(np.zeros_like(w)) for w in mlp_weights(cfg)]
    v = [variable(np.zeros_like(w)) for w in mlp_weights(cfg)]
    t = variable(np.zeros((), np.float32))

    def step():
        with tape_cls() as tape:
            h = x
            for i in range(0, len(params), 2):
                h = tf.matmul(h, params[i]) + params[i + 1]
                if i + 2 < len(params):
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        grads = tape.gradient(loss, params)
        t.assign_add(1.0)
        bc1 = 1.0 - tf.pow(BETA1, t)
        bc2_sqrt = tf.sqrt(1.0 - tf.pow(BETA2, t))
        for p, g, mi, vi in zip(params, grads, m, v, strict=True):
            p.assign(p * (1 - LR * WD))
            mi.assign(mi + (1 - BETA1) * (g - mi))
            vi.assign(vi * BETA2 + (1 - BETA2) * g * g)
            p.assign_sub((LR / bc1) * mi / (tf.sqrt(vi) / bc2_sqrt + EPS))
        return loss

    return step


def _tf_inputs(tf, case, cfg, convert):
    xs, ys = batch(case, cfg)
    return convert(xs), convert(ys)


def eager_tf(case, cfg):
    if case != "mlp":
        raise NotImplementedError("the TF version exists for the MLP only")
    import tensorflow as tf

    _threads.tf_threads()
    x, y = _tf_inputs(tf, case, cfg, tf.convert_to_tensor)
    step = tf_mlp_step(tf, tf.Variable, tf.GradientTape, cfg, x, y)
    return _observing(step)


def tf_xla(case, cfg):
    if case != "mlp":
        raise NotImplementedError("the TF version exists for the MLP only")
    import tensorflow as tf

    _threads.tf_threads()
    x, y = _tf_inputs(tf, case, cfg, tf.convert_to_tensor)
    step = tf.function(tf_mlp_step(tf, tf.Variable, tf.GradientTape, cfg, x, y),
                       jit_compile=True)
    return _observing(step)


def _observing(step):
    def run(observe=True):
        loss = step()
        return float(loss.numpy()) if observe else None
    return run


def lazy_tf(case, cfg):
    if case != "mlp":
        raise NotImplementedError("the TF version exists for the MLP only")
    import tensorflow as tf

    _threads.tf_threads()
    import lazy_tf as ltf

    x, y = _tf_inputs(tf, case, cfg, ltf.convert_to_tensor)
    step = tf_mlp_step(tf, ltf.Variable, ltf.GradientTape, cfg, x, y)
    ltf.sync()

    def run(observe=True):
        loss = step()
        ltf.sync()
        return float(loss) if observe else None

    return run


IMPLS = {"eager_torch": eager_torch, "lazy_torch": lazy_torch, "torch_compile": torch_compile,
         "lazy_compiled": lazy_compiled, "jax_jit": jax_jit, "eager_tf": eager_tf,
         "lazy_tf": lazy_tf, "tf_xla": tf_xla}
CASES = {"mlp": MLP_IMPLS, "mlp_pipelined": MLP_IMPLS, "transformer": TRANSFORMER_IMPLS}


def pipelined(make, steps: int):
    """A run of ``steps`` training steps that reads only the last loss."""
    def setup():
        step = make()

        def run():
            for _ in range(steps - 1):
                step(False)
            return step(True)
        return run
    return setup


def make_step(case: str, impl: str, quick: bool):
    """The probe's entry point: one implementation's step (see ``_probe``)."""
    return IMPLS[impl](case, config(case, quick))


def _import_lazy_torch_first() -> None:
    """Import lazy_torch before eager PyTorch trains, as a user script would at its top
    (``Tensor.backward`` works either way; ``torch.autograd.grad`` on lazy tensors still
    needs the engine to start after the import: its device queues are sized then)."""
    try:
        import lazy_torch  # noqa: F401
    except Exception:  # noqa: BLE001 - not ready: lazy_torch's own row will say why
        pass


def run(quick: bool, memory: bool = True) -> list[dict]:
    _import_lazy_torch_first()
    rows = []
    for case, impls in CASES.items():
        if quick and case != "mlp":  # CI time: inductor's compile of the transformer is ~1 min
            impls = tuple(i for i in impls if i != "torch_compile")
        model = "mlp" if case == "mlp_pipelined" else case
        steps = (2 if quick else PIPELINE) if case == "mlp_pipelined" else 1
        cfg = config(model, quick)
        reference = None
        for impl in impls:
            setup = partial(IMPLS[impl], model, cfg)
            r, first = measure(BENCH, case, impl, pipelined(setup, steps) if steps > 1 else setup,
                               quick=quick, reference=reference, rtol=1e-4, atol=1e-5,
                               extra={"config": cfg})
            if impl == "eager_torch" and first is not None:
                reference = first  # every later implementation must agree with eager PyTorch
                r["first_loss"] = first
            if steps > 1:
                _per_step(r, steps)
            elif memory and not r.get("skipped") and (not quick or impl == "eager_torch"):
                r.update(_memory(case, impl, quick))
            rows.append(r)
    return rows


def _per_step(r: dict, steps: int) -> None:
    """A pipelined row's times per step; its first call is ``steps`` steps (the plain
    case reports compile time), so it is dropped."""
    for k in ("median_s", "min_s", "p25_s", "p75_s"):
        if r.get(k) is not None:
            r[k] /= steps
    r.pop("compile_s", None)
    r["steps_per_run"] = steps


def _memory(case: str, impl: str, quick: bool) -> dict:
    result = probe(__name__, case, impl, quick=quick, steps=3 if quick else 10)
    if "error" in result:
        return {"memory_error": result["error"]}
    return {"peak_mb": result["peak_delta_mb"], "peak_rss_mb": result["peak_rss_mb"]}



def interleaved(impls, rounds: int, warmup: int = 5) -> dict:
    """The MLP step of each implementation, built and warmed in one process, then timed
    one step each per round (a load change hits all alike); medians of CPU time
    (``time.process_time``: preemption by other jobs does not inflate it) and wall time.
    Every first loss must match eager PyTorch's."""
    import statistics
    import time

    cfg = config("mlp", False)
    steps, reference = {}, None
    for impl in impls:
        step = IMPLS[impl]("mlp", cfg)
        first = step()
        reference = first if reference is None else reference
        np.testing.assert_allclose(first, reference, rtol=1e-4, atol=1e-5)
        for _ in range(warmup):
            step()
            _wait_compiles()
        steps[impl] = step
    cpu: dict = {impl: [] for impl in impls}
    wall: dict = {impl: [] for impl in impls}
    for _ in range(rounds):
        for impl, step in steps.items():
            c, w = time.process_time(), time.perf_counter()
            step()
            cpu[impl].append(time.process_time() - c)
            wall[impl].append(time.perf_counter() - w)
    return {impl: (statistics.median(cpu[impl]), statistics.median(wall[impl]))
            for impl in impls}


def _wait_compiles() -> None:
    """lazycore's background compiles finish before timing (its ``auto`` tier)."""
    import sys

    tiers = getattr(sys.modules.get("lazycore"), "tiers", None)
    if tiers is not None:
        tiers.wait_compiles()


def main(argv=None) -> None:
    import argparse
    import os

    parser = argparse.ArgumentParser(description="the MLP step, implementations interleaved "
                                     "in one process (medians; ÷ = this time ÷ the last's)")
    parser.add_argument("--impls", default="eager_torch,lazy_torch,lazy_compiled,jax_jit")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        _threads.pin(args.threads)
    _import_lazy_torch_first()
    impls = tuple(args.impls.split(","))
    print(f"load average at start: {os.getloadavg()}, threads: {args.threads or 'default'}")
    times = interleaved(impls, args.rounds)
    base_cpu, base_wall = times[impls[-1]]
    print(f"| impl | CPU ms | ÷ {impls[-1]} | wall ms | ÷ {impls[-1]} |\n|---|---|---|---|---|")
    for impl, (c, w) in times.items():
        print(f"| {impl} | {c * 1e3:.2f} | {c / base_cpu:.2f}× | {w * 1e3:.2f} |"
              f" {w / base_wall:.2f}× |")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
