"""Batched sampling with a key/value cache and one random stream per row.

Each row has its own ``torch.Generator``, so what a row samples depends only on
its prompt, its seed and the model — not on which other rows share the batch.
Sampling uses the Gumbel-max trick (``argmax(logits / T + Gumbel noise)`` is a
sample from ``softmax(logits / T)``; Gumbel 1954, see e.g. Maddison et al. 2014,
"A* Sampling"), with noise drawn per row from its generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Completion", "generate"]


@dataclass
class Completion:
    """One sampled completion.

    ``token_ids``: generated ids, including the final ``eos_id`` when the model
    stopped by itself. ``logprobs``: log-probability of each generated id under
    ``softmax(logits / temperature)`` (``temperature = 1`` for greedy), same length.
    ``truncated``: stopped at ``max_new_tokens`` without ``eos_id``.
    """

    token_ids: list[int]
    logprobs: list[float]
    truncated: bool


@torch.no_grad()
def generate(
    model: torch.nn.Module,
    prompts: list[list[int]],
    *,
    eos_id: int,
    pad_id: int,
    max_new_tokens: int,
    temperature: float,
    generators: list[torch.Generator] | None = None,
) -> list[Completion]:
    """Sample a completion for every prompt, in one left-padded batch.

    Args:
        model: called as ``model(ids[B, S], attention_mask=[B, P+S], position_ids=[B, S], cache=...)``
            returning ``(logits[B, S, V], cache)`` (see ``_model.py``); must have ``block_size``.
        prompts: token ids per row (non-empty). Prompts longer than
            ``block_size - max_new_tokens`` keep only their last tokens.
        eos_id / pad_id: stop token and padding token.
        max_new_tokens: most tokens generated per row.
        temperature: > 0 samples from ``softmax(logits / temperature)``; 0 is greedy.
        generators: one per row (required when ``temperature > 0``).

    Returns: one :class:`Completion` per prompt, in order.

    Raises:
        ValueError: empty prompt list/prompt, negative temperature, or missing generators.
    """
    if not prompts or any(not p for p in prompts):
        raise ValueError("generate() needs at least one non-empty prompt")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature > 0 and (generators is None or len(generators) != len(prompts)):
        raise ValueError("sampling with temperature > 0 needs one torch.Generator per prompt")
    device = next(model.parameters()).device
    block_size: int = model.block_size  # type: ignore[assignment]  # TinyGPT / HF adapter property
    limit = max(1, block_size - max_new_tokens)
    prompts = [p[-limit:] for p in prompts]
    b, width = len(prompts), max(len(p) for p in prompts)
    ids = torch.full((b, width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((b, width), dtype=torch.long, device=device)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[i, width - len(p):] = 1
    pos = (mask.cumsum(1) - 1).clamp(min=0)
    logits, cache = model(ids, attention_mask=mask, position_ids=pos)
    next_pos = mask.sum(1)
    last = logits[:, -1, :]
    out_ids: list[list[int]] = [[] for _ in range(b)]
    out_lp: list[list[float]] = [[] for _ in range(b)]
    done = torch.zeros(b, dtype=torch.bool)
    t = temperature if temperature > 0 else 1.0
    for _ in range(max_new_tokens):
        logp = torch.log_softmax(last.float() / t, dim=-1)
        if temperature > 0:
            noise = torch.stack([torch.rand(logp.shape[-1], generator=g) for g in generators])  # type: ignore[union-attr]
            gumbel = -torch.log(-torch.log(noise.clamp(1e-10, 1.0 - 1e-7)))
            tok = (logp + gumbel.to(logp.device)).argmax(-1)
        else:
            tok = logp.argmax(-1)
        tok_lp = logp.gather(1, tok[:, None])[:, 0]
        for i in range(b):
            if not done[i]:
                out_ids[i].append(int(tok[i]))
                out_lp[i].append(float(tok_lp[i]))
        done |= (tok == eos_id).cpu()
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones((b, 1), dtype=mask.dtype, device=device)], dim=1)
        logits, cache = model(tok[:, None], attention_mask=mask, position_ids=next_pos[:, None], cache=cache)
        next_pos = next_pos + 1
        last = logits[:, -1, :]
    return [Completion(out_ids[i], out_lp[i], truncated=not (out_ids[i] and out_ids[i][-1] == eos_id))
            for i in range(b)]
