"""Optional Hugging Face checkpoint support (skipped without transformers)."""

import asyncio

import pytest
import torch

transformers = pytest.importorskip("transformers")

from local_trainer.grpo import ByteTokenizer, TorchPolicy, completion_logits, load_hf_model, make_batch  # noqa: E402


@pytest.fixture()
def tiny_checkpoint(tmp_path):
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=259, n_positions=128, n_embd=32, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    return tmp_path


def test_load_and_sample_with_byte_tokenizer(tiny_checkpoint):
    model, tok = load_hf_model(tiny_checkpoint)
    assert isinstance(tok, ByteTokenizer) and model.block_size == 128
    model.eval()
    policy = TorchPolicy(model, tok, temperature=1.0, max_new_tokens=8, seed=1)
    msgs = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "a longer question"}]]

    async def go():
        return await asyncio.gather(*(policy.act(m, [], item={}, trace_id="t") for m in msgs))

    steps = asyncio.run(go())
    assert policy.batches == [2]  # left-padded batch through the HF model and its cache
    prompts = [s.extra["prompt_ids"] for s in steps]
    comps = [s.extra["completion_ids"] for s in steps]
    batch = make_batch(prompts, comps, pad_id=tok.pad_id)
    with torch.no_grad():
        lp = torch.log_softmax(completion_logits(model, batch), -1)
    for i, s in enumerate(steps):
        n = len(s.extra["completion_ids"])
        recomputed = lp[i, :n].gather(-1, batch.completion_ids[i, :n, None])[:, 0]
        assert torch.allclose(recomputed, torch.tensor(s.extra["logprobs"]), atol=1e-4)


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_hf_model(tmp_path / "nope")
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="vocab_size"):
        load_hf_model(tmp_path)
