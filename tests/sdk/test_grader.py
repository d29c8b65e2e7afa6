"""Grader endpoint over a real uvicorn server and over ASGI."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from sdk_helpers import call_body, make_server, new_trace

from rft_sdk import Grade, GraderDefinitionError, GradingContext, ToolServer, grader
from rft_sdk.testing import run_server

SEEN: dict[str, GradingContext] = {}


def build(**kwargs) -> ToolServer:
    server = make_server(**kwargs)

    @server.grader
    def cart_grader(ctx: GradingContext) -> Grade:
        """Score 1 when the final cart equals item["expected_cart"]."""
        SEEN[ctx.trace_id] = ctx
        ok = ctx.state.get("cart") == ctx.item.get("expected_cart")
        return Grade(1.0 if ok else 0.0, {"calls": float(ctx.count("add_to_cart"))},
                     [f"answer={ctx.output_text}"])

    @server.grader(name="half")
    async def half(ctx: GradingContext) -> float:
        """An async grader: always 0.5."""
        return 0.5

    @server.grader(name="boom")
    def boom(ctx: GradingContext) -> float:
        raise KeyError("expected_cart")

    return server


def grade_body(trace_id, item, text="done"):
    return {"sample": {"output_text": text, "output_json": None, "output_tools": [], "choices": [],
                       "extra_field": 1}, "item": item, "trace_id": trace_id}


def test_interleaved_rollouts_then_grading_over_http():
    server = build()
    t1, t2 = new_trace(), new_trace()
    item1 = {"expected_cart": {"A": 3}}
    item2 = {"expected_cart": {"B": 5}}
    with run_server(server) as url, httpx.Client(base_url=url) as c:
        plan = [(t1, item1, "A", 1), (t2, item2, "B", 2), (t1, item1, "A", 2), (t2, item2, "B", 2)]
        for i, (trace, item, sku, qty) in enumerate(plan):
            r = c.post("/tools/add_to_cart", json=call_body("add_to_cart", {"sku": sku, "qty": qty},
                                                            trace_id=trace, call_id=f"call_{i}", item=item))
            assert r.status_code == 200
        r1 = c.post("/grade", json=grade_body(t1, item1, '{"final": true}'))
        r2 = c.post("/grade", json=grade_body(t2, item2))
        assert r1.status_code == r2.status_code == 200
        assert r1.json() == {"score": 1.0}  # exactly the wire shape
        assert r2.json() == {"score": 0.0}  # B = 4, expected 5
        details = json.loads(r1.headers["x-rft-grade-details"])
        assert details == {"subscores": {"calls": 2.0}, "reasons": ['answer={"final": true}']}
        c1, c2 = SEEN[t1], SEEN[t2]
        assert [(r.call_id, r.arguments) for r in c1.trajectory] == [
            ("call_0", {"sku": "A", "qty": 1}), ("call_2", {"sku": "A", "qty": 2})]
        assert [r.call_id for r in c2.trajectory] == ["call_1", "call_3"]
        assert c1.state == {"cart": {"A": 3}} and c2.state == {"cart": {"B": 4}}
        assert c1.sample["output_json"] == {"final": True} and c2.sample["output_json"] is None
        # state released after grading; a retried identical request returns the same answer
        assert server.store.stats()["released"] == 2
        again = c.post("/grade", json=grade_body(t1, item1, '{"final": true}'))
        assert again.json() == {"score": 1.0} and again.headers["x-rft-grade-details"] == r1.headers[
            "x-rft-grade-details"]
        assert server.metrics["counters"]["grades_replayed"] == 1
        # a different request for a released rollout is refused, not graded on an empty trajectory
        other = c.post("/grade", json=grade_body(t1, item1, "something else"))
        assert other.status_code == 409


async def test_unknown_trace_grades_empty_trajectory():
    server = build()
    trace = new_trace()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        r = await c.post("/grade/cart_grader", json=grade_body(trace, {"expected_cart": None}))
    assert r.status_code == 200 and r.json() == {"score": 1.0}  # no cart == expected None
    assert SEEN[trace].trajectory == () and SEEN[trace].state == {}


async def test_grading_twice_is_deterministic_with_retention():
    server = build(grade_retention_s=60.0)
    trace = new_trace()
    item = {"expected_cart": {"A": 1}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        await c.post("/tools/add_to_cart", json=call_body("add_to_cart", {"sku": "A"}, trace_id=trace, item=item))
        first = await c.post("/grade", json=grade_body(trace, item))
        second = await c.post("/grade", json=grade_body(trace, item))
    assert first.json() == second.json() == {"score": 1.0}
    assert server.metrics["counters"]["grades"] == 2  # graded twice from the retained state
    assert server.metrics["counters"].get("grades_replayed", 0) == 0
    assert await server.store.load(trace) is not None  # retained for debugging


@pytest.mark.parametrize("value, fragment", [
    (math.nan, "non-finite"), (math.inf, "non-finite"), (1.5, "outside its declared range"),
    (-0.1, "outside its declared range"), ("0.5", "expected a float"),
    (None, "expected a float"), (Grade(math.nan), "non-finite"), (Grade(0.5, {"f1": math.inf}), "sub-score")])
async def test_invalid_scores_are_500_with_readable_body(value, fragment):
    server = ToolServer(auth_env_var=None)
    server.grader(name="fixed", score_range=(0.0, 1.0))(lambda ctx: value)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        r = await c.post("/grade/fixed", json=grade_body(new_trace(), {}))
    assert r.status_code == 500
    assert fragment in r.json()["error"]["message"] and "score" not in r.json()
    assert server.metrics["counters"]["grader_errors"] == 1
    assert "x-rft-grade-details" not in r.headers


async def test_grader_exception_unknown_grader_and_bad_body():
    server = build()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        r = await c.post("/grade/boom", json=grade_body(new_trace(), {}))
        assert r.status_code == 500 and "KeyError" in r.json()["error"]["message"]
        assert (await c.post("/grade/half", json=grade_body(new_trace(), {}))).json() == {"score": 0.5}
        assert (await c.post("/grade/nope", json=grade_body(new_trace(), {}))).status_code == 404
        assert (await c.post("/grade", content=b"{oops")).status_code == 400
        # a grade without trace_id is accepted since #12 (Azure's grader tests); a wrong one is not
        assert (await c.post("/grade", json={"sample": {}, "trace_id": 12})).status_code == 422
        big = grade_body(new_trace(), {"blob": "x" * 1_100_000})
        assert (await c.post("/grade", json=big)).status_code == 413


def test_grader_definitions():
    @grader(name="g1", score_range=(0, 1))
    def g1(ctx):
        return 1.0

    assert g1(None) == 1.0  # unchanged function
    with pytest.raises(GraderDefinitionError):
        grader(lambda a, b: 0.0)
    with pytest.raises(GraderDefinitionError):
        grader(score_range=(1.0, 0.0))(lambda ctx: 0.0)
    for bad in ("has space", "a.b", "abc\n", "x" * 65, ""):  # a trailing newline is no part of a name either
        with pytest.raises(GraderDefinitionError, match="name"):
            grader(name=bad)(lambda ctx: 0.0)
    assert grader(name="supply__twin_a")(lambda ctx: 0.0)(None) == 0.0  # "__" and "-" are fine in /grade/{name}
    server = ToolServer(graders=[g1], auth_env_var=None)
    assert server.default_grader == "g1"

    @server.grader(default=True)
    def main(ctx):
        return 0.0

    assert server.default_grader == "main"
    with pytest.raises(GraderDefinitionError):
        server.grader(name="other", default=True)(lambda ctx: 0.0)


def test_server_grader_keywords_over_an_inner_grader_keep_the_ones_they_do_not_give():
    server = ToolServer(auth_env_var=None)

    @server.grader(name="b")
    @grader(score_range=(0.0, 1.0), default=True)
    def a(ctx):
        return 1.0

    definition = server.graders["b"]
    assert (definition.name, definition.score_range, definition.default) == ("b", (0.0, 1.0), True)
    assert server.default_grader == "b"

    @server.grader(score_range=(0.0, 2.0))
    @grader(name="c", score_range=(0.0, 1.0))
    def c_fn(ctx):
        return 1.5

    assert server.graders["c"].score_range == (0.0, 2.0)  # the outer keyword wins where both give one


def test_context_helpers():
    from rft_sdk import ToolCallRecord

    recs = tuple(ToolCallRecord(f"call_{i}", None, n, {}, "ok" if s == 200 else None,
                                None if s == 200 else "err", s, 0.0, 0.0)
                 for i, (n, s) in enumerate([("a", 200), ("b", 422), ("a", 400)]))
    ctx = GradingContext(sample={"output_text": "x"}, item={}, trace_id="trace_x", trajectory=recs)
    assert [r.call_id for r in ctx.calls("a")] == ["call_0", "call_2"]
    assert ctx.count() == 3 and ctx.count("b") == 1
    assert [r.call_id for r in ctx.errors] == ["call_1", "call_2"]


async def test_each_grade_is_logged_with_its_subscores_and_reasons(caplog):
    import logging

    server = ToolServer(auth_env_var=None)

    @server.grader
    def layered(ctx: GradingContext) -> Grade:
        return Grade(0.25, {"db_match": 1.0, "info": 0.5}, ["missing '12.50'"])

    caplog.set_level(logging.INFO, logger="rft_sdk")
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        r = await client.post("/grade", json={"sample": {"output_text": "x"}, "item": {}, "trace_id": "trace_log"})
    assert r.json() == {"score": 0.25}
    line = next(rec.getMessage() for rec in caplog.records if "trace_log" in rec.getMessage())
    assert "0.2500" in line and "'db_match': 1.0" in line and "missing '12.50'" in line
