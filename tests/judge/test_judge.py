"""LLM judge block against a real local fake judge server (Starlette on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rft_sdk import Grade, rewards
from rft_sdk.testing import run_server


class FakeJudge:
    """A chat-completions server: the score is the fraction of rubric words present in
    the user content; ``fail_next`` answers 503, ``garbage_next`` a non-verdict, ``refuse`` 400."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next = 0
        self.garbage_next = 0
        self.refuse = False

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        if self.refuse:
            return JSONResponse({"error": "bad model"}, status_code=400)
        if self.fail_next:
            self.fail_next -= 1
            return JSONResponse({"error": "overloaded"}, status_code=503)
        if self.garbage_next:
            self.garbage_next -= 1
            content = "I think it is fine"
        else:
            rubric_words = body["messages"][0]["content"].split("Rubric:\n")[1].split()
            user = json.loads(body["messages"][1]["content"])
            hits = [w for w in rubric_words if w in json.dumps(user)]
            content = json.dumps({"score": len(hits) / len(rubric_words), "reasons": [f"found {h}" for h in hits]})
        return JSONResponse({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def fake():
    judge = FakeJudge()
    app = Starlette(routes=[Route("/v1/chat/completions", judge.completions, methods=["POST"])])
    with run_server(app) as url:
        judge.url = f"{url}/v1"
        yield judge


async def test_structured_request_and_verdict(fake: FakeJudge) -> None:
    judge = rewards.LLMJudge(fake.url, "judge-m", rubric="pytest ruff", api_key="k", wait_s=0.01)
    verdict = await judge.judge({"trajectory": ["run pytest", "edit"]})
    assert verdict == rewards.JudgeVerdict(score=0.5, reasons=["found pytest"])
    sent = fake.requests[0]
    assert sent["model"] == "judge-m" and sent["temperature"] == 0.0
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == ["score", "reasons"]
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    await judge.aclose()


async def test_cache_by_content(fake: FakeJudge) -> None:
    judge = rewards.LLMJudge(fake.url, "m", rubric="pytest", wait_s=0.01)
    a = await judge.judge({"x": "pytest", "y": 1})
    b = await judge.judge({"y": 1, "x": "pytest"})  # same content, other key order
    c = await judge.judge({"x": "other"})
    assert a == b and c.score == 0.0
    assert len(fake.requests) == 2 and judge.cache_hits == 1
    await judge.aclose()


async def test_retries_transient_failures_and_garbage(fake: FakeJudge) -> None:
    judge = rewards.LLMJudge(fake.url, "m", rubric="pytest", max_attempts=4, wait_s=0.01)
    fake.fail_next, fake.garbage_next = 2, 1
    verdict = await judge.judge({"x": "pytest"})
    assert verdict.score == 1.0 and len(fake.requests) == 4
    await judge.aclose()


async def test_gives_up_and_refusals_not_retried(fake: FakeJudge) -> None:
    judge = rewards.LLMJudge(fake.url, "m", rubric="pytest", max_attempts=2, wait_s=0.01)
    fake.fail_next = 5
    with pytest.raises(rewards.JudgeError, match="after 2 attempts"):
        await judge.judge({"x": 1})
    assert len(fake.requests) == 2
    fake.fail_next, fake.refuse = 0, True
    with pytest.raises(rewards.JudgeError, match="HTTP 400"):
        await judge.judge({"x": 2})
    assert len(fake.requests) == 3
    await judge.aclose()


async def test_gate_blocks_judge_and_only_adds(fake: FakeJudge) -> None:
    judge = rewards.LLMJudge(fake.url, "m", rubric="pytest ruff", wait_s=0.01)
    failed = await rewards.gated_judge(0.8, False, judge, {"t": "pytest ruff"})
    assert failed.score == 0.0 and failed.subscores == {"gate": 0.0} and fake.requests == []
    passed = await rewards.gated_judge(Grade(0.8, {"tests": 1.0}), True, judge, {"t": "pytest"}, bonus=0.2)
    assert passed.score == pytest.approx(0.9)
    assert passed.subscores == {"tests": 1.0, "gate": 1.0, "judge": 0.5}
    assert passed.reasons == ["judge: found pytest"]
    none = await rewards.gated_judge(0.8, True, judge, {"t": "nothing"}, bonus=0.2)
    assert none.score == pytest.approx(0.8)  # a judge never takes away from a pass
    with pytest.raises(ValueError, match="bonus"):
        await rewards.gated_judge(0.8, True, judge, {}, bonus=-1)
    await judge.aclose()


def test_bad_configuration() -> None:
    with pytest.raises(ValueError, match="rubric"):
        rewards.LLMJudge("http://127.0.0.1:1/v1", "m", rubric="  ")
    with pytest.raises(ValueError, match="max_attempts"):
        rewards.LLMJudge("http://127.0.0.1:1/v1", "m", rubric="r", max_attempts=0)
