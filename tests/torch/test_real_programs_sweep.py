"""Training and evaluation idioms from programs written by others, each run eagerly on CPU
and on the lazy device with the same seeds: losses, parameters after a few optimizer steps,
optimizer state, outputs and gradients must agree (dropout off; every input from a seeded
generator, so both runs see the same data)."""

from __future__ import annotations

import copy
import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

import lazy_torch


def _data(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


X, Y = _data(8, 6), torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def _flat(x):
    if isinstance(x, torch.Tensor):
        return [x.detach().cpu()]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _flat(x[k])]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _flat(v)]
    return [torch.tensor(x)]


def _sync(device):
    if torch.device(device).type == "lazy":
        lazy_torch.sync()


def check(program, rounding=False, rtol=1e-4, atol=1e-5, loose=()):
    """`rounding`: half-precision results must be eager's up to rare one-ulp flips (see
    `_rounds_like`); `loose` items within one bfloat16 rounding at the result's scale."""
    expected, got = _flat(program("cpu")), _flat(program(lazy_torch.device()))
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.dtype == e.dtype and g.shape == e.shape, (i, g.dtype, e.dtype, g.shape, e.shape)
        if rounding and i not in loose:
            _rounds_like(g, e, i)
        else:  # loose: within a bfloat16 rounding of partial sums at the result's scale
            rtol, atol = (2.0 ** -7, 2.0 ** -7 * float(e.abs().max())) if rounding else (rtol, atol)
            torch.testing.assert_close(g, e, rtol=rtol, atol=atol, equal_nan=True,
                                       msg=lambda m, i=i: f"item {i}: {m}")


def _rounds_like(got, expected, item):
    """Each element within one unit in the last place of eager's, and at most 0.1% of them
    different. Eager's BLAS/oneDNN and XLA add float32 partial sums in different orders,
    and eager's vector kernels fuse multiply-adds differently per CPU, so a rounding can
    flip (a few elements in thousands on a Zen 3 CPU, none on the one these tests were
    written on); rounding an intermediate to the half type flips a large share."""
    g, e = got.double(), expected.double()
    ulp = torch.nextafter(expected.abs(), torch.tensor(float("inf"), dtype=expected.dtype))
    within = (g - e).abs() <= (ulp.double() - e.abs()) + 2.0 ** -24  # + float32's rounding at 1
    flips = int((g != e).sum())
    assert bool(within.all()) and flips <= max(2, e.numel() // 1000), (item, flips, e.numel())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_rounds_once(dtype):
    """Eager's CPU kernels accumulate float16/bfloat16 in float32 and round the result once
    (the bias of addmm/baddbmm/linear/conv included; sums, means, variances, sigmoid, lerp,
    addcmul/addcdiv with a float32 scalar, as optimizers use them; bfloat16 gelu and
    last-dim softmax); rounding the product before the bias, or any intermediate, differs."""
    a, w, b = (_data(*s, seed=i).to(dtype) for i, s in enumerate([(8, 512), (512, 16), (16,)]))
    x, k, cb = _data(2, 16, 9, 9, seed=3).to(dtype), _data(8, 16, 3, 3, seed=4).to(dtype), b[:8]
    big = _data(4, 8, 14, 14, seed=5).to(dtype)

    def program(d):
        a_, w_, b_, x_, k_, cb_, big_ = (t.to(d) for t in (a, w, b, x, k, cb, big))
        g = big_.requires_grad_() if dtype == torch.bfloat16 else big_
        out = [torch.addmm(b_, a_, w_), torch.addmm(b_, a_, w_, alpha=0.5, beta=2),
               F.linear(a_, w_.T, b_), torch.baddbmm(b_[:4], a_.view(2, 4, 512), w_[:, :4]
                                                    .expand(2, 512, 4)),
               F.conv2d(x_, k_, cb_), big_.sum((0, 2, 3)), big_.mean((0, 2, 3)),
               big_.var((0, 2, 3)), *torch.var_mean(big_, (0, 2, 3)), big_.sigmoid(),
               big_.lerp(big_.flip(0), 0.1), big_.lerp(big_.flip(0), big_.abs() / 4),
               big_.addcmul(big_.flip(0), big_.flip(1), value=0.3),
               big_.addcdiv(big_.flip(0), big_.abs() + 0.5, value=-0.01)]
        if dtype == torch.bfloat16:  # the bias gradient of a convolution is a sum
            out += [F.gelu(big_), F.gelu(big_, approximate="tanh"), big_.softmax(-1)]
            cw = k_[:, :8].detach().requires_grad_()
            F.conv2d(g, cw, cb_.detach().requires_grad_()).sum().backward()
            out.append(cw.grad)
        return out
    # the convolution's bfloat16 weight gradient: eager's oneDNN kernel on CPUs without
    # native bfloat16 dot products (AVX2) rounds partial sums, not only the result
    check(program, rounding=True, loose=(18,))


def test_autocast_bfloat16_step():
    """A convolution and a linear layer with biases under CPU autocast: the bfloat16
    outputs, the loss and the float32 parameters' gradients are eager's (up to one-ulp
    flips; the convolution's weight gradient within bfloat16's tolerance)."""
    def program(d):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3)).to(d)
        with torch.autocast(device_type=torch.device(d).type, dtype=torch.bfloat16):
            y = m(_data(2, 3, 6, 6).to(d))
            loss = F.cross_entropy(y, torch.tensor([0, 2]).to(d))
        loss.backward()
        return y, loss, [p.grad for p in m.parameters()]
    check(program, rounding=True, loose=(2,))  # conv weight gradient, as above


OPTIMIZERS = {
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True),
    "adamw_foreach": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, foreach=True),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                              weight_decay=1e-3, foreach=False),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-2, momentum=0.9, centered=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
}
SCHEDULERS = {
    "adam_amsgrad": lambda o: torch.optim.lr_scheduler.OneCycleLR(o, 0.05, total_steps=10),
    "adamw_foreach": lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3),
    "sgd_nesterov": lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 0.5 ** e),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_step_idioms(name):
    """Gradient accumulation over two micro-batches, clip_grad_norm_/clip_grad_value_, an LR
    scheduler, zero_grad after step: losses, norms, lrs, parameters and optimizer state."""
    def program(d):
        torch.manual_seed(0)
        m = _mlp().to(d)
        opt = OPTIMIZERS[name](m.parameters())
        sched = SCHEDULERS.get(name, lambda o: None)(opt)
        out = []
        for _ in range(3):
            for j in range(2):
                loss = F.cross_entropy(m(X[j::2].to(d)), Y[j::2].to(d)) / 2
                loss.backward()
            out.append(torch.nn.utils.clip_grad_norm_(m.parameters(), 0.1))
            torch.nn.utils.clip_grad_value_(m.parameters(), 0.01)
            opt.step()
            opt.zero_grad()
            if sched is not None:
                sched.step()
                out.append(sched.get_last_lr())
            _sync(d)
            out.append(loss)
        return out, list(m.parameters()), [s for s in opt.state.values()]
    check(program)


def test_eval_loop_and_losses():
    """model.eval() + no_grad accuracy via argmax/eq/sum().item(), top-k of scores with a
    NaN; cross_entropy with label_smoothing, ignore_index, class weights and probability
    targets."""
    def program(d):
        torch.manual_seed(0)
        m, correct, out = _mlp().to(d).eval(), 0, []
        with torch.no_grad():
            for i in range(2):
                logits = m(X[i * 4:(i + 1) * 4].to(d))
                correct += logits.argmax(dim=1).eq(Y[i * 4:(i + 1) * 4].to(d)).sum().item()
                out.append(logits.softmax(-1).max(1).values)
        logits = _data(8, 5, seed=1).to(d).requires_grad_()
        t = torch.tensor([0, 1, -100, 4, 2, -100, 3, 1]).to(d)
        for kw in [dict(label_smoothing=0.1), dict(ignore_index=-100, reduction="sum"),
                   dict(weight=torch.arange(1., 6.).to(d), label_smoothing=0.2),
                   dict(reduction="none")]:
            loss = F.cross_entropy(logits, t, **kw)
            out += [loss, torch.autograd.grad(loss.sum(), logits)]
        out.append(F.cross_entropy(logits, _data(8, 5).softmax(-1).to(d), label_smoothing=0.1))
        scores = torch.tensor([[0.5, float("nan"), 2.0, float("inf"), 0.5]]).to(d)
        out += [*scores.topk(3), *scores.sort(descending=True)]  # NaN largest, as eager's
        return correct, out
    check(program)


def test_normalization_layers():
    """BatchNorm running statistics (momentum 0.1 and None: a cumulative average), eval with
    the running statistics, GroupNorm."""
    def program(d):
        torch.manual_seed(0)
        out = []
        for momentum in (0.1, None):
            bn = nn.BatchNorm2d(3, momentum=momentum).to(d)
            for i in range(3):
                bn(_data(4, 3, 5, 5, seed=i).to(d)).square().sum().backward()
            out += [bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.weight.grad,
                    bn.eval()(_data(2, 3, 5, 5, seed=9).to(d))]
        gn, x = nn.GroupNorm(2, 6).to(d), _data(3, 6, 4, 4).to(d).requires_grad_()
        gn(x).square().sum().backward()
        return out, x.grad, gn.weight.grad
    check(program)


def test_attention_modules():
    """nn.MultiheadAttention with key-padding and causal masks, TransformerEncoderLayer
    (norm_first both ways), scaled_dot_product_attention with boolean/float masks and
    is_causal; outputs and gradients."""
    def program(d):
        torch.manual_seed(0)
        x = _data(2, 5, 8).to(d).requires_grad_()
        pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2]).to(d)
        causal = nn.Transformer.generate_square_subsequent_mask(5).to(d)
        mha = nn.MultiheadAttention(8, 2, batch_first=True).to(d)
        o, w = mha(x, x, x, key_padding_mask=pad, attn_mask=causal.isinf())
        out = [o, w]
        for norm_first in (False, True):
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                               norm_first=norm_first).to(d)
            out.append(layer(x, src_mask=causal, src_key_padding_mask=pad))
        q, k, v = (_data(2, 2, 5, 4, seed=s).to(d) for s in (1, 2, 3))
        keep = _data(5, 5, seed=4) > -0.5
        keep[:, 0] = True
        for kw in [dict(is_causal=True), dict(attn_mask=keep.to(d)),
                   dict(attn_mask=_data(2, 1, 5, 5).to(d), scale=0.3)]:
            out.append(F.scaled_dot_product_attention(q * x[0, 0, 0], k, v, **kw))
        loss = sum(t.square().sum() for t in out)
        return out, torch.autograd.grad(loss, [x, mha.in_proj_weight])
    check(program)


def test_interpolate_and_pixel_shuffle():
    def program(d):
        x, out = _data(2, 3, 5, 7).to(d).requires_grad_(), []
        for kw in [dict(scale_factor=2, mode="nearest"), dict(size=(9, 11), mode="nearest-exact"),
                   dict(scale_factor=2, mode="bilinear", align_corners=False),
                   dict(size=(3, 4), mode="bilinear", align_corners=True),
                   dict(size=(6, 9), mode="bicubic", align_corners=True)]:
            y = F.interpolate(x, **kw)
            out += [y, torch.autograd.grad(y.square().sum(), x)]
        return out, F.pixel_shuffle(x[:, :1].repeat(1, 4, 1, 1), 2)
    check(program)


def test_ema_view_writes_and_checkpoint_round_trip():
    """AveragedModel EMA and a hand-written lerp_ EMA of a copy.deepcopy'd model (the copy
    once shared the model's buffers, deleted when the step donated them), in-place writes
    to slices of parameters under no_grad, torch.save/torch.load of model and optimizer."""
    def program(d):
        torch.manual_seed(0)
        m = _mlp().to(d)
        with torch.no_grad():
            m[0].weight[:2].zero_()
            m[0].weight[:, 1].mul_(2)
            m[0].bias[3:5] = 7.0
            m[2].weight.t()[0].add_(1)
            m[0].weight.diagonal().fill_(-1)
        F.cross_entropy(m(X.to(d)), Y.to(d)).backward()
        ema, ema_hand = AveragedModel(m, multi_avg_fn=get_ema_multi_avg_fn(0.9)), copy.deepcopy(m)
        no_grads = [p.grad is None for p in ema_hand.parameters()]  # nn.Parameter's deepcopy
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(m(X.to(d)), Y.to(d)).backward()
            opt.step()
            ema.update_parameters(m)
            with torch.no_grad():
                for pe, p in zip(ema_hand.parameters(), m.parameters(), strict=True):
                    pe.lerp_(p, 0.1)
            _sync(d)
        buf = io.BytesIO()
        torch.save({"model": m.state_dict(), "opt": opt.state_dict()}, buf)
        ckpt = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
        m2 = _mlp().to(d)
        m2.load_state_dict(ckpt["model"])
        opt2 = torch.optim.Adam(m2.parameters(), lr=0.01)
        opt2.load_state_dict(ckpt["opt"])
        F.cross_entropy(m2(X.to(d)), Y.to(d)).backward()
        opt2.step()
        on_cpu = torch.load(io.BytesIO(buf.getvalue()), map_location="cpu")["model"]
        return (list(ema.parameters()), list(ema_hand.parameters()), list(m2.parameters()),
                opt2.state_dict()["state"], [t.device.type for t in on_cpu.values()] == ["cpu"] * 4,
                no_grads)
    check(program)
