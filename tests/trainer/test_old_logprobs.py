"""The ratio's ``old`` logprobs are the sampling-time logprobs, aligned token for token.

The policy records, while sampling, the logprob of every generated token under
``softmax(logits / T)`` (``extra.logprobs``). The trainer recomputes them from a
right-padded batch (``make_batch`` + ``completion_logits``); an off-by-one between
logits and completion tokens, a wrong temperature, or a different model mode
(dropout on while training, off while sampling) would make the two disagree.
"""

import asyncio

import pytest
import torch

from rft_sdk import kernels
from rft_sdk.train import ByteTokenizer, TinyGPT, TinyGPTConfig, TorchPolicy, TrainConfig
from rft_sdk.train._trainer import _update

TOK = ByteTokenizer()
T = 0.7


def _sample(model, prompts_text):
    policy = TorchPolicy(model, TOK, temperature=T, max_new_tokens=10, seed=5)
    policy.set_round(1)

    async def go():
        return await asyncio.gather(*(policy.act([{"role": "user", "content": q}], [], item={}, trace_id=f"t{i}")
                                      for i, q in enumerate(prompts_text)))

    steps = asyncio.run(go())
    assert policy.batches == [len(prompts_text)]  # one left-padded batch: exercises padding too
    return steps


def _capture_update(monkeypatch, model, steps, cfg):
    seen = []
    real = kernels.grpo_loss

    def spy(logits, token_ids, advantages, completion_mask, old_logprobs=None, ref_logprobs=None, **kw):
        out = real(logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs, **kw)
        seen.append((token_ids.clone(), completion_mask.clone(), old_logprobs, out.logprobs, kw["temperature"]))
        return out

    monkeypatch.setattr(kernels, "grpo_loss", spy)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # keep the weights: compare against the sampler
    prompts = [s.extra.prompt_ids for s in steps]
    comps = [s.extra.completion_ids for s in steps]
    _update(model, None, opt, prompts, comps, [1.0, -1.0, 0.5], TOK, cfg)
    return seen


@pytest.mark.parametrize("num_iterations", [1, 2])
def test_ratio_uses_sampling_time_logprobs(monkeypatch, num_iterations):
    torch.manual_seed(0)
    # dropout > 0: the update must run the model in the mode it sampled in (no dropout)
    model = TinyGPT(TinyGPTConfig(n_layer=2, n_embd=32, n_head=2, block_size=96, dropout=0.3))
    steps = _sample(model, ["a", "a much longer question here", "mid-size q"])
    cfg = TrainConfig(steps=0, temperature=T, num_iterations=num_iterations, max_new_tokens=10)
    seen = _capture_update(monkeypatch, model, steps, cfg)
    assert len(seen) == num_iterations
    ids, mask, old, current, temperature = seen[0]
    assert temperature == T
    for i, s in enumerate(steps):
        n = len(s.extra.completion_ids)
        assert ids[i, :n].tolist() == s.extra.completion_ids and mask[i].sum() == n
        sampled = torch.tensor(s.extra.logprobs)
        # the logprobs the loss sees for the current policy are the sampling-time ones (ratio 1) ...
        torch.testing.assert_close(current[i, :n], sampled, atol=1e-4, rtol=0)
        if num_iterations > 1:  # ... and so is the recomputed "old" of the off-policy iterations
            torch.testing.assert_close(old[i, :n], sampled, atol=1e-4, rtol=0)
        else:
            assert old is None  # on-policy: TRL's old_per_token_logps=None
        # the comparison is sharp: the same logprobs shifted by one token do not match
        if n > 2:
            assert (current[i, 1:n] - sampled[: n - 1]).abs().max() > 1e-3
