"""Hugging Face ``transformers`` models, unchanged, on the lazy device against eager.

Tiny random-init configs (built from config objects: nothing is downloaded), dropout 0:
5 AdamW training steps must give eager's losses and every parameter's gradient at
every step, and greedy ``generate()`` eager's tokens. These models exercise what our own
tests do not: tied LM heads, buffers, attention masks, rotary embeddings, relative
position buckets, ``ignore_index`` labels, cache handling in generation.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

transformers = pytest.importorskip("transformers")

import lazy_torch  # noqa: E402

VOCAB = 48
STEPS = 5  # the issue asks for 5 training steps


def _gpt2():
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=16, n_layer=2,
                                  n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  bos_token_id=1, eos_token_id=2)
    return transformers.GPT2LMHeadModel(cfg)


def _bert():
    cfg = transformers.BertConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=32,
                                  max_position_embeddings=32, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0, pad_token_id=0)
    return transformers.BertForMaskedLM(cfg)


def _llama():
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=32,
                                   bos_token_id=1, eos_token_id=2, pad_token_id=0)
    return transformers.LlamaForCausalLM(cfg)


def _t5():
    cfg = transformers.T5Config(vocab_size=VOCAB, d_model=16, d_kv=8, d_ff=32, num_layers=2,
                                num_decoder_layers=2, num_heads=2, dropout_rate=0.0,
                                relative_attention_num_buckets=8, pad_token_id=0,
                                eos_token_id=1, decoder_start_token_id=0)
    return transformers.T5ForConditionalGeneration(cfg)


def _bart():
    cfg = transformers.BartConfig(vocab_size=VOCAB, d_model=16, encoder_layers=1,
                                  decoder_layers=1, encoder_attention_heads=2,
                                  decoder_attention_heads=2, encoder_ffn_dim=32,
                                  decoder_ffn_dim=32, max_position_embeddings=32, dropout=0.0,
                                  attention_dropout=0.0, activation_dropout=0.0,
                                  pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                  decoder_start_token_id=2, forced_eos_token_id=None)
    return transformers.BartForConditionalGeneration(cfg)


def _resnet():
    cfg = transformers.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
                                    depths=[1, 1], layer_type="basic", num_labels=5)
    return transformers.ResNetForImageClassification(cfg)


def _vit():
    cfg = transformers.ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=16,
                                 num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=32, hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0, num_labels=5)
    return transformers.ViTForImageClassification(cfg)


def _image_batch():
    pixels = torch.randn(3, 3, 16, 16, generator=torch.Generator().manual_seed(5))
    return {"pixel_values": pixels, "labels": torch.tensor([0, 4, 2])}


def _ids(shape, seed):
    return torch.randint(3, VOCAB, shape, generator=torch.Generator().manual_seed(seed))


def _causal_batch():
    ids = _ids((2, 8), 1)
    mask = torch.ones_like(ids)
    mask[1, :2] = 0  # a left-padded row
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def _mlm_batch():
    ids = _ids((2, 8), 2)
    labels = torch.full_like(ids, -100)
    labels[:, 1::3] = ids[:, 1::3]  # the masked positions
    ids = ids.masked_fill(labels != -100, 3)
    mask = torch.ones_like(ids)
    mask[0, -2:] = 0
    return {"input_ids": ids, "attention_mask": mask, "labels": labels,
            "token_type_ids": torch.zeros_like(ids)}


def _seq2seq_batch():
    ids = _ids((2, 7), 3)
    mask = torch.ones_like(ids)
    mask[1, -2:] = 0
    labels = _ids((2, 5), 4)
    labels[0, -1] = -100
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


MODELS = {
    "gpt2": (_gpt2, _causal_batch, True),
    "bert": (_bert, _mlm_batch, False),
    "llama": (_llama, _causal_batch, True),
    "t5": (_t5, _seq2seq_batch, True),
    "bart": (_bart, _seq2seq_batch, True),
    "resnet": (_resnet, _image_batch, False),  # conv, batch norm (running-stat buffers)
    "vit": (_vit, _image_batch, False),
}


def _run(name, device):
    build, batch_fn, generates = MODELS[name]
    torch.manual_seed(0)
    model = build().to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    batch = {k: v.to(device) for k, v in batch_fn().items()}
    losses, grads = [], []
    for _ in range(STEPS):
        loss = model(**batch).loss
        loss.backward()
        losses.append(loss.item())
        grads.append({n: p.grad.detach().cpu() for n, p in model.named_parameters()})
        opt.step()
        opt.zero_grad()
    tokens = None
    if generates:
        model.eval()
        prompt = {k: v[:, :4] for k, v in batch.items() if k in ("input_ids", "attention_mask")}
        with torch.no_grad():
            tokens = model.generate(**prompt, max_new_tokens=4, do_sample=False, num_beams=1,
                                    pad_token_id=0).cpu()
    buffers = {n: b.detach().cpu() for n, b in model.named_buffers()}
    return len(list(model.parameters())), losses, grads, tokens, buffers


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_and_generation_match_eager(name):
    eager = _run(name, "cpu")
    lazy = _run(name, lazy_torch.device())
    assert lazy[0] == eager[0]  # tied weights stay tied: the same parameter count
    torch.testing.assert_close(lazy[1], eager[1], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(lazy[4], eager[4], rtol=1e-4, atol=1e-5)  # buffers
    for step, (got, expected) in enumerate(zip(lazy[2], eager[2], strict=True)):
        assert got.keys() == expected.keys()
        for param in expected:
            torch.testing.assert_close(got[param], expected[param], rtol=1e-4, atol=1e-5,
                                       msg=lambda m, p=param, s=step: f"{p} step {s}: {m}")
    if eager[3] is not None:
        assert torch.equal(lazy[3], eager[3])
