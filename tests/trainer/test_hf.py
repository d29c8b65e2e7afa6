"""Optional Hugging Face checkpoint support (skipped without transformers)."""

import asyncio

import pytest
import torch

transformers = pytest.importorskip("transformers")

from rft_sdk.train import ByteTokenizer, TorchPolicy, completion_logits, load_hf_model, make_batch  # noqa: E402


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
    prompts = [s.extra.prompt_ids for s in steps]
    comps = [s.extra.completion_ids for s in steps]
    batch = make_batch(prompts, comps, pad_id=tok.pad_id)
    with torch.no_grad():
        lp = torch.log_softmax(completion_logits(model, batch), -1)
    for i, s in enumerate(steps):
        n = len(s.extra.completion_ids)
        recomputed = lp[i, :n].gather(-1, batch.completion_ids[i, :n, None])[:, 0]
        assert torch.allclose(recomputed, torch.tensor(s.extra.logprobs), atol=1e-4)


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_hf_model(tmp_path / "nope")
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="vocab_size"):
        load_hf_model(tmp_path)


def test_hf_checkpoint_trains_and_round_trips_with_its_tokenizer(tmp_path):
    """``hf_checkpoint`` → GRPO update → ``checkpoint.pt`` → reload: same weights, same tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from rft_sdk.train import HFTokenizer, TrainConfig, build_model, load_checkpoint, save_checkpoint
    from rft_sdk.train._trainer import _update

    src = tmp_path / "src"
    words = ["<unk>", "<eos>", "<pad>"] + [f"w{i}" for i in range(40)]
    wl = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=wl, eos_token="<eos>", pad_token="<pad>",
                                         unk_token="<unk>").save_pretrained(src)
    torch.manual_seed(0)
    hf_cfg = transformers.GPT2Config(vocab_size=len(words), n_positions=64, n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(hf_cfg).save_pretrained(src)

    cfg = TrainConfig(hf_checkpoint=str(src), steps=0, max_new_tokens=4, grad_clip=1e9)
    model, tok = build_model(cfg)
    assert isinstance(tok, HFTokenizer) and tok.encode("w5 w7") == [8, 10] and tok.eos_id == 1
    before = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    info = _update(model, None, opt, [tok.encode("w1 w2"), tok.encode("w3")], [[8, 1], [9, 10, 1]],
                   [1.0, -1.0], tok, cfg)
    assert info["loss"] == pytest.approx(0.0, abs=1e-6)  # grpo, on-policy: -mean(A) = 0
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())  # it trained

    path = save_checkpoint(tmp_path / "run" / "checkpoint.pt", model, step=1, config=cfg, tokenizer=tok)
    (tmp_path / "run").rename(tmp_path / "moved")  # the run folder can move
    loaded, loaded_tok = load_checkpoint(tmp_path / "moved" / path.name)
    assert isinstance(loaded_tok, HFTokenizer) and loaded_tok.encode("w5 w7") == [8, 10]
    assert loaded.state_dict().keys() == model.state_dict().keys()
    for (k, a), b in zip(model.state_dict().items(), loaded.state_dict().values()):
        assert torch.equal(a, b), k
