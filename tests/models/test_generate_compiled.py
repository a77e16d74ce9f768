"""Hugging Face ``generate()`` with the model under ``torch.compile(backend="lazytensor")``
and a static KV cache, the two ways a user writes it: ``model.forward = torch.compile(...)``
and ``generate(compile_config=CompileConfig(backend="lazytensor"))``. Tokens equal eager's,
and the model is compiled once for the prompt and once for the decoding step however many
tokens are generated: only ``generate()``'s own small programs change with the length."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

transformers = pytest.importorskip("transformers")

import lazy_torch  # noqa: E402
import lazy_torch.dynamo  # noqa: E402, F401  (Dynamo sees lazy tensors as tensors)
import lazycore as lc  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
NEW_TOKENS = 7


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def dumped(tmp_path):
    """Every compiled program's IR, written to ``tmp_path`` (one ``.ir.txt`` per compile)."""
    lazy_torch.sync()  # what earlier tests left pending is computed before, not counted
    lc.configure(dump_dir=str(tmp_path))
    try:
        yield tmp_path
    finally:
        lc.configure(dump_dir=None)


def _model():
    torch.manual_seed(3)
    config = transformers.GPT2Config(n_embd=24, n_layer=1, n_head=2, n_positions=40,
                                     vocab_size=37, resid_pdrop=0.0, embd_pdrop=0.0,
                                     attn_pdrop=0.0, bos_token_id=0, eos_token_id=36)
    return transformers.GPT2LMHeadModel(config).eval()


def _generate(model, prompt, **extra):
    with torch.no_grad():
        return model.generate(prompt, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                              do_sample=False, pad_token_id=0, cache_implementation="static",
                              **extra)


def _model_compiles(directory) -> int:
    """Compiled programs that contain a sub-program call (the compiled model)."""
    return sum(" = call(" in p.read_text() for p in directory.glob("*.ir.txt"))


@pytest.mark.parametrize("how", ["forward", "compile_config"])
def test_static_cache_generate_compiles_the_model_once(how, dumped):
    model = _model()
    batch = 2 if how == "forward" else 3  # programs of their own: nothing cached across cases
    prompt = torch.randint(0, 37, (batch, 5), generator=torch.Generator().manual_seed(4))
    want = _generate(model, prompt)
    model.to(lazy_torch.device())
    extra = {}
    if how == "forward":
        model.forward = torch.compile(model.forward, backend="lazytensor")
    else:  # Hugging Face compiles the decoding step itself (on CPU only when asked to)
        config = transformers.CompileConfig(backend="lazytensor")  # mode="reduce-overhead"
        config._compile_all_devices = True
        extra["compile_config"] = config
    before = lc.metrics.counters()
    got = _generate(model, prompt.to(lazy_torch.device()), **extra)
    assert torch.equal(got.cpu(), want)
    after = lc.metrics.counters()
    captures = after["dynamo_captures"] - before.get("dynamo_captures", 0)
    assert captures == (2 if how == "forward" else 1)  # prompt and step / step only
    assert after.get("dynamo_uncaptured", 0) == before.get("dynamo_uncaptured", 0)
    # NEW_TOKENS - 1 decoding steps, each at a new length: the model is compiled once
    # per capture, never per length (fused with generate()'s code it was once per token)
    assert _model_compiles(dumped) == captures
    compiles = after["compiles"]
    again = _generate(model, prompt.to(lazy_torch.device()), **extra)
    assert torch.equal(again.cpu(), want)
    assert lc.metrics.counters()["compiles"] == compiles  # a second call compiles nothing


def test_backend_refuses_options():
    compiled = torch.compile(torch.sin, backend="lazytensor", options={"fuse": True})
    with pytest.raises(Exception, match="takes no options"):
        compiled(torch.ones(2, device=lazy_torch.device()))
