"""``torch.compile(backend="lazytensor")`` on autoregressive decoding: a KV cache that
starts as ``torch.tensor([], device=lazy)`` (Hugging Face's ``DynamicLayer``) and grows by
``torch.cat`` each token, and Hugging Face ``generate()`` itself, against eager."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

import lazy_torch  # noqa: F401
import lazycore as lc

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _decode(step, keys, x, n):
    outs = []
    for _ in range(n):
        keys, y = step(keys, x)
        outs.append(y)
        x = y[:, :, -1:, :]
    return keys, outs


def _step(keys, x):
    if keys is None:  # the cache's lazy initialisation, inside the compiled frame
        keys = torch.tensor([], dtype=x.dtype, device=x.device)
    keys = torch.cat([keys, x], dim=-2)
    weights = torch.softmax(x @ keys.transpose(-1, -2), dim=-1)
    return keys, torch.tanh(weights @ keys)


def test_empty_literal_cache_grows_under_the_backend(dev):
    x = torch.randn(1, 2, 1, 4)
    uncaptured = lc.metrics.counters().get("dynamo_uncaptured", 0)  # earlier tests' too
    want_keys, want = _decode(_step, None, x, 4)
    compiled = torch.compile(_step, backend="lazytensor")
    got_keys, got = _decode(compiled, None, x.to(dev), 4)
    torch.testing.assert_close(got_keys.cpu(), want_keys, rtol=1e-5, atol=1e-5)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)
    assert lc.metrics.counters().get("dynamo_uncaptured", 0) == uncaptured


def test_gpt2_generate_tokens_equal_eager(dev):
    tr = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = tr.GPT2Config(n_embd=16, n_layer=1, n_head=2, n_positions=32, vocab_size=50,
                           resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                           bos_token_id=0, eos_token_id=49)
    model = tr.GPT2LMHeadModel(config).eval()
    prompt = torch.randint(0, 50, (1, 4), generator=torch.Generator().manual_seed(1))
    kwargs = {"max_new_tokens": 4, "min_new_tokens": 4, "do_sample": False, "pad_token_id": 0}
    before = lc.metrics.counters()
    with torch.no_grad():
        want = model.generate(prompt, **kwargs)
        model.to(dev)
        model.forward = torch.compile(model.forward, backend="lazytensor")
        got = model.generate(prompt.to(dev), **kwargs)
    assert torch.equal(got.cpu(), want)
    counters = lc.metrics.counters()
    assert counters["dynamo_captures"] > before.get("dynamo_captures", 0)
    assert counters.get("dynamo_uncaptured", 0) == before.get("dynamo_uncaptured", 0)


_ISIN_CASES = [  # PyTorch's promotion: a 0-d test tensor and a Python int take x's dtype
    (torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor(2**33 + 2)),
    (torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor([2**33 + 2, 3])),
    (torch.tensor([1, 2, 3], dtype=torch.uint8), 258),
    (torch.tensor([0.1]), torch.tensor([0.1], dtype=torch.float64)),
    (torch.tensor([[1, 2], [3, 4]]), torch.tensor([[4], [1]])),
    (torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0])),
    (2, torch.tensor([1, 2])),
    (torch.zeros(0, 3), torch.tensor([1.0])),
]


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("case", range(len(_ISIN_CASES)))
def test_isin_is_one_composite_equal_to_eager(case, invert, dev):
    """``generate()``'s logits processors and stopping criteria call ``isin`` each token."""
    x, test = _ISIN_CASES[case]
    want = torch.isin(x, test, invert=invert)
    lazy = [a.to(dev) if isinstance(a, torch.Tensor) else a for a in (x, test)]
    traced = lc.metrics.counters().get("traced_ops", 0)
    got = torch.isin(*lazy, invert=invert)
    assert lc.metrics.counters().get("traced_ops", 0) - traced <= 8  # not a decomposition
    assert got.dtype == want.dtype and torch.equal(got.cpu(), want)


@pytest.mark.parametrize("x, test", [(torch.tensor([True]), torch.tensor([1])),
                                     (torch.tensor([1]), torch.tensor([True])),
                                     (torch.tensor([1j]), torch.tensor([1j]))])
def test_isin_refuses_what_eager_refuses(x, test, dev):
    with pytest.raises(RuntimeError) as eager:
        torch.isin(x, test)
    with pytest.raises(RuntimeError) as lazy:
        torch.isin(x.to(dev), test.to(dev))
    assert str(lazy.value) == str(eager.value)
