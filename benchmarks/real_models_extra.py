"""Real models with recurrent layers and convolutions: an ``nn.LSTM`` language model and
Hugging Face ``transformers``' ResNet-18 (random init), one AdamW training step each,
the loss read every step, by:

* ``eager_torch``: PyTorch on the CPU;
* ``lazy_torch``: the same loop on ``lazy_torch.device()`` (step barrier ``sync``);
* ``lazy_compiled``: the model and ``opt.step`` under ``torch.compile(backend="lazytensor")``.

The LSTM layers run as one ``scan`` per layer and direction (``lowerings/recurrent.py``);
ResNet's deep convolutions as patches + matmul where XLA's CPU convolution measured
slower (``lowerings/conv.py``). Every implementation starts from the same weights and
batch; the first step's loss must equal eager's. ResNet needs ``transformers`` (its
rows are skipped without it). ``--quick``: toy sizes, eager and lazy only.
"""

from __future__ import annotations

from functools import partial

from . import _threads
from ._harness import measure, row

BENCH = "real_models_extra"
LR, WD = 1e-3, 1e-2
IMPLS = ("eager_torch", "lazy_torch", "lazy_compiled")


def config(model: str, quick: bool) -> dict:
    if model == "lstm_lm":
        if quick:
            return {"batch": 2, "seq": 8, "vocab": 50, "embed": 16, "hidden": 16, "layers": 1}
        return {"batch": 16, "seq": 64, "vocab": 1000, "embed": 128, "hidden": 256, "layers": 2}
    if quick:
        return {"batch": 2, "image": 32, "classes": 10, "widths": [8, 16, 16, 16]}
    return {"batch": 8, "image": 64, "classes": 10, "widths": [64, 128, 256, 512]}


def _have_transformers() -> bool:
    try:
        import transformers  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed / not importable here: skip the rows
        return False
    return True


def build(model: str, cfg: dict):
    """(module, batch (input, labels), loss_fn(module, input, labels))."""
    import torch
    from torch import nn

    _threads.torch_threads()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if model == "lstm_lm":
        class LSTMLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(cfg["vocab"], cfg["embed"])
                self.lstm = nn.LSTM(cfg["embed"], cfg["hidden"], num_layers=cfg["layers"],
                                    batch_first=True)
                self.head = nn.Linear(cfg["hidden"], cfg["vocab"])

            def forward(self, tokens):
                out, _ = self.lstm(self.embed(tokens))
                return self.head(out)

        tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), generator=g)

        def loss_fn(m, x, y):
            logits = m(x)
            return nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), y.reshape(-1))
        return LSTMLM(), (tokens, torch.roll(tokens, -1, dims=1)), loss_fn
    import transformers as tr

    module = tr.ResNetForImageClassification(tr.ResNetConfig(
        embedding_size=cfg["widths"][0], hidden_sizes=cfg["widths"], depths=[2, 2, 2, 2],
        layer_type="basic", num_labels=cfg["classes"]))
    images = torch.randn(cfg["batch"], 3, cfg["image"], cfg["image"], generator=g)
    labels = torch.randint(0, cfg["classes"], (cfg["batch"],), generator=g)

    def loss_fn(m, x, y):
        return m(pixel_values=x, labels=y).loss
    return module, (images, labels), loss_fn


def train_step(model: str, impl: str, cfg: dict):
    import torch

    module, (x, y), loss_fn = build(model, cfg)
    barrier = None
    if impl in ("lazy_torch", "lazy_compiled"):
        import lazy_torch

        dev = lazy_torch.device()
        module, x, y = module.to(dev), x.to(dev), y.to(dev)
        barrier = lazy_torch.sync
    module.train()
    opt = torch.optim.AdamW(module.parameters(), lr=LR, weight_decay=WD)
    forward_loss, opt_step = loss_fn, opt.step
    if impl == "lazy_compiled":
        import torch._dynamo

        torch._dynamo.reset()
        forward_loss = torch.compile(loss_fn, backend="lazytensor")
        opt_step = torch.compile(opt.step, backend="lazytensor")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(module, x, y)
        loss.backward()
        opt_step()
        if barrier is not None:
            barrier()
        return loss.item()
    return step


def run(quick: bool) -> list[dict]:
    try:
        import lazy_torch  # noqa: F401  (imported before eager PyTorch trains)
    except Exception:  # noqa: BLE001 - its rows will say why
        pass
    have_hf = _have_transformers()
    rows = []
    for model in ("lstm_lm", "resnet18"):
        cfg = config(model, quick)
        reference = None
        for impl in IMPLS[:2] if quick else IMPLS:
            if model == "resnet18" and not have_hf:
                rows.append(row(BENCH, model, impl, median_s=None, runs=0, skipped=True))
                continue
            r, first = measure(BENCH, model, impl, partial(train_step, model, impl, cfg),
                               quick=quick, reference=reference, rtol=2e-4, atol=2e-5,
                               extra={"config": cfg})
            if impl == "eager_torch" and first is not None:
                reference = first
                r["first_loss"] = first
            rows.append(r)
    return rows


# --- interleaved comparison (``python -m benchmarks.real_models_extra``) ------------------------

def main(argv=None) -> None:
    """Every implementation's step built and warmed, then timed one step each per round
    (a load change on the shared machine hits all alike); medians, × = eager ÷ this."""
    import argparse
    import os
    import statistics
    import time

    import numpy as np

    from .real_models import _table_row

    parser = argparse.ArgumentParser(description="real_models_extra, implementations "
                                     "interleaved in one process")
    parser.add_argument("--models", default="lstm_lm,resnet18")
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        _threads.pin(args.threads)
    import lazy_torch  # noqa: F401  (before eager PyTorch trains)

    impls = tuple(args.impls.split(","))
    print(f"load average at start: {os.getloadavg()}, threads: {args.threads or 'default'}")
    print("| case | " + " | ".join(impls) + f" | {impls[-1]}: first step |")
    print("|---" * (len(impls) + 2) + "|")
    for model in args.models.split(","):
        if model == "resnet18" and not _have_transformers():
            continue
        cfg = config(model, False)
        steps, first, reference = {}, {}, None
        for impl in impls:
            step = train_step(model, impl, cfg)
            t0 = time.perf_counter()
            result = step()
            first[impl] = time.perf_counter() - t0
            if reference is None:
                reference = result
            else:
                np.testing.assert_allclose(result, reference, rtol=2e-4, atol=2e-5)
            for _ in range(3):
                step()
            steps[impl] = step
        times: dict = {impl: [] for impl in steps}
        for _ in range(args.rounds):
            for impl, step in steps.items():
                t0 = time.perf_counter()
                step()
                times[impl].append(time.perf_counter() - t0)
        cells = {impl: (statistics.median(v), first[impl]) for impl, v in times.items()}
        print(_table_row(model, cells, impls), flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
