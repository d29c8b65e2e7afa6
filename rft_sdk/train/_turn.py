"""``SampledTurn``: the tokens of one policy turn, kept on the emulator's step record for training."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SampledTurn"]


@dataclass
class SampledTurn:
    """What a trainer policy puts in ``PolicyStep.extra`` (and so in ``StepRecord.extra``).

    Attributes:
        prompt_ids: the rendered prompt the turn was generated from (token ids).
        completion_ids: the generated (or, for a demonstration, target) ids,
            ending with ``eos_id`` when the model stopped by itself.
        logprobs: log-probability of each ``completion_ids`` entry under
            ``softmax(logits / temperature)`` at sampling time; empty for demonstrations.
        text: the decoded completion (``eos`` removed).
        truncated: generation stopped at ``max_new_tokens`` without ``eos``.
    """

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float] = field(default_factory=list)
    text: str = ""
    truncated: bool = False
