"""``TorchPolicy``: the emulator's ``Policy`` protocol backed by a local torch model.

Concurrent ``act`` calls (the emulator runs rollouts concurrently) are gathered
into one batch per model call: each call enqueues its rendered prompt and waits;
a flusher waits ``batch_window_s`` for more requests, then samples the whole
batch in a worker thread (so tool HTTP traffic keeps flowing) with
:func:`generate`.

Reproducibility: each request gets its own random stream, seeded from
``(seed, round, prompt, how many identical prompts came before it this round)``.
Requests with the same prompt are exchangeable, so the set of samples per
prompt — and so every group's trajectories — is the same whatever order the
HTTP responses arrive in. Call :meth:`TorchPolicy.set_round` once per training
step to draw fresh samples.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from typing import Any

import torch

from rft_sdk.emulator import PolicyStep, ToolCall

from ._generate import Completion, generate
from ._render import parse_output, render_prompt
from ._turn import SampledTurn

__all__ = ["TorchPolicy"]


class TorchPolicy:
    """Sample actions from a causal LM; implements ``rft_sdk.emulator.Policy``.

    Args:
        model: a :class:`TinyGPT` or an HF adapter (same call convention).
        tokenizer: ``ByteTokenizer`` or a wrapper with ``encode/decode/bos_id/eos_id/pad_id``.
        temperature: sampling temperature (0 = greedy).
        max_new_tokens: most tokens per assistant turn.
        seed: base seed of the per-request random streams.
        max_tool_chars: tool outputs are cut to this many characters in the prompt.
        batch_window_s: seconds the flusher waits to gather concurrent requests.

    ``act`` returns a ``PolicyStep`` whose ``extra`` is a :class:`SampledTurn`
    (prompt ids, generated ids, their sampling logprobs, text, truncated), used by the trainer.
    """

    def __init__(self, model: torch.nn.Module, tokenizer: Any, *, temperature: float = 1.0,
                 max_new_tokens: int = 64, seed: int = 0, max_tool_chars: int = 200,
                 batch_window_s: float = 0.005) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.max_new_tokens = temperature, max_new_tokens
        self.seed, self.max_tool_chars, self.batch_window_s = seed, max_tool_chars, batch_window_s
        self._round = 0
        self._seen: Counter[bytes] = Counter()
        self._pending: list[tuple[list[int], torch.Generator | None, asyncio.Future[Completion]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches: list[int] = []  # batch sizes sampled so far (diagnostics)

    def set_round(self, round_: int) -> None:
        """Start sampling round ``round_`` (e.g. the training step): resets the per-prompt counters."""
        self._round = round_
        self._seen.clear()

    def prompt_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[int]:
        """The rendered prompt (see ``_render.render_prompt``), cut to its last
        ``block_size - max_new_tokens`` tokens so prompt + completion fit the model."""
        ids = render_prompt(messages, tools, self.tokenizer, max_tool_chars=self.max_tool_chars)
        limit = max(1, int(getattr(self.model, "block_size", 1 << 30)) - self.max_new_tokens)
        return ids[-limit:]

    def _generator(self, prompt: list[int]) -> torch.Generator | None:
        if self.temperature == 0:
            return None
        key = b",".join(str(t).encode() for t in prompt)
        n = self._seen[key]
        self._seen[key] += 1
        h = hashlib.sha256(f"{self.seed}|{self._round}|{n}|".encode() + key).digest()
        return torch.Generator().manual_seed(int.from_bytes(h[:8], "little") & ((1 << 63) - 1))

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Render, sample one assistant turn, parse it. Returns a ``PolicyStep``.

        Output that is not a well-formed ``<call>…</call>`` becomes the final answer.
        """
        prompt = self.prompt_ids(messages, tools)
        fut: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending.append((prompt, self._generator(prompt), fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        completion = await fut
        text = self.tokenizer.decode(t for t in completion.token_ids if t != self.tokenizer.eos_id)
        parsed = parse_output(text)
        extra = SampledTurn(prompt_ids=prompt, completion_ids=completion.token_ids, logprobs=completion.logprobs,
                            text=text, truncated=completion.truncated)
        calls: list[ToolCall | dict[str, Any]] = list(parsed.tool_calls)
        return PolicyStep(content=parsed.content, tool_calls=calls, extra=extra)

    async def _flush(self) -> None:
        while self._pending:
            await asyncio.sleep(self.batch_window_s)
            batch, self._pending = self._pending, []
            try:
                results = await asyncio.to_thread(self._sample, [p for p, _, _ in batch], [g for _, g, _ in batch])
            except Exception as exc:  # hand the error to every waiting act() call
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, _, fut), res in zip(batch, results):
                if not fut.done():
                    fut.set_result(res)

    def _sample(self, prompts: list[list[int]], generators: list[torch.Generator | None]) -> list[Completion]:
        self.batches.append(len(prompts))
        was_training = self.model.training
        self.model.eval()
        try:
            return generate(self.model, prompts, eos_id=self.tokenizer.eos_id, pad_id=self.tokenizer.pad_id,
                            max_new_tokens=self.max_new_tokens, temperature=self.temperature,
                            generators=None if self.temperature == 0 else generators)  # type: ignore[arg-type]
        finally:
            self.model.train(was_training)
