"""Idioms of PyTorch's sequence tutorials (the chatbot's packed bidirectional GRU encoder,
seq2seq greedy decoding) on the lazy device, checked against eager CPU: values, gradients
and that ``batch_sizes``/``lengths`` stay host tensors as eager's."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.nn.utils import rnn as rnn_utils


def _encode(gru, x, lengths, enforce_sorted, batch_first):
    """The chatbot tutorial's encoder: pack, a (bidirectional) GRU over the PackedSequence,
    unpack, and the two directions summed."""
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                            enforce_sorted=enforce_sorted)
    out, hidden = gru(packed)
    out, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=batch_first)
    return packed, out[..., :gru.hidden_size] + out[..., gru.hidden_size:], hidden, out_lengths


@pytest.mark.parametrize("enforce_sorted,batch_first", [(True, False), (False, True)])
def test_packed_bidirectional_gru_matches_eager(dev, counters, enforce_sorted, batch_first):
    torch.manual_seed(0)
    eager = nn.GRU(3, 4, bidirectional=True, batch_first=batch_first).double()
    lazy = copy.deepcopy(eager).to(dev)
    lengths = torch.tensor([3, 2, 1] if enforce_sorted else [1, 3, 2])
    x = torch.randn(3, 3, 3, dtype=torch.float64)
    x_e, x_l = x.clone().requires_grad_(), x.to(dev).requires_grad_()
    results, before = [], counters()["fallbacks"]
    for gru, xi in ((eager, x_e), (lazy, x_l)):
        packed, out, hidden, out_lengths = _encode(gru, xi, lengths, enforce_sorted, batch_first)
        (out * out.detach().cos()).sum().add(hidden.sum()).backward()
        assert packed.batch_sizes.device.type == "cpu" and out_lengths.device.type == "cpu"
        results.append([packed.data, packed.batch_sizes, out, hidden, out_lengths, xi.grad,
                        *[p.grad for p in gru.parameters()]])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(b.cpu(), a)
    assert counters()["fallbacks"] == before


def test_pack_sequence_and_pad_sequence_match_eager(dev):
    torch.manual_seed(1)
    seqs = [torch.randn(n, 2) for n in (2, 4, 3)]
    lstm_e = nn.LSTM(2, 3)
    lstm_l = copy.deepcopy(lstm_e).to(dev)
    outs = []
    for lstm, s in ((lstm_e, seqs), (lstm_l, [t.to(dev) for t in seqs])):
        s = [t.clone().requires_grad_() for t in s]
        padded = rnn_utils.pad_sequence(s, batch_first=True, padding_value=-1.0)
        packed = rnn_utils.pack_sequence(s, enforce_sorted=False)
        out, (h, c) = lstm(packed)
        out, lengths = rnn_utils.pad_packed_sequence(out, total_length=5)
        (out.sum() + h.sum() + c.sum() + padded.sum()).backward()
        outs.append([padded, packed.data, packed.batch_sizes, packed.sorted_indices, out,
                     lengths, h, c, *[t.grad for t in s]])
    for a, b in zip(*outs, strict=True):
        torch.testing.assert_close(b.cpu(), a)


def test_pack_padded_sequence_errors_are_eagers(dev):
    x = torch.randn(3, 2, 4)
    for lengths in ([2, 3], [3, 0]):  # unsorted with enforce_sorted; an empty sequence
        with pytest.raises(RuntimeError) as eager:
            rnn_utils.pack_padded_sequence(x, lengths)
        with pytest.raises(RuntimeError) as lazy:
            rnn_utils.pack_padded_sequence(x.to(dev), lengths)
        assert str(lazy.value) == str(eager.value)


def test_host_tensor_from_lazy_scalars(dev):
    """The chatbot's non-teacher-forced step builds the next input on the host from lazy
    0-dim tensors: ``torch.LongTensor([[topi[i][0] for i in range(batch_size)]])``."""
    scores = torch.randn(4, 6)
    _, topi = scores.to(dev).topk(1)
    built = torch.LongTensor([[topi[i][0] for i in range(4)]])
    assert built.device.type == "cpu"
    torch.testing.assert_close(built, torch.LongTensor([[scores.topk(1)[1][i][0] for i in range(4)]]))
    torch.testing.assert_close(torch.tensor([topi[0][0], topi[1][0]], device=dev).cpu(),
                               scores.topk(1)[1][:2, 0])


def test_masked_nll_loss_gradient_has_no_fallback(dev, counters):
    """The chatbot's ``maskNLLLoss``: ``-log(gather(...)).masked_select(mask).mean()``; its
    gradient is ``masked_scatter``, which ran as a CPU fallback (a sync per decoder step)."""
    g = torch.Generator().manual_seed(2)
    probs = torch.softmax(torch.randn(5, 7, generator=g), 1)
    target, mask = torch.randint(0, 7, (5,), generator=g), torch.tensor([1, 0, 1, 1, 0]).bool()
    grads, before = [], counters()["fallbacks"]
    for device in ("cpu", dev):
        inp = probs.to(device).detach().requires_grad_()
        cross_entropy = -torch.log(torch.gather(inp, 1, target.to(device).view(-1, 1)).squeeze(1))
        cross_entropy.masked_select(mask.to(device)).mean().backward()
        grads.append(inp.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
    assert counters()["fallbacks"] == before


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 3))])
def test_masked_scatter_matches_eager(dev, counters, shapes):
    g = torch.Generator().manual_seed(3)
    x, mask = torch.randn(shapes[0], generator=g), torch.rand(shapes[1], generator=g) > 0.4
    source = torch.randn(7, generator=g)
    before = counters()["fallbacks"]
    lazy = x.to(dev).masked_scatter(mask.to(dev), source.to(dev))
    assert torch.equal(lazy.cpu(), x.masked_scatter(mask, source))
    assert counters()["fallbacks"] == before
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        x.to(dev).masked_scatter(torch.ones(2, 3, dtype=torch.bool, device=dev),
                                 source[:5].to(dev)).cpu()


def test_lengths_on_the_device_raise_eagers_error(dev):
    """The tutorial moves ``lengths`` to the CPU because eager's kernel insists on it; a
    lazy ``lengths`` raised RecursionError (the kernel dispatched back to itself)."""
    x = torch.randn(3, 2, 4).to(dev)
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor, "
                                           "but got 1D lazy:0 Long tensor"):
        rnn_utils.pack_padded_sequence(x, torch.tensor([3, 2]).to(dev))
