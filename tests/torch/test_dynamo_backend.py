"""``torch.compile(backend="lazytensor")`` against eager CPU PyTorch: values, gradients,
parameter updates over several steps, graph breaks, recompiles, random draws."""

from __future__ import annotations

import copy

import pytest
import torch
import torch._dynamo
from torch import nn

import lazy_torch
import lazycore as lc

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class Block(nn.Module):
    """Embedding, attention with a causal mask, layer norm, GELU MLP: the ops of a
    transformer step."""

    def __init__(self, vocab=11, dim=8, heads=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        # no in-projection bias: the key bias has a zero gradient (softmax is shift-
        # invariant), which AdamW turns into +-lr steps from rounding noise
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True, bias=False)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        n = tokens.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=tokens.device), 1)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        h = self.norm(h + a)
        return self.head(h + self.mlp(h))


def _pair(make, dev, seed=0):
    torch.manual_seed(seed)
    eager = make()
    return eager, copy.deepcopy(eager).to(dev)


def _close(lazy, eager, tol=1e-5):
    torch.testing.assert_close(lazy.cpu(), eager, rtol=tol, atol=tol)


def test_backend_is_found_by_name():
    from torch._dynamo.backends.registry import lookup_backend

    from lazy_torch.dynamo import lazytensor

    assert "lazytensor" in torch._dynamo.list_backends()
    assert lookup_backend("lazytensor") is lazytensor


def test_inference_matches_eager_and_stays_lazy(dev):
    eager, lazy = _pair(Block, dev)
    tokens = torch.randint(0, 11, (2, 5))
    compiled = torch.compile(lazy, backend="lazytensor")
    with torch.no_grad():
        want = eager(tokens)
        compiled(tokens.to(dev))  # first call: Dynamo, AOT, capture
        before = lc.metrics.counters()
        with lc.allow_sync(False):  # the call computes nothing
            got = compiled(tokens.to(dev))
        after = lc.metrics.counters()
    assert type(got) is lazy_torch.LazyTensor
    # one sub-program call per graph: a handful of nodes, not one per ATen op
    assert after["traced_ops"] - before["traced_ops"] <= 4
    assert after["dynamo_captures"] == before["dynamo_captures"]
    _close(got, want)


def test_training_values_gradients_and_adamw_updates(dev):
    eager, lazy = _pair(Block, dev)
    compiled = torch.compile(lazy, backend="lazytensor")
    opt_e = torch.optim.AdamW(eager.parameters(), lr=1e-2)
    opt_l = torch.optim.AdamW(lazy.parameters(), lr=1e-2)
    torch.manual_seed(1)
    batches = [(torch.randint(0, 11, (2, 5)), torch.randint(0, 11, (2, 5))) for _ in range(3)]
    for tokens, target in batches:
        for model, opt, d in ((eager, opt_e, "cpu"), (compiled, opt_l, dev)):
            opt.zero_grad()
            logits = model(tokens.to(d))
            loss = nn.functional.cross_entropy(logits.reshape(-1, 11), target.to(d).reshape(-1))
            loss.backward()
            opt.step()
            if d == "cpu":
                want = loss.detach()
            else:
                got = loss
        _close(got, want)
        for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
            _close(pl.grad, pe.grad, 1e-4)
            _close(pl.detach(), pe.detach(), 1e-4)
    assert lc.metrics.counters()["dynamo_graphs::backward"] >= 1


@pytest.mark.parametrize("opt_class", [torch.optim.AdamW, torch.optim.SGD])
def test_compiled_whole_train_step_with_optimizer(opt_class, dev):
    def make():
        return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))

    eager, lazy = _pair(make, dev)
    kwargs = {"lr": 0.05, "momentum": 0.9} if opt_class is torch.optim.SGD else {"lr": 0.02}
    opt_e = opt_class(eager.parameters(), **kwargs)
    opt_l = opt_class(lazy.parameters(), **kwargs)

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    compiled_step = torch.compile(step, backend="lazytensor")
    torch.manual_seed(2)
    for i in range(4):
        x, y = torch.randn(5, 4), torch.randn(5, 3)
        want = step(eager, opt_e, x, y)
        xl, yl = x.to(dev), y.to(dev)
        with lc.allow_sync(i == 0):  # warm: the step computes nothing (state stays lazy)
            got = compiled_step(lazy, opt_l, xl, yl)
        _close(got, want)
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        _close(pl.detach(), pe.detach(), 1e-5)
    assert lc.metrics.counters()["dynamo_graphs::inference"] >= 1  # the optimizer graph


def test_compiled_step_updates_parameters_in_place_and_aliases_read_like_eager(dev):
    """The step's program donates the parameter and Adam state buffers it overwrites
    (XLA updates them in place): an alias or view taken before the step reads the new
    value, as eager's do, and a clone taken before it keeps the old one (its buffer is
    then not donated)."""
    eager, lazy = _pair(lambda: nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)), dev)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=0.05)
    opt_l = torch.optim.AdamW(lazy.parameters(), lr=0.05)
    forward, opt_step = torch.compile(lazy, backend="lazytensor"), \
        torch.compile(opt_l.step, backend="lazytensor")
    torch.manual_seed(3)
    for i in range(4):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        held = []
        for model, run, opt, d in ((eager, eager, opt_e.step, "cpu"),
                                    (lazy, forward, opt_step, dev)):
            weight = model[0].weight
            held.append((weight.detach(), weight[1], weight.clone()))
            if d != "cpu":  # a parameter nothing else holds: its buffer is donated
                buffer = model[2].weight._cell.value.node.value
            for p in model.parameters():
                p.grad = None
            nn.functional.mse_loss(run(x.to(d)), y.to(d)).backward()
            opt()
            if d != "cpu":
                lazy_torch.sync()
        for got, want in zip(held[1], held[0], strict=True):  # alias, view: new; clone: old
            _close(got, want)
        _close(held[1][0], eager[0].weight.detach())
        if i:  # a step from computed values: the old weight buffer was reused in place
            assert buffer.is_deleted()
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        _close(pl.detach(), pe.detach())
        for key in ("exp_avg", "exp_avg_sq"):
            _close(opt_l.state[pl][key], opt_e.state[pe][key])


def test_graph_break_in_the_middle_keeps_values_lazy(dev):
    def f(x, w):
        h = torch.relu(x @ w)
        torch._dynamo.graph_break()
        return (h * 2).sum(dim=0) + h.mean()

    x, w = torch.randn(4, 3), torch.randn(3, 5)
    want = f(x, w)
    compiled = torch.compile(f, backend="lazytensor")
    compiled(x.to(dev), w.to(dev))
    breaks = lc.metrics.counters()["dynamo_graph_breaks"]
    with lc.allow_sync(False):
        got = compiled(x.to(dev), w.to(dev))
    assert breaks >= 1
    _close(got, want)


def test_new_shape_recompiles_and_is_counted(dev):
    compiled = torch.compile(lambda x: (x.sin() * x).sum(-1), backend="lazytensor",
                             dynamic=False)
    for n in (3, 4, 3):
        x = torch.randn(2, n)
        _close(compiled(x.to(dev)), (x.sin() * x).sum(-1))
    counters = lc.metrics.counters()
    assert counters["dynamo_recompiles"] >= 1
    assert any("torch.compile" in reason for _, reason in lc.metrics.recompile_reasons())


def test_dynamic_shapes_capture_per_size(dev):
    compiled = torch.compile(lambda x: torch.softmax(x, -1) * x.shape[-1], backend="lazytensor",
                             dynamic=True)
    for n in (3, 5):
        x = torch.randn(2, n)
        _close(compiled(x.to(dev)), torch.softmax(x, -1) * n)


def test_input_mutation_and_noncontiguous_input(dev):
    def f(x, y):
        x.add_(1.0)
        return x * y.t()

    x, y = torch.randn(3, 4), torch.randn(4, 3)
    xl, yl = x.to(dev), y.to(dev)
    want = f(x, y)
    got = torch.compile(f, backend="lazytensor")(xl, yl)
    _close(got, want)
    _close(xl, x)  # the caller's tensor was written

    base = torch.randn(4, 6)
    view = base[:, 1:5:2]
    lazy_view = base.to(dev)[:, 1:5:2]
    g = torch.compile(lambda v: v.as_strided((2, 2), (1, 2)) + v.sum(), backend="lazytensor")
    _close(g(lazy_view), view.as_strided((2, 2), (1, 2)) + view.sum())


def test_dtype_view_and_conj_view_inputs_keep_their_meaning(dev):
    """An input that is a view in another dtype, or a conj() view, reads its storage
    reinterpreted / conjugated; re-viewing the storage would drop that silently."""
    f = torch.compile(lambda v: v * 2 + 1, backend="lazytensor")
    x = torch.randn(4, 6)
    _close(f(x.to(dev)[:, :4].view(torch.int16)), x[:, :4].view(torch.int16) * 2 + 1, tol=0)
    z = torch.randn(3, 4, dtype=torch.complex64)
    _close(f(z.to(dev).conj()), z.conj() * 2 + 1)
    w = torch.compile(lambda v: v.add_(1.0), backend="lazytensor")
    zl = z.to(dev)
    w(zl.conj())
    want = z.clone()
    want.conj().add_(1.0)
    _close(zl, want)  # the write reached the storage through the conj view


def test_dropout_draws_a_new_mask_each_call(dev):
    layer = nn.Dropout(0.5).train()
    compiled = torch.compile(layer, backend="lazytensor")
    x = torch.ones(64, 64, device=dev)
    a, b = compiled(x).cpu(), compiled(x).cpu()
    for m in (a, b):
        assert set(m.unique().tolist()) <= {0.0, 2.0}
        assert 0.3 < (m == 0).float().mean().item() < 0.7
    assert not torch.equal(a, b)


def test_batch_norm_running_stats_train_like_eager(dev):
    """BatchNorm writes its buffers (``running_mean.copy_``, ``num_batches_tracked.add_``)
    inside the graph: they must match eager, and the saved activations of the backward
    must not be invalidated by those writes."""
    def make():
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.Flatten(), nn.Linear(4 * 6 * 6, 3))

    eager, lazy = _pair(make, dev)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_l = torch.optim.SGD(lazy.parameters(), lr=0.1)
    compiled = torch.compile(lambda m, x: m(x).square().mean(), backend="lazytensor")
    breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    torch.manual_seed(3)
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8)
        want = eager(x).square().mean()
        want.backward()
        got = compiled(lazy, x.to(dev))
        got.backward()
        _close(got, want.detach())
        for (name, pe), pl in zip(eager.named_parameters(), lazy.parameters(), strict=True):
            torch.testing.assert_close(pl.grad.cpu(), pe.grad, rtol=1e-4, atol=1e-5, msg=name)
        for opt in (opt_e, opt_l):
            opt.step()
            opt.zero_grad()
        for (name, be), bl in zip(eager.named_buffers(), lazy.buffers(), strict=True):
            torch.testing.assert_close(bl.cpu(), be, rtol=1e-5, atol=1e-6, msg=name)
    assert sum(torch._dynamo.utils.counters["graph_break"].values()) == breaks


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_relu"])
def test_recurrent_layers_are_one_scan_and_train_like_eager(kind, dev, monkeypatch):
    """nn.LSTM/GRU/RNN under the backend: values, gradients (input, initial states,
    parameters) and SGD updates equal eager's, and the captured graphs do not grow with
    the sequence length (one recurrence op per layer and direction, not a cell per
    step)."""
    from lazy_torch.dynamo import _report

    sizes = []
    captured = _report.captured
    monkeypatch.setattr(_report, "captured",
                        lambda g, c, n: (sizes.append((g.kind, c.program.n_ops)),
                                         captured(g, c, n)))

    def make():
        if kind == "lstm":
            return nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
        if kind == "gru":
            return nn.GRU(3, 4, num_layers=2, dropout=0.0)
        return nn.RNN(3, 4, nonlinearity="relu", bias=False)

    eager, lazy = _pair(make, dev)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_l = torch.optim.SGD(lazy.parameters(), lr=0.1)
    layers = eager.num_layers * (2 if eager.bidirectional else 1)

    def loss_of(model, x, h0):
        out, h = model(x, h0)
        h = h[1] if isinstance(h, tuple) else h  # an LSTM's cell state
        return out.square().mean() + h.sin().sum()

    compiled = torch.compile(loss_of, backend="lazytensor", dynamic=False)
    torch.manual_seed(4)
    for steps in (5, 5, 11):
        x = torch.randn(2, steps, 3) if kind == "lstm" else torch.randn(steps, 2, 3)
        h = torch.randn(layers, 2, 4)
        h0 = (h, torch.randn(layers, 2, 4)) if kind == "lstm" else h
        xl = x.to(dev).requires_grad_()
        x.requires_grad_()
        hl = tuple(t.to(dev).requires_grad_() for t in h0) if kind == "lstm" \
            else h0.to(dev).requires_grad_()
        h0 = tuple(t.clone().requires_grad_() for t in h0) if kind == "lstm" \
            else h0.clone().requires_grad_()
        want = loss_of(eager, x, h0)
        want.backward()
        got = compiled(lazy, xl, hl)
        got.backward()
        _close(got, want.detach(), 1e-5)
        _close(xl.grad, x.grad, 1e-4)
        for a, b in zip(hl if kind == "lstm" else (hl,), h0 if kind == "lstm" else (h0,),
                        strict=True):
            _close(a.grad, b.grad, 1e-4)
        for (name, pe), pl in zip(eager.named_parameters(), lazy.parameters(), strict=True):
            torch.testing.assert_close(pl.grad.cpu(), pe.grad, rtol=1e-4, atol=1e-5, msg=name)
        for opt in (opt_e, opt_l):
            opt.step()
            opt.zero_grad()
    for pe, pl in zip(eager.parameters(), lazy.parameters(), strict=True):
        _close(pl.detach(), pe.detach(), 1e-4)
    by_kind = {}
    for graph_kind, n_ops in sizes:
        by_kind.setdefault(graph_kind, []).append(n_ops)
    # the second length (11 steps) captured the same number of core ops as the first
    assert by_kind["forward"][0] == by_kind["forward"][-1], by_kind
    assert by_kind["backward"][0] == by_kind["backward"][-1], by_kind
