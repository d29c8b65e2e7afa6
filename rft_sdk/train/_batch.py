"""Pack (prompt, completion) token sequences into tensors and get completion logits.

Each row is one assistant turn of one rollout: its rendered prompt and the ids
the policy generated. The model reads ``prompt + completion`` (right-padded);
the logits that predict completion token ``t`` sit at position
``len(prompt) - 1 + t``, gathered into a ``[B, T, V]`` block aligned with the
completion (``T`` = longest completion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = ["TokenBatch", "completion_logits", "make_batch"]


@dataclass
class TokenBatch:
    """Tensors for a batch of ``B`` rows.

    ``input_ids`` ``[B, S]`` (prompt + completion, right-padded with ``pad_id``);
    ``attention_mask`` ``[B, S]`` (1 = real token); ``gather_index`` ``[B, T]``
    (position whose logits predict completion token ``t``); ``completion_ids``
    ``[B, T]`` (0 where padded); ``completion_mask`` ``[B, T]`` float (1 = real).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    gather_index: torch.Tensor
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor


def make_batch(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]], *, pad_id: int,
               block_size: int | None = None) -> TokenBatch:
    """Build a :class:`TokenBatch`.

    Raises:
        ValueError: counts differ, a prompt or completion is empty, or a row exceeds ``block_size``.
    """
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"need equal, non-zero numbers of prompts and completions, got {len(prompts)}/{len(completions)}")
    lens = [len(p) + len(c) for p, c in zip(prompts, completions)]
    if any(not p or not c for p, c in zip(prompts, completions)):
        raise ValueError("every row needs a non-empty prompt and completion")
    if block_size is not None and max(lens) > block_size:
        raise ValueError(f"a row has {max(lens)} tokens, more than block_size={block_size}")
    b, s, t = len(prompts), max(lens), max(len(c) for c in completions)
    input_ids = torch.full((b, s), pad_id, dtype=torch.long)
    attn = torch.zeros((b, s), dtype=torch.long)
    gather = torch.zeros((b, t), dtype=torch.long)
    comp = torch.zeros((b, t), dtype=torch.long)
    cmask = torch.zeros((b, t), dtype=torch.float32)
    for i, (p, c) in enumerate(zip(prompts, completions)):
        n = len(p) + len(c)
        input_ids[i, :n] = torch.tensor(list(p) + list(c), dtype=torch.long)
        attn[i, :n] = 1
        gather[i, : len(c)] = torch.arange(len(p) - 1, len(p) - 1 + len(c))
        comp[i, : len(c)] = torch.tensor(list(c), dtype=torch.long)
        cmask[i, : len(c)] = 1.0
    return TokenBatch(input_ids, attn, gather, comp, cmask)


def completion_logits(model: torch.nn.Module, batch: TokenBatch) -> torch.Tensor:
    """Logits ``[B, T, V]`` predicting each completion token (differentiable when grad is on).

    Right padding never changes the logits of earlier positions under causal
    attention, so the mask is not needed for correctness; it is passed only to
    models (HF) that want it.
    """
    mask = batch.attention_mask if getattr(model, "needs_attention_mask", False) else None
    logits: torch.Tensor = model(batch.input_ids, attention_mask=mask)[0]
    v = logits.shape[-1]
    return logits.gather(1, batch.gather_index[..., None].expand(-1, -1, v))
