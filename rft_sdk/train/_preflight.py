"""``rft train``'s pre-flight: token lengths against the model's ``block_size`` before any work.

A demonstration row of the SFT warm start is the rendered conversation so far
(``_render.render_prompt``) plus the gold turn's completion; a row longer than
the model's context cannot be trained on (``_batch.make_batch`` refuses it).
Before any rollout, each train item's gold conversation is rendered with its
tool outputs left empty (their true text is known only after calling the
tools), which gives a lower bound of every row's length: an item over the
bound can never fit, and the run stops at once with the fix. The rows actually
gathered are checked again before the first SFT step (:func:`check_rows`).

For GRPO, a first prompt longer than ``block_size - max_new_tokens`` is cut
from the left by the policy (it loses the tool list and the start of the
task); that is reported as a warning, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rft_sdk.emulator import make_tool_call

from ._render import format_call, render_prompt

__all__ = ["BlockSizeError", "check_items", "check_rows"]


class BlockSizeError(ValueError):
    """A training row cannot fit the model's context; the message names the item, the lengths and the fix."""


def _fix(need: int, block_size: int) -> str:
    return (f"raise training.block_size to at least {need} (from {block_size}; the TinyGPT context, its cost grows "
            "with it), shorten the items' messages and tool descriptions, or lower training.max_tool_chars")


def _gold_rows(item: dict[str, Any], tokenizer: Any, max_tool_chars: int) -> list[tuple[int, int]]:
    """``(prompt tokens, completion tokens)`` of each gold turn, tool outputs empty (a lower bound)."""
    tools = item.get("tools") or []
    messages = list(item.get("messages") or [])
    rows: list[tuple[int, int]] = []
    for action in item.get("actions") or []:
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            return rows  # a malformed gold: rft validate's business; the replay would discard it
        args = action.get("arguments") or {}
        prompt = render_prompt(messages, tools, tokenizer, max_tool_chars=max_tool_chars)
        rows.append((len(prompt), len(tokenizer.encode(format_call(action["name"], args))) + 1))
        call = make_tool_call(action["name"], args if isinstance(args, (dict, str)) else json.dumps(args))
        messages += [{"role": "assistant", "content": None, "tool_calls": [call.to_chat()]},
                     {"role": "tool", "tool_call_id": call.call_id, "content": ""}]
    answer = item.get("reference_answer")
    if answer is not None:
        prompt = render_prompt(messages, tools, tokenizer, max_tool_chars=max_tool_chars)
        rows.append((len(prompt), len(tokenizer.encode(str(answer))) + 1))
    return rows


def check_items(items: Sequence[dict[str, Any]], tokenizer: Any, *, block_size: int, max_new_tokens: int,
                max_tool_chars: int, sft: bool) -> list[str]:
    """Check the train items before any work; return warnings (GRPO prompts that will be cut).

    Args:
        items: the train items (``messages``, ``tools``, gold ``actions`` / ``reference_answer``).
        tokenizer: the run's tokenizer (``encode``, ``bos_id``, ``eos_id``).
        block_size: the model's context, in tokens. max_new_tokens, max_tool_chars: the run's.
        sft: whether an SFT warm start will train on the gold rows (then they must fit).

    Raises:
        BlockSizeError: with ``sft``, some gold row's lower bound is over ``block_size`` (the
            message names the longest item, 0-based, and how many items are over).
    """
    warnings: list[str] = []
    if sft:
        over = []
        for index, item in enumerate(items):
            rows = _gold_rows(item, tokenizer, max_tool_chars)
            if rows and (worst := max(rows, key=sum)) and sum(worst) > block_size:
                over.append((sum(worst), index, worst))
        if over:
            need, index, (prompt, completion) = max(over)
            raise BlockSizeError(
                f"{len(over)} of {len(items)} train item(s) have a gold SFT row longer than block_size={block_size}; "
                f"the longest, item {index}, needs at least {need} tokens (prompt {prompt} + completion "
                f"{completion}, tool outputs not counted): {_fix(need, block_size)}")
    firsts = [(len(render_prompt(list(item.get("messages") or []), item.get("tools") or [], tokenizer,
                                 max_tool_chars=max_tool_chars)), i) for i, item in enumerate(items)]
    cut = [(n, i) for n, i in firsts if n + max_new_tokens > block_size]
    if cut:
        n, i = max(cut)
        warnings.append(f"{len(cut)} of {len(items)} train item(s) start with a prompt longer than block_size - "
                        f"max_new_tokens = {block_size - max_new_tokens} tokens (item {i}: {n}); the policy sees "
                        f"only their last tokens. {_fix(n + max_new_tokens, block_size)}")
    return warnings


def check_rows(rows: Sequence[tuple[Sequence[int], Sequence[int]]], block_size: int) -> None:
    """Check the SFT rows gathered from the endpoints (tool outputs included) before the first SFT step.

    Raises:
        BlockSizeError: a row is longer than ``block_size``.
    """
    over = [len(p) + len(c) for p, c in rows if len(p) + len(c) > block_size]
    if over:
        need = max(over)
        raise BlockSizeError(f"{len(over)} of {len(rows)} SFT demonstration rows (tool outputs included) are longer "
                             f"than block_size={block_size}, the longest {need} tokens: {_fix(need, block_size)}")
