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
