"""lazytensor demo: train a small character-level transformer LM with lazy_torch.

An ordinary eager PyTorch training loop; the only change is where tensors live
(``.to(dev)``) plus the step barrier ``lazy_torch.sync()``. Each step prints the
loss, the step time, and the compile cache's hits and compiles (steps 0 and 1 are two
programs -- the optimizer's state appears in step 1 -- run at once by the interpreter
tier while XLA compiles them in the background; later steps are cache hits, run by the
interpreter until the compile is done -- a few seconds on two cores). Finally the same model
is timed in eager PyTorch on the CPU, and on the lazy device under
``torch.compile(backend="lazytensor")``: medians of the steps after ``WARM`` warm-up steps
and the background compiles they started, i.e. the steady state of a long training run.

Text: Shakespeare's Sonnets (1609, public domain), ``demo/sonnets.txt``.
Run: ``nox -s demo`` or ``python demo/demo.py [--steps N]``.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import torch
import torch.nn.functional as F
from torch import nn

import lazy_torch
import lazycore as lc

HERE = os.path.dirname(os.path.abspath(__file__))
WARM = 3  # warm-up steps: the programs are traced and their compiles started


class CharLM(nn.Module):
    """Token + position embeddings, a causal TransformerEncoder, a linear head."""

    def __init__(self, vocab: int, seq: int, d: int = 64, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos[: tokens.shape[1]]
        h = self.encoder(h, mask=self.mask, is_causal=True)
        return self.head(self.norm(h))


def load_text():
    with open(os.path.join(HERE, "sonnets.txt"), encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    return torch.tensor([index[c] for c in text], dtype=torch.long), chars


def batches(data, steps, batch, seq, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - seq - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + seq] for s in starts])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts])
        yield x, y


def train(device, data, vocab, args, verbose, compiled=False):
    """``compiled``: the model and the optimizer step under
    ``torch.compile(backend="lazytensor")`` (each compiled graph is one recorded call)."""
    torch.manual_seed(0)
    model = CharLM(vocab, args.seq).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    forward, opt_step = model, opt.step
    if compiled:
        forward = torch.compile(model, backend="lazytensor")
        opt_step = torch.compile(opt.step, backend="lazytensor")
    lazy = device.type == "lazy"
    times, losses = [], []
    for step, (x, y) in enumerate(batches(data, args.steps if lazy else args.eager_steps,
                                          args.batch, args.seq)):
        if lazy and step == WARM:
            lc.tiers.wait_compiles()  # timed steps run the executables, not the interpreter
        before = lc.metrics.counters()
        start = time.perf_counter()
        x, y = x.to(device), y.to(device)
        logits = forward(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt_step()
        if lazy:
            lazy_torch.sync()                 # the step barrier
        value = loss.item()                   # observing the loss waits for the step
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        losses.append(value)
        if verbose:
            after = lc.metrics.counters()
            hits = after["cache_hits"] - before["cache_hits"]
            compiles = after["compiles"] - before["compiles"]
            print(f"step {step:3d}  loss {value:6.3f}  step {elapsed * 1e3:8.1f} ms  "
                  f"cache hits {hits}  compiles {compiles}", flush=True)
    return times, losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--eager-steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=48)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    data, chars = load_text()
    vocab = len(chars)
    dev = lazy_torch.device()
    print(f"lazytensor demo: char-level transformer LM on the Sonnets ({len(data)} characters, "
          f"vocabulary {vocab}) on device {dev}")
    print(f"uniform-guess loss would be ln({vocab}) = {math.log(vocab):.3f}\n")

    lc.metrics.reset()
    lazy_times, losses = train(dev, data, vocab, args, verbose=True)
    c = lc.metrics.counters()
    print(f"\nlazy: {c['compiles']} compiles, {c['cache_hits']} cache hits, "
          f"{c['fallbacks']} fallbacks, {c['traced_ops'] // max(1, args.steps)} ops traced per "
          "step")
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    print(f"loss: first 5 steps {first:.3f} -> last 5 steps {last:.3f}")

    eager_times, _ = train(torch.device("cpu"), data, vocab, args, verbose=False)
    compiled_times, compiled_losses = train(dev, data, vocab, args, verbose=False, compiled=True)
    gap = max(abs(a - b) for a, b in zip(losses, compiled_losses, strict=True))
    warm = WARM

    def median(times):
        return sorted(times[warm:])[len(times[warm:]) // 2]

    steady_lazy, steady_eager, steady_compiled = map(median, (lazy_times, eager_times,
                                                               compiled_times))
    print(f"\nmedian step time after {warm} warm-up steps and their compiles, same model and "
          "batches:")
    print(f"  eager PyTorch (CPU):                     {steady_eager * 1e3:8.1f} ms")
    print(f"  lazy_torch (XLA):                        {steady_lazy * 1e3:8.1f} ms   "
          f"({steady_eager / steady_lazy:.2f}x eager)")
    print(f"  torch.compile(backend=\"lazytensor\"):    {steady_compiled * 1e3:8.1f} ms   "
          f"({steady_eager / steady_compiled:.2f}x eager; losses within {gap:.1e} of lazy)")
    print(f"  warm-up steps: lazy {', '.join(f'{t * 1e3:.0f} ms' for t in lazy_times[:warm])}; "
          f"compiled {', '.join(f'{t:.1f} s' for t in compiled_times[:warm])} (Dynamo + AOT + XLA)")
    print("  the fastest path here: torch.compile(model, backend=\"lazytensor\") and "
          "torch.compile(opt.step, backend=\"lazytensor\")" if steady_compiled < steady_lazy
          else "")

if __name__ == "__main__":
    main()
