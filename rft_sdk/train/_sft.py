"""SFT warm start: demonstrations gathered through the real endpoints, then cross-entropy.

A :class:`DemonstrationPolicy` is the emulator's ``ReferenceReplayPolicy`` (an
item's gold ``actions``, one call per turn, then its ``reference_answer`` — the
replay fields pinned in docs/ARCHITECTURE.md) that also records, per turn, the
rendered prompt and the target completion ids. Run through the emulator it
yields the exact (prompt, completion) pairs the trained policy will see, with
real tool outputs and a real grade (demonstrations that do not pass are dropped).
"""

from __future__ import annotations

import random
import time
from typing import Any

import torch
import torch.nn.functional as F

from rft_sdk.emulator import PolicyStep, ReferenceReplayPolicy, check_step

from ._batch import completion_logits, make_batch
from ._render import format_call, render_prompt
from ._turn import SampledTurn

__all__ = ["TARGET_WINDOW", "DemonstrationPolicy", "sft_train"]

#: SFT steps whose mean loss is compared with ``target_loss``.
TARGET_WINDOW = 10


class DemonstrationPolicy(ReferenceReplayPolicy):
    """``ReferenceReplayPolicy`` that records each turn's tokens; implements ``Policy``.

    ``extra`` of each step: a :class:`SampledTurn` (no logprobs), the completion
    being ``format_call(...)`` of the turn's gold call or the answer text, followed by ``eos_id``.

    Raises (from ``act``):
        PolicyError: the item lacks or misshapes the replay fields (the emulator then
            discards that rollout, so it yields no demonstration).
    """

    def __init__(self, tokenizer: Any, *, max_tool_chars: int = 200, actions_field: str = "actions",
                 answer_field: str = "reference_answer") -> None:
        super().__init__(actions_field=actions_field, answer_field=answer_field)
        self.tokenizer, self.max_tool_chars = tokenizer, max_tool_chars

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """The next gold turn for ``messages``, with its prompt and completion ids in ``extra``."""
        step = check_step(await super().act(messages, tools, item=item, trace_id=trace_id))
        calls = [c for c in step.tool_calls if not isinstance(c, dict)]
        text = "".join(format_call(c.name, c.arguments) for c in calls) if calls else str(step.content)
        step.extra = SampledTurn(
            prompt_ids=render_prompt(messages, tools, self.tokenizer, max_tool_chars=self.max_tool_chars),
            completion_ids=self.tokenizer.encode(text) + [self.tokenizer.eos_id], text=text)
        return step


def sft_train(
    model: torch.nn.Module,
    pairs: list[tuple[list[int], list[int]]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    weight_decay: float = 0.0,
    grad_clip: float = 1.0,
    target_loss: float | None = None,
    on_step: Any = None,
    deadline: float | None = None,
) -> list[float]:
    """Minimise the mean token cross-entropy of the completions given their prompts.

    Args:
        model: causal LM (``_model.py`` call convention), trained in place.
        pairs: ``[(prompt_ids, completion_ids)]``; batches are drawn with ``random.Random(seed)``.
        steps / batch_size / lr / weight_decay / grad_clip: AdamW schedule (constant lr).
        target_loss: stop early once the mean loss of the last ``TARGET_WINDOW`` steps is at or
            below this (nats per completion token); ``steps`` is then a cap. ``None`` runs all steps.
        on_step: optional ``callable(step, loss)`` (e.g. a progress bar).
        deadline: a ``time.perf_counter()`` value: stop after the step that passes it (at least one
            step is taken); ``None`` runs to ``steps`` (or ``target_loss``).

    Returns: the loss (nats per completion token) of every step taken (``len`` = steps taken).

    Raises:
        ValueError: no pairs, or non-positive steps/batch_size.
    """
    if not pairs:
        raise ValueError("SFT needs at least one demonstration pair")
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps ({steps}) and batch_size ({batch_size}) must be >= 1")
    if target_loss is not None and target_loss < 0:
        raise ValueError(f"target_loss must be >= 0, got {target_loss}")
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    block = getattr(model, "block_size", None)
    model.train()
    losses = []
    for step in range(steps):
        rows = [pairs[rng.randrange(len(pairs))] for _ in range(batch_size)]
        batch = make_batch([p for p, _ in rows], [c for _, c in rows], pad_id=0, block_size=block)
        logits = completion_logits(model, batch)
        tok_loss = F.cross_entropy(logits.flatten(0, 1), batch.completion_ids.flatten(), reduction="none")
        loss = (tok_loss * batch.completion_mask.flatten()).sum() / batch.completion_mask.sum()
        opt.zero_grad(set_to_none=True)
        torch.autograd.backward(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
        if target_loss is not None and len(losses) >= TARGET_WINDOW \
                and sum(losses[-TARGET_WINDOW:]) / TARGET_WINDOW <= target_loss:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
    return losses
