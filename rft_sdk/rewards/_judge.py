"""LLM-judge reward block: a rubric judged by any OpenAI-compatible
chat-completions endpoint, and a gate so the judge can only add to a strict pass.

Cosine's layering (from the talk this project grows from): the reward is 0
unless the hard check passes (the tests); only then does a judge add a bonus
for good practice (ran the tests, read the output, linted). A judge therefore
never rescues a failed gate and is never called for one.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .._definitions._grading import Grade
from .._definitions._schema import strictify
from .._wire._tls import ssl_context
from ..exceptions import GraderError

__all__ = ["Judge", "JudgeError", "JudgeVerdict", "LLMJudge", "gated_judge"]

_SYSTEM = (
    "You are a strict grader. Judge the submission only by the rubric. "
    "Answer with a JSON object: score (a number from 0 to 1) and reasons (short strings)."
)


class JudgeError(GraderError):
    """The judge endpoint failed after the retries, refused the request (4xx
    other than 429), or kept answering something that is not a verdict."""


class JudgeVerdict(BaseModel):
    """The judge's structured answer (the ``response_format`` JSON schema).

    Attributes:
        score: in [0, 1].
        reasons: short justifications, shown in the grade's reasons.
    """

    model_config = ConfigDict(extra="forbid")
    score: float = Field(ge=0.0, le=1.0)
    reasons: list[str]


class Judge(Protocol):
    """Anything that scores content against a rubric: ``LLMJudge`` or a local
    deterministic judge (the examples' offline main jobs use one)."""

    async def judge(self, content: Mapping[str, Any]) -> JudgeVerdict:
        """Score ``content`` (a JSON object: task, answer, trajectory, ...)."""
        ...


class _Retryable(Exception):
    """A transient answer (429/5xx, transport error, unparsable verdict)."""


class LLMJudge:
    """Judge over ``POST {base_url}/chat/completions`` with structured output.

    The request carries the rubric (system message), the content as JSON (user
    message), ``temperature`` and ``response_format = {"type": "json_schema",
    "json_schema": {"name": "judge_verdict", "strict": true, "schema": <JudgeVerdict>}}``.
    The reply's ``choices[0].message.content`` is parsed with pydantic.

    Retries (tenacity, exponential wait from ``wait_s``): transport errors, 429,
    5xx and unparsable verdicts, up to ``max_attempts`` in all. Verdicts are
    cached by the SHA-256 of (model, rubric, content): an identical request
    is answered from the cache (LRU of ``cache_size`` entries).

    Args:
        base_url: e.g. ``"http://localhost:8000/v1"``.
        model: model name sent in the request.
        rubric: what earns score 1 and what 0 (plain text).
        api_key: bearer token (default ``$OPENAI_API_KEY``; none when unset).
        timeout_s: per-request timeout, seconds.
    """

    def __init__(self, base_url: str, model: str, rubric: str, *, api_key: str | None = None,
                 temperature: float = 0.0, max_attempts: int = 3, wait_s: float = 0.5,
                 timeout_s: float = 60.0, cache_size: int = 10_000,
                 client: httpx.AsyncClient | None = None) -> None:
        if not rubric.strip():
            raise ValueError("LLMJudge needs a non-empty rubric")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
        self.base_url, self.model, self.rubric = base_url.rstrip("/"), model, rubric
        self.temperature, self.max_attempts, self.wait_s = temperature, max_attempts, wait_s
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = client or httpx.AsyncClient(timeout=timeout_s, headers=headers, verify=ssl_context())
        self._cache: collections.OrderedDict[str, JudgeVerdict] = collections.OrderedDict()
        self._cache_size = cache_size
        self.requests_sent = 0
        self.cache_hits = 0

    @staticmethod
    def response_format() -> dict[str, Any]:
        """The ``response_format`` object sent with every request."""
        schema = strictify(JudgeVerdict.model_json_schema(), "JudgeVerdict")
        return {"type": "json_schema", "json_schema": {"name": "judge_verdict", "strict": True, "schema": schema}}

    def messages(self, content: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages for ``content``: system = instructions + rubric, user = content as JSON."""
        return [{"role": "system", "content": f"{_SYSTEM}\n\nRubric:\n{self.rubric}"},
                {"role": "user", "content": json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)}]

    def cache_key(self, content: Mapping[str, Any]) -> str:
        """SHA-256 hex of the model, rubric and content (canonical JSON)."""
        blob = json.dumps({"model": self.model, "rubric": self.rubric, "content": content},
                          sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    async def judge(self, content: Mapping[str, Any]) -> JudgeVerdict:
        """The verdict for ``content`` (cached).

        Raises:
            JudgeError: see the class docstring.
        """
        key = self.cache_key(content)
        if key in self._cache:
            self.cache_hits += 1
            self._cache.move_to_end(key)
            return self._cache[key]
        body = {"model": self.model, "messages": self.messages(content), "temperature": self.temperature,
                "response_format": self.response_format()}
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(self.max_attempts),
                                               wait=wait_exponential(multiplier=self.wait_s, max=30),
                                               retry=retry_if_exception_type(_Retryable), reraise=True):
                with attempt:
                    verdict = await self._once(body)
        except _Retryable as exc:
            raise JudgeError(f"judge failed after {self.max_attempts} attempts: {exc}") from exc
        self._cache[key] = verdict
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return verdict

    async def _once(self, body: dict[str, Any]) -> JudgeVerdict:
        self.requests_sent += 1
        try:
            resp = await self._client.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.TransportError as exc:
            raise _Retryable(f"transport error: {exc!r}") from exc
        if resp.status_code == 429 or resp.status_code >= 500:
            raise _Retryable(f"HTTP {resp.status_code}: {resp.text[:200]}")
        if resp.status_code >= 400:
            raise JudgeError(f"judge endpoint refused the request: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            text = resp.json()["choices"][0]["message"]["content"]
            return JudgeVerdict.model_validate_json(text)
        except (ValueError, KeyError, IndexError, TypeError, ValidationError) as exc:
            raise _Retryable(f"not a verdict: {exc}") from exc

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()


async def gated_judge(base: Grade | float, passed: bool, judge: Judge, content: Mapping[str, Any], *,
                      bonus: float = 0.2, name: str = "judge", gate_name: str = "gate") -> Grade:
    """Cosine's layering: ``0`` when ``passed`` is false (the judge is not
    called), else ``base + bonus · verdict.score``.

    The gate is sub-score ``gate_name`` (1/0), the verdict sub-score ``name``
    (in [0, 1]); the verdict's reasons are appended prefixed by ``name``.
    Choose ``base`` and ``bonus`` so the sum stays inside the grader's score
    range (e.g. base 0.8, bonus 0.2).

    Raises:
        ValueError: ``bonus`` negative or not finite.
        JudgeError: from the judge.
    """
    if not (bonus >= 0 and bonus != float("inf")):
        raise ValueError(f"bonus must be finite and >= 0, got {bonus!r}")
    g = base if isinstance(base, Grade) else Grade(float(base))
    if not passed:
        return Grade(0.0, {**g.subscores, gate_name: 0.0}, [*g.reasons, f"{gate_name} failed"])
    verdict = await judge.judge(content)
    return Grade(g.score + bonus * verdict.score, {**g.subscores, gate_name: 1.0, name: verdict.score},
                 [*g.reasons, *(f"{name}: {r}" for r in verdict.reasons)])
