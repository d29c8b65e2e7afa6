"""SFT warm start: demonstrations gathered through the real endpoints, then cross-entropy.

A :class:`DemonstrationPolicy` replays an item's gold ``actions`` (one call per
turn) and then its ``reference_answer`` — the replay fields pinned in
docs/ARCHITECTURE.md — while recording, per turn, the rendered prompt and the
target completion ids. Run through the emulator it yields the exact
(prompt, completion) pairs the trained policy will see, with real tool outputs
and a real grade (demonstrations that do not pass are dropped).
"""

from __future__ import annotations

import json
import random
from typing import Any

import torch
import torch.nn.functional as F

from ._batch import completion_logits, make_batch
from ._policy import _policy_step_cls
from ._render import format_call, render_prompt

__all__ = ["DemonstrationPolicy", "sft_train"]


class DemonstrationPolicy:
    """Replays ``item[actions_field]`` then answers ``item[answer_field]``; implements ``Policy``.

    ``extra`` of each step: ``{"prompt_ids": [int], "completion_ids": [int]}``, the
    completion being ``format_call(...)`` or the answer text, followed by ``eos_id``.

    Raises (from ``act``):
        KeyError: the item lacks the answer field.
    """

    def __init__(self, tokenizer: Any, *, max_tool_chars: int = 200, actions_field: str = "actions",
                 answer_field: str = "reference_answer") -> None:
        self.tokenizer, self.max_tool_chars = tokenizer, max_tool_chars
        self.actions_field, self.answer_field = actions_field, answer_field
        self._step_cls = _policy_step_cls()

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> Any:
        """The next gold turn for ``messages`` (turn index = assistant messages so far)."""
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        actions = item.get(self.actions_field) or []
        prompt = render_prompt(messages, tools, self.tokenizer, max_tool_chars=self.max_tool_chars)
        if turn < len(actions):
            action = actions[turn]
            text = format_call(action["name"], action.get("arguments", {}))
            args = action.get("arguments", {})
            calls = [{"id": f"fc_demo_{turn}", "call_id": f"call_demo_{turn}", "name": action["name"],
                      "arguments": args if isinstance(args, str) else json.dumps(args)}]  # wire: a JSON string
            content = None
        else:
            text, calls, content = str(item[self.answer_field]), [], str(item[self.answer_field])
        extra = {"prompt_ids": prompt, "completion_ids": self.tokenizer.encode(text) + [self.tokenizer.eos_id]}
        return self._step_cls(content=content, tool_calls=calls, extra=extra)


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
    on_step: Any = None,
) -> list[float]:
    """Minimise the mean token cross-entropy of the completions given their prompts.

    Args:
        model: causal LM (``_model.py`` call convention), trained in place.
        pairs: ``[(prompt_ids, completion_ids)]``; batches are drawn with ``random.Random(seed)``.
        steps / batch_size / lr / weight_decay / grad_clip: AdamW schedule (constant lr).
        on_step: optional ``callable(step, loss)`` (e.g. a progress bar).

    Returns: the loss (nats per completion token) of every step.

    Raises:
        ValueError: no pairs, or non-positive steps/batch_size.
    """
    if not pairs:
        raise ValueError("SFT needs at least one demonstration pair")
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps ({steps}) and batch_size ({batch_size}) must be >= 1")
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
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
    return losses
