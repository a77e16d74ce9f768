"""Real models, trained unchanged: Hugging Face GPT-2, BERT and Llama (tiny random-init
configs, dropout 0) and the demo's character transformer.

Per model, one AdamW training step (forward, loss, backward, optimizer step) with the
loss read on the host every step, by:

* ``eager_torch``: PyTorch on the CPU;
* ``lazy_torch``: the same loop on ``lazy_torch.device()`` (step barrier ``sync``);
* ``lazy_compiled``: the model and ``opt.step`` under ``torch.compile(backend="lazytensor")``
  on the lazy device (each graph call records one sub-program node);
* ``inductor``: ``torch.compile`` with PyTorch's default backend on the CPU.

Case ``gpt2_every10`` reads the loss every 10th step only (times per step), so a lazy
step's tracing overlaps the previous step's execution. ``gpt2_generate``: greedy
``generate()`` of 32 new tokens (the tokens must equal eager's).

Every implementation starts from the same weights and batch; the first step's loss must
equal eager's. Hugging Face ``transformers`` is optional: without it those models'
rows are skipped. ``--quick`` runs GPT-2 (eager, lazy) and the demo model (eager, lazy,
compiled) at toy sizes, without inductor and the every-10th-step cases (CI proves the
module runs).

``python -m benchmarks.real_models [--models ...] [--impls ...] [--rounds N] [--threads N]``
compares the implementations *interleaved* in one process (each built and warmed, then
timed one step each per round; medians), for a shared machine whose load drifts; it
prints a markdown table with the load average at start and end.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from functools import partial

import numpy as np

from . import _threads
from ._harness import measure, row

BENCH = "real_models"
LR, WD = 1e-3, 1e-2
PIPELINE = 10
IMPLS = ("eager_torch", "lazy_torch", "lazy_compiled", "inductor")
HF_MODELS = ("gpt2", "bert", "llama")


def config(model: str, quick: bool) -> dict:
    if quick:
        return {"batch": 2, "seq": 8, "vocab": 64, "hidden": 32, "layers": 1, "heads": 2}
    return {"batch": 8, "seq": 64, "vocab": 1000, "hidden": 128, "layers": 2, "heads": 4}


def _have_transformers() -> bool:
    try:
        import transformers  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed / not importable here: skip the rows
        return False
    return True


# --- models ------------------------------------------------------------------------------------

def build(model: str, cfg: dict):
    """(module, loss_fn(module, tokens, labels) -> scalar loss)."""
    import torch

    _threads.torch_threads()
    torch.manual_seed(0)
    if model == "demo":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "demo"))
        from demo import CharLM

        module = CharLM(cfg["vocab"], cfg["seq"], d=cfg["hidden"], heads=cfg["heads"],
                        layers=cfg["layers"])

        def loss_fn(m, tokens, labels):
            logits = m(tokens)
            return torch.nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]),
                                                     labels.reshape(-1))
        return module, loss_fn
    import transformers as tr

    common = {"vocab_size": cfg["vocab"]}
    if model == "gpt2":
        module = tr.GPT2LMHeadModel(tr.GPT2Config(
            n_embd=cfg["hidden"], n_layer=cfg["layers"], n_head=cfg["heads"],
            n_positions=max(64, 2 * cfg["seq"]), resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, **common))
    elif model == "bert":
        module = tr.BertForMaskedLM(tr.BertConfig(
            hidden_size=cfg["hidden"], num_hidden_layers=cfg["layers"],
            num_attention_heads=cfg["heads"], intermediate_size=2 * cfg["hidden"],
            max_position_embeddings=max(64, 2 * cfg["seq"]), hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0, **common))
    elif model == "llama":
        module = tr.LlamaForCausalLM(tr.LlamaConfig(
            hidden_size=cfg["hidden"], intermediate_size=2 * cfg["hidden"],
            num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
            num_key_value_heads=max(1, cfg["heads"] // 2),
            max_position_embeddings=max(64, 2 * cfg["seq"]), attention_dropout=0.0, **common))
    else:
        raise KeyError(model)
    module.config.use_cache = False

    def loss_fn(m, tokens, labels):
        return m(input_ids=tokens, labels=labels).loss
    return module, loss_fn


def batch(cfg: dict):
    import torch

    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), generator=g)
    return tokens, torch.roll(tokens, -1, dims=1)


# --- implementations ----------------------------------------------------------------------------

def train_step(model: str, impl: str, cfg: dict):
    """A step callable: ``step(observe=True)`` runs one training step and returns the loss
    (a float) when ``observe``."""
    import torch

    module, loss_fn = build(model, cfg)
    tokens, labels = batch(cfg)
    barrier = None
    if impl in ("lazy_torch", "lazy_compiled"):
        import lazy_torch

        dev = lazy_torch.device()
        module = module.to(dev)
        tokens, labels = tokens.to(dev), labels.to(dev)
        barrier = lazy_torch.sync
    module.train()
    opt = torch.optim.AdamW(module.parameters(), lr=LR, weight_decay=WD)
    forward_loss, opt_step = loss_fn, opt.step
    if impl in ("lazy_compiled", "inductor"):
        import torch._dynamo

        torch._dynamo.reset()
        backend = "lazytensor" if impl == "lazy_compiled" else "inductor"
        forward_loss = torch.compile(loss_fn, backend=backend)
        opt_step = torch.compile(opt.step, backend=backend)

    def step(observe=True):
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(module, tokens, labels)
        loss.backward()
        opt_step()
        if barrier is not None:
            barrier()
        return loss.item() if observe else None
    return step


def generate(impl: str, cfg: dict, new_tokens: int):
    import torch

    module, _ = build("gpt2", cfg)
    module.eval()
    module.config.use_cache = True
    prompt, _ = batch({**cfg, "batch": 1, "seq": 8})
    if impl in ("lazy_torch", "lazy_compiled"):
        import lazy_torch

        module = module.to(lazy_torch.device())
        prompt = prompt.to(lazy_torch.device())
    extra = {}
    if impl in ("lazy_compiled", "inductor"):
        import torch._dynamo

        torch._dynamo.reset()
        module.forward = torch.compile(module.forward, backend="lazytensor"
                                       if impl == "lazy_compiled" else "inductor")
        # a static KV cache: one decoding graph for every length, so the backend runs
        # one program for the model however long the output (a dynamic cache: one per
        # length); eager and plain lazy keep the default (dynamic) cache
        extra["cache_implementation"] = "static"

    def run():
        with torch.no_grad():
            out = module.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                  do_sample=False, pad_token_id=0, **extra)
        return out.cpu().numpy().astype(np.float64)
    return run


def pipelined(make, steps: int):
    def setup():
        step = make()

        def run():
            for _ in range(steps - 1):
                step(False)
            return step(True)
        return run
    return setup


def run(quick: bool) -> list[dict]:
    try:
        import lazy_torch  # noqa: F401  (imported before eager PyTorch trains; see train_step)
    except Exception:  # noqa: BLE001 - its rows will say why
        pass
    have_hf = _have_transformers()
    models = ("gpt2", "demo") if quick else ("gpt2", "bert", "llama", "demo")
    rows = []
    for model in models:
        # CI time: Dynamo traces a Hugging Face model for tens of seconds; --quick compiles
        # the demo model only
        impls = IMPLS if not quick else IMPLS[:3] if model == "demo" else IMPLS[:2]
        cfg = config(model, quick)
        cases = [(model, 1)]
        if not quick and model == "gpt2":  # one model read every 10th step (compile time)
            cases.append((f"{model}_every10", PIPELINE))
        for case, steps in cases:
            reference = None
            for impl in impls:
                if model in HF_MODELS and not have_hf:
                    rows.append(row(BENCH, case, impl, median_s=None, runs=0, skipped=True))
                    continue
                setup = partial(train_step, model, impl, cfg)
                r, first = measure(BENCH, case, impl,
                                   pipelined(setup, steps) if steps > 1 else setup,
                                   quick=quick, reference=reference, rtol=2e-4, atol=2e-5,
                                   extra={"config": cfg})
                if steps > 1:
                    for k in ("median_s", "min_s", "p25_s", "p75_s"):
                        if r.get(k) is not None:
                            r[k] /= steps
                    r.pop("compile_s", None)
                    r["steps_per_run"] = steps
                elif impl == "eager_torch" and first is not None:
                    reference = first
                    r["first_loss"] = first
                rows.append(r)
    if not quick and have_hf:
        cfg = config("gpt2", quick)
        reference = None
        for impl in IMPLS[:3]:  # inductor recompiles per KV length past Dynamo's limit
            r, first = measure(BENCH, "gpt2_generate", impl,
                               partial(generate, impl, cfg, 32), quick=quick,
                               reference=reference, rtol=0, atol=0,
                               extra={"config": cfg, "new_tokens": 32})
            if impl == "eager_torch" and first is not None:
                reference = first
            rows.append(r)
    return rows


# --- interleaved comparison (``python -m benchmarks.real_models``) ------------------------------

def interleaved(models, impls, rounds: int, warmup: int = 3, new_tokens: int = 32,
                alone: bool = False) -> dict:
    """Every implementation's step is built and warmed first, then timed in rounds of one
    step each, so a load change on a shared machine hits every implementation alike.
    Returns ``{case: {impl: (median_s, first_s)}}``; the first result must match eager's.
    ``alone``: also time the compiled step's XLA program by itself (``xla_alone``)."""
    out: dict = {}
    spy = _Alone() if alone else None
    for model in models:
        if model in HF_MODELS + ("gpt2_generate",) and not _have_transformers():
            continue
        if model == "gpt2_generate":
            cfg = config("gpt2", False)
            makers = {impl: partial(generate, impl, cfg, new_tokens) for impl in impls}
        else:
            cfg = config(model, False)
            makers = {impl: partial(train_step, model, impl, cfg) for impl in impls}
        steps, first, reference = {}, {}, None
        for impl, make in makers.items():
            step = make()
            t0 = time.perf_counter()
            result = step()
            first[impl] = time.perf_counter() - t0
            if reference is None:
                reference = result
            elif model == "gpt2_generate":
                np.testing.assert_array_equal(result, reference)
            else:
                np.testing.assert_allclose(result, reference, rtol=2e-4, atol=2e-5)
            for _ in range(warmup):
                step()
            _settle(step)
            steps[impl] = step
            if spy is not None and impl == "lazy_compiled":
                steps["xla_alone"], first["xla_alone"] = spy.capture(step), 0.0
        times: dict = {impl: [] for impl in steps}
        for _ in range(rounds):
            for impl, step in steps.items():
                t0 = time.perf_counter()
                step()
                times[impl].append(time.perf_counter() - t0)
        out[model] = {impl: (statistics.median(v), first[impl]) for impl, v in times.items()}
        print(_table_row(model, out[model], tuple(out[model]), impls[-1]), flush=True)
    return out


class _Alone:
    """The step's largest XLA program, run by itself on copies of its inputs (compiled
    without donation, so the copies survive): what a backend with no Python cost would
    take. Spies on ``lazycore.runtime._executable`` (a benchmark-only look inside)."""

    def __init__(self):
        from lazycore import runtime

        self.armed, self.best = False, None
        original = runtime._executable

        import jax.numpy as jnp

        def executable(program, donate, *args, **kwargs):
            compiled = original(program, donate, *args, **kwargs)
            if not self.armed:
                return compiled

            def run(*xs):
                if self.best is None or program.size > self.best[0].size:
                    self.best = (program, [jnp.array(x, copy=True) for x in xs])
                return compiled(*xs)
            return run
        runtime._executable = executable

    def capture(self, step):
        import jax

        from lazycore import lowering

        self.armed, self.best = True, None
        step()
        self.armed = False
        program, args = self.best
        compiled = lowering.lower(program, ()).compile()
        return lambda: jax.block_until_ready(compiled(*args))


def _settle(step) -> None:
    """Wait for lazycore's background compiles (``tiers``: a program's variant for the
    buffers it donates compiles while earlier steps run interpreted), so the timed rounds
    measure the steady state, not the tier's hand-over."""
    tiers = getattr(sys.modules.get("lazycore"), "tiers", None)
    for _ in range(2 if tiers is not None else 0):
        tiers.wait_compiles()
        step()


def _table_row(case: str, cells: dict, impls, last: str | None = None) -> str:
    base = cells[impls[0]][0]
    parts = [f"{cells[impls[0]][0] * 1e3:.1f} ms"]
    for impl in impls[1:]:
        median, _ = cells[impl]
        parts.append(f"{median * 1e3:.1f} ms ({base / median:.2f}×)")
    first = cells[last or impls[-1]][1]
    return f"| {case} | " + " | ".join(parts) + f" | {first:.1f} s |"


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="real_models, implementations interleaved "
                                     "in one process (medians; × = eager time ÷ this time)")
    parser.add_argument("--models", default="gpt2,bert,llama,demo,gpt2_generate")
    parser.add_argument("--impls", default="eager_torch,lazy_torch,lazy_compiled")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--xla-alone", action="store_true",
                        help="also time the compiled step's XLA program alone")
    args = parser.parse_args(argv)
    if args.threads:
        _threads.pin(args.threads)
    import lazy_torch  # noqa: F401  (before eager PyTorch trains; see train_step)

    impls = tuple(args.impls.split(","))
    print(f"load average at start: {os.getloadavg()}, threads: {args.threads or 'default'}")
    columns = impls + (("xla_alone",) if args.xla_alone and "lazy_compiled" in impls else ())
    print("| case | " + " | ".join(columns) + f" | {impls[-1]}: first step |")
    print("|---" * (len(columns) + 2) + "|")
    interleaved(tuple(args.models.split(",")), impls, args.rounds, alone=args.xla_alone)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
