"""Programs in the style of pytorch/examples (written here, tiny sizes), run unchanged on
CPU and on the lazy device with the same seeds: losses, gradients, parameters after the
optimizer steps and outputs must agree, and no op may fall back to the CPU unless named."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Categorical

import lazy_torch
import lazycore as lc


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _flat(x):
    if isinstance(x, torch.Tensor):
        return [x.detach().cpu()]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _flat(x[k])]
    if isinstance(x, list | tuple):
        return [t for v in x for t in _flat(v)]
    return [torch.tensor(x)]


def _state(*modules):
    """Every parameter, its gradient and every buffer, in a fixed order."""
    return [(p.detach(), p.grad) for m in modules for p in m.parameters()] + \
        [b for m in modules for b in m.buffers()]


def check(program, rtol=1e-4, atol=1e-5, fallbacks=()):
    torch.manual_seed(0)
    expected = _flat(program(torch.device("cpu")))
    torch.manual_seed(0)
    lc.metrics.reset()
    got = _flat(program(lazy_torch.device()))
    fell = {k for k, v in lc.metrics.counters().items() if k.startswith("fallback::") and v}
    assert fell <= {f"fallback::aten::{name}" for name in fallbacks}, fell
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.dtype == e.dtype and g.shape == e.shape, (i, g.dtype, e.dtype, g.shape, e.shape)
        torch.testing.assert_close(g, e, rtol=rtol, atol=atol, msg=lambda m, i=i: f"item {i}: {m}")


def _train(opt, loss_fn, steps=3):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_forward_forward_layers_own_their_optimizers():
    """mnist_forward_forward: each layer (an nn.Linear subclass) builds its optimizer in
    __init__, before ``net.to(device)``. Moving to CUDA keeps the Parameter objects
    (``param.data =``); on the lazy device the optimizer held the CPU parameters and
    trained nothing (a silent difference: every loss after the first differed)."""
    class Layer(nn.Linear):
        def __init__(self, n_in, n_out):
            super().__init__(n_in, n_out)
            self.opt = torch.optim.Adam(self.parameters(), lr=0.03)

        def forward(self, x):
            x = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return torch.relu(torch.mm(x, self.weight.T) + self.bias.unsqueeze(0))

        def train_on(self, pos, neg):
            losses = []
            for _ in range(3):
                g_pos, g_neg = self(pos).pow(2).mean(1), self(neg).pow(2).mean(1)
                loss = torch.log(1 + torch.exp(torch.cat([2.0 - g_pos, g_neg - 2.0]))).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                losses.append(loss.item())
            return self(pos).detach(), self(neg).detach(), losses

    def overlay(x, y):
        x = x.clone()
        x[:, :10] *= 0.0
        x[range(x.shape[0]), y] = x.max()
        return x

    def program(device):
        g = _gen(7)
        x, y = torch.rand(8, 20, generator=g), torch.randint(0, 10, (8,), generator=g)
        pos, neg = overlay(x, y).to(device), overlay(x, y[torch.randperm(8, generator=g)]).to(device)
        net = nn.Sequential(Layer(20, 16), Layer(16, 16)).to(device)
        assert all(p is q for p, q in zip(net.parameters(), net[0].opt.param_groups[0]["params"]
                                          + net[1].opt.param_groups[0]["params"], strict=True))
        losses = []
        for layer in net:
            pos, neg, layer_losses = layer.train_on(pos, neg)
            losses.append(layer_losses)
        goodness = [sum(h.pow(2).mean(1) for h in _activations(net, overlay(x, torch.full((8,), k))
                                                               .to(device))) for k in range(10)]
        return losses, torch.stack(goodness, 1).argmax(1), _state(net)

    def _activations(net, h):
        out = []
        for layer in net:
            h = layer(h)
            out.append(h)
        return out

    check(program)


def test_module_to_keeps_parameter_identity_and_ties():
    """``.to(lazy)`` keeps every Parameter object (tied ones stay one), ``.cpu()`` too."""
    lin = nn.Linear(3, 2)
    emb = nn.Embedding(4, 3)
    head = nn.Linear(3, 4, bias=False)
    head.weight = emb.weight
    model = nn.ModuleList([lin, emb, head])
    before = list(model.parameters())
    model.to(lazy_torch.device())
    assert [p for p in model.parameters()] == before and head.weight is emb.weight
    assert all(p.device.type == "lazy" and isinstance(p, nn.Parameter) for p in before)
    model.cpu()
    assert list(model.parameters()) == before and before[0].device.type == "cpu"


def test_rnn_optimizer_built_before_the_move():
    """An RNN keeps weak references to its weights (which refuse a swap): they are
    rebuilt around it, so its optimizer made on CPU trains the lazy weights, and back."""
    def program(device):
        model = nn.Sequential(nn.LSTM(3, 4, batch_first=True), nn.GRU(4, 2))
        opt = torch.optim.SGD(model.parameters(), 0.5)
        before = list(model.parameters())
        model.to(device)
        assert list(model.parameters()) == before
        x = torch.randn(2, 5, 3, generator=_gen(1)).to(device)
        losses = _train(opt, lambda: model[1](model[0](x)[0])[0].pow(2).sum())
        model.cpu()
        assert list(model.parameters()) == before and before[0].device.type == "cpu"
        return losses, model[1](model[0](x.cpu())[0])[0], _state(model)

    check(program)


def test_actor_critic_categorical():
    """reinforcement_learning/actor_critic: Categorical log_prob/entropy, discounted
    returns built in Python, smooth L1 value loss; the distribution's argument
    validation (``_is_all_true``) stays lazy."""
    def program(device):
        policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
        value = nn.Linear(4, 1).to(device)
        opt = torch.optim.Adam([*policy.parameters(), *value.parameters()], 1e-2)
        g, eps, out = _gen(3), np.finfo(np.float32).eps.item(), []
        for _ in range(2):
            log_probs, entropies, values = [], [], []
            for t in range(4):
                state = torch.rand(1, 4, generator=g).to(device)
                dist = Categorical(F.softmax(policy(state), dim=1))
                action = torch.tensor([t % 2]).to(device)
                log_probs.append(dist.log_prob(action))
                entropies.append(dist.entropy())
                values.append(value(state))
            ret, returns = 0.0, []
            for r in [0.0, 1.0, 2.0, 3.0][::-1]:
                ret = r + 0.99 * ret
                returns.insert(0, ret)
            returns = torch.tensor(returns).to(device)
            returns = (returns - returns.mean()) / (returns.std() + eps)
            losses = [-lp * (r - v.item()) + F.smooth_l1_loss(v, r.reshape(1, 1))
                      for lp, v, r in zip(log_probs, values, returns, strict=True)]
            loss = torch.stack(losses).sum() - 0.01 * torch.cat(entropies).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out, _state(policy, value)

    check(program)


def test_siamese_losses():
    def program(device):
        net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4)).to(device)
        opt = torch.optim.SGD(net.parameters(), 0.1, momentum=0.9)
        g = _gen(6)
        a, p, n = (torch.randn(5, 6, generator=g).to(device) for _ in range(3))
        y = torch.tensor([1, -1, 1, -1, 1]).to(device)
        triplet, dist = nn.TripletMarginLoss(margin=1.0), nn.PairwiseDistance()
        cosine = nn.CosineEmbeddingLoss(margin=0.2)
        swap = nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity(),
                                                margin=0.5, swap=True)

        def loss():
            ea, ep, en = net(a), net(p), net(n)
            return (triplet(ea, ep, en) + dist(ea, en).mean() + cosine(ea, ep, y)
                    + swap(ea, ep, en) + F.margin_ranking_loss(ea[:, 0], ep[:, 0], y.float())
                    + F.hinge_embedding_loss(dist(ea, ep), y))
        losses = _train(opt, loss)
        return losses, F.cosine_similarity(a, p), F.pairwise_distance(a, p, p=1, keepdim=True), _state(net)

    check(program)


@pytest.mark.parametrize("num_classes", [-1, 7])
def test_one_hot_and_embedding_padding_idx_max_norm(num_classes):
    """``padding_idx`` rows get no gradient; ``max_norm`` renormalizes the rows read, in
    place, before the lookup (``embedding_renorm_``, lowered: it fell back)."""
    def program(device):
        idx = torch.tensor([[0, 2, 4, 5], [4, 3, 2, 6]]).to(device)
        emb = nn.Embedding(7, 3, padding_idx=2).to(device)
        capped = nn.Embedding(7, 3, max_norm=1.0).to(device)
        w = torch.randn(7, 3, generator=_gen(8)).to(device).requires_grad_()
        opt = torch.optim.SGD([*emb.parameters(), *capped.parameters(), w], 0.5)
        onehot = F.one_hot(idx, num_classes).float()

        def loss():
            return ((emb(idx) * onehot.sum(-1, keepdim=True)).pow(2).sum() + capped(idx).sum()
                    + F.embedding(idx, w, padding_idx=0, max_norm=0.5, norm_type=1.0).sum())
        losses = _train(opt, loss)
        return losses, F.one_hot(idx, num_classes), _state(emb, capped), w, w.grad

    check(program, fallbacks=["_assert_async.msg"] if num_classes < 0 else ())


@pytest.mark.parametrize("shape,dtype", [((5, 3), torch.float32), ((3, 5), torch.float64),
                                         ((2, 4, 4), torch.float32), ((3, 3), torch.complex64)])
def test_linalg_qr(shape, dtype):
    """``torch.linalg.qr`` (``nn.init.orthogonal_`` of a weight already on the device) is
    lowered: LAPACK's Householder signs, gradients through eager's backward formula."""
    def program(device):
        a = torch.randn(*shape, dtype=dtype, generator=_gen(4)).to(device).requires_grad_()
        reduced, complete = torch.linalg.qr(a), torch.linalg.qr(a.detach(), mode="complete")
        (reduced[0].abs().sum() + reduced[1].abs().pow(2).sum()).backward()
        return reduced, complete, a.grad

    check(program)


def test_multivariate_normal_solve_triangular():
    """``MultivariateNormal(scale_tril=)``: log_prob and its gradient solve a triangular
    system (``linalg_solve_triangular``, lowered; it fell back, as did QR's backward)."""
    def program(device):
        mu = torch.randn(3, generator=_gen(5)).to(device).requires_grad_()
        tril = (torch.tril(torch.randn(3, 3, generator=_gen(6))) + 2 * torch.eye(3)).to(device)
        value = torch.randn(2, 4, 3, generator=_gen(7)).to(device)
        logp = torch.distributions.MultivariateNormal(mu, scale_tril=tril).log_prob(value)
        logp.sum().backward()
        upper = torch.linalg.solve_triangular(tril.mT, value.mT, upper=True, left=True)
        right = torch.linalg.solve_triangular(tril, value, upper=False, left=False,
                                              unitriangular=True)
        return logp, mu.grad, upper, right

    check(program)


@pytest.mark.parametrize("factory", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                     "randn_like", "full_like", "randint_like"])
def test_like_factory_for_another_device(factory):
    """``torch.zeros_like(x, device="cpu")`` of a lazy ``x`` is a CPU tensor, as eager's
    of a CUDA tensor (the CPU fallback's result was wrapped back onto the lazy device, and
    ``rand_like``/``randn_like`` drew there); random ones draw from the CPU generator."""
    extra = {"full_like": (2.5,), "randint_like": (5,)}.get(factory, ())
    x = torch.zeros(2, 3, dtype=torch.float64)
    torch.manual_seed(0)
    expected = getattr(torch, factory)(x, *extra, device="cpu")
    torch.manual_seed(0)
    got = getattr(torch, factory)(x.to(lazy_torch.device()), *extra, device="cpu")
    assert type(got) is torch.Tensor and got.device.type == "cpu" and got.dtype == expected.dtype
    if factory != "empty_like":
        assert torch.equal(got, expected)


def test_gcn_sparse_adjacency_raises_clearly():
    """A GCN (pygcn style) moves its sparse adjacency to the device and multiplies with
    ``torch.spmm``: sparse tensors are not supported on the lazy device, and each way in
    raises NotImplementedError naming them (it raised PyTorch's 'Could not run ... with
    arguments from the Sparselazy backend', or a TypeError from NumPy); the same program
    on the dense adjacency matches eager."""
    dev = lazy_torch.device()
    idx = torch.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]])
    adj = torch.sparse_coo_tensor(idx, torch.rand(5, generator=_gen(1)), (4, 4))
    x = torch.rand(4, 3, generator=_gen(2))
    for attempt in (lambda: adj.to(dev), lambda: torch.spmm(adj, x.to(dev)),
                    lambda: torch.sparse_coo_tensor(idx.to(dev), torch.ones(5, device=dev)),
                    lambda: x.to(dev).to_sparse()):
        with pytest.raises(NotImplementedError, match="sparse tensors are not supported"):
            attempt()

    def program(device):
        a, layer = adj.to_dense().to(device), nn.Linear(3, 2).to(device)
        opt = torch.optim.Adam(layer.parameters(), 1e-2)
        y = torch.tensor([0, 1, 1, 0]).to(device)
        losses = _train(opt, lambda: F.cross_entropy(torch.sparse.mm(a, layer(x.to(device))), y))
        return losses, _state(layer)

    check(program)


@pytest.mark.parametrize("dim", [0, 2])
def test_weight_norm_conv(dim):
    """``parametrizations.weight_norm`` (Wav2Vec2's positional convolution, WaveNet-style
    audio models): its backward (``_weight_norm_interface_backward``) is lowered."""
    def program(device):
        torch.manual_seed(0)
        conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3), dim=dim).to(device)
        opt = torch.optim.Adam(conv.parameters(), 1e-2)
        x = torch.randn(2, 4, 7, generator=_gen(1)).to(device)
        return _train(opt, lambda: conv(x).pow(2).mean()), _state(conv)

    check(program)


def test_transformer_encoder_eval_padding_mask_fast_path():
    """nn.TransformerEncoder in eval with a key padding mask (the translation tutorial's
    evaluation) takes PyTorch's nested-tensor fast path: its ops run as counted CPU
    fallbacks, the nested tensor stays an eager CPU one (it raised 'NestedTensorImpl
    doesn't support sizes'), and the values (zeros at padded positions) are eager's."""
    x = torch.randn(2, 5, 8, generator=_gen(1))
    mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    out = []
    for device in ("cpu", lazy_torch.device()):
        torch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        encoder = nn.TransformerEncoder(layer, 2).to(device).eval()
        with torch.no_grad():
            out.append(encoder(x.to(device), src_key_padding_mask=mask.to(device)).cpu())
    torch.testing.assert_close(out[1], out[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduce", ["mean", "amax", "amin", "prod", "sum"])
def test_message_passing_scatter_reduce(reduce):
    """Graph message passing in PyTorch Geometric's style: neighbour features aggregated
    with ``new_zeros(...).scatter_reduce_(0, index, src, reduce, include_self=False)``
    (it fell back to the CPU for include_self=False and for mean), then trained."""
    def program(device):
        edges = torch.tensor([[0, 1, 1, 2, 3, 4, 4], [1, 0, 2, 1, 4, 3, 0]]).to(device)
        x = torch.randn(6, 3, generator=_gen(3)).to(device)
        lin = nn.Linear(3, 4).to(device)
        opt = torch.optim.SGD(lin.parameters(), 0.1)

        def loss():
            msg = lin(x)[edges[0]]
            index = edges[1].unsqueeze(1).expand_as(msg)
            agg = msg.new_zeros(6, 4).scatter_reduce_(0, index, msg, reduce, include_self=False)
            kept = x.new_ones(6, 3).scatter_reduce(0, edges[1].unsqueeze(1).expand(7, 3), x[edges[0]],
                                                   reduce, include_self=True)
            return agg.pow(2).sum() + kept.sum()
        return _train(opt, loss), _state(lin)

    check(program)
