"""Malformed hosted requests, replay of failed calls, grader strictness and token
hygiene, all over a real uvicorn server (``rft_sdk.testing.run_server``)."""

from __future__ import annotations

import json
import logging
import math
import socket

import httpx
import pytest
from sdk_helpers import call_body, new_trace

from rft_sdk import Grade, GradingContext, RetryableToolError, Rollout, ToolError, ToolServer
from rft_sdk.testing import run_server

BAD_SCORES = {  # case -> (value returned by the grader, fragment of the 500 message)
    "nan": (math.nan, "non-finite"), "inf": (math.inf, "non-finite"), "-inf": (-math.inf, "non-finite"),
    "high": (1.01, "outside its declared range"), "low": (-0.5, "outside its declared range"),
    "str": ("1.0", "expected a float"), "none": (None, "expected a float"),
    "grade_nan": (Grade(math.nan), "non-finite"), "sub_inf": (Grade(0.5, {"f1": math.inf}), "sub-score"),
}


def _build() -> ToolServer:
    server = ToolServer(auth_env_var=None)
    server.runs = []  # (tool name, call_id) of every real execution
    server.flaky_left = {}  # call_id -> RetryableToolErrors still to raise

    @server.tool
    def add(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add to the cart.

        Args:
            sku: Product SKU.
            qty: Units.
        """
        server.runs.append(("add", rollout.call_id))
        cart = rollout.state.setdefault("cart", {})
        cart[sku] = cart.get(sku, 0) + qty
        return f"{sum(cart.values())} items"

    @server.tool
    def refuse(reason: str, *, rollout: Rollout) -> str:
        """Always fails after dirtying the state.

        Args:
            reason: message of the ToolError.
        """
        server.runs.append(("refuse", rollout.call_id))
        rollout.state["dirty"] = True
        raise ToolError(reason)

    @server.tool
    def flaky(*, rollout: Rollout) -> str:
        """Raises RetryableToolError while ``server.flaky_left[call_id]`` > 0, then succeeds."""
        server.runs.append(("flaky", rollout.call_id))
        left = server.flaky_left.get(rollout.call_id, 0)
        if left:
            server.flaky_left[rollout.call_id] = left - 1
            rollout.state["dirty"] = True
            raise RetryableToolError("database busy")
        rollout.state["flaky_ok"] = True
        return "ok"

    @server.grader(name="cart", score_range=(0.0, 1.0), default=True)
    def cart(ctx: GradingContext) -> Grade:
        """1.0 when the cart holds item["want"] units in total."""
        total = sum(ctx.state.get("cart", {}).values())
        return Grade(1.0 if total == ctx.item.get("want") else 0.0, {"calls": float(ctx.count())})

    @server.grader(name="strict", score_range=(0.0, 1.0))
    def strict(ctx: GradingContext):
        """Returns the bad value named by item["case"], or raises for "raise"."""
        if ctx.item["case"] == "raise":
            raise LookupError("no reference answer for this item")
        return BAD_SCORES[ctx.item["case"]][0]

    @server.grader(name="truth", score_range=(0.0, 1.0))
    def truth(ctx: GradingContext) -> bool | Grade:
        """Returns a bool (``return answer == gold``), or a Grade whose score and sub-score are bools."""
        same = ctx.output_text == ctx.item["gold"]
        return Grade(same, {"exact": same}) if ctx.item.get("as_grade") else same

    return server


@pytest.fixture(scope="module")
def live():
    server = _build()
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        yield server, client


def _snapshot(server: ToolServer):
    return json.dumps(server.store.stats()), len(server.runs)


# -- request-level errors: clear 4xx, nothing stored or run ---------------------------------
REQUEST_ERRORS = [
    ("call_id", None, "call_id"), ("call_id", 7, "call_id"), ("call_id", "", "call_id"),
    ("trace_id", None, "trace_id"), ("trace_id", ["t"], "trace_id"), ("id", 3, "id"),
    ("type", {"x": 1}, "type"), ("name", 5, "name"), ("item", [], "item"), ("item", 0, "item"),
    ("item", "line", "item"),
]


@pytest.mark.parametrize("field, value, named", REQUEST_ERRORS)
def test_wrong_field_types_are_422_and_change_nothing(live, field, value, named):
    server, client = live
    trace = new_trace()
    body = call_body("add", {"sku": "A"}, trace_id=trace)
    if value is None:
        del body[field]
    else:
        body[field] = value
    before = _snapshot(server)
    r = client.post("/tools/add", json=body)
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and [d["field"] for d in error["details"]] == [named]
    assert "output" not in r.json()
    assert _snapshot(server) == before
    assert client.post("/grade", json={"sample": {"output_text": "x"}, "trace_id": trace,
                                       "item": {"want": 0}}).json() == {"score": 1.0}  # nothing recorded


@pytest.mark.parametrize("content, code", [
    (b'{"call_id": "c", ', "malformed_json"),
    (b"[1, 2]", "invalid_request"),
    (b'"just a string"', "invalid_request"),
    (b"", "malformed_json"),
    (b'{"call_id": "c", "trace_id": "t", "arguments": {"sku": "A", "qty": NaN}}', "malformed_json"),
    (b'{"call_id": "c", "trace_id": "t", "item": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}",
     "malformed_json"),
    (b"[" * 100_000 + b"]" * 100_000, "malformed_json"),
], ids=["truncated", "array", "string", "empty", "nan", "deep-item", "deep-array"])
def test_malformed_bodies_are_400(live, content, code):
    server, client = live
    before = _snapshot(server)
    r = client.post("/tools/add", content=content, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == code
    assert _snapshot(server) == before
    assert client.get("/healthz").status_code == 200


@pytest.mark.parametrize("arguments, status, code", [
    (None, 422, "invalid_arguments"),            # JSON null: no arguments at all -> "sku" missing
    ("null", 422, "invalid_arguments"),
    ("   ", 422, "invalid_arguments"),
    ('"sku"', 422, "invalid_arguments"),          # a JSON string of a non-object
    ("[1, 2]", 422, "invalid_arguments"),
    ("42", 422, "invalid_arguments"),
    (["sku"], 422, "invalid_arguments"),
    ('{"sku": ', 400, "malformed_arguments"),
    ('{"sku": "A", "qty": Infinity}', 400, "malformed_arguments"),
])
def test_bad_arguments_are_model_visible_and_leave_state_alone(live, arguments, status, code):
    server, client = live
    trace = new_trace()
    assert client.post("/tools/add", json=call_body("add", {"sku": "A", "qty": 2}, trace_id=trace)).status_code == 200
    body = call_body("add", {}, trace_id=trace)
    body["arguments"] = arguments
    runs = len(server.runs)
    r = client.post("/tools/add", json=body)
    assert r.status_code == status and r.json()["error"]["code"] == code and "output" not in r.json()
    assert r.json()["call_id"] == body["call_id"]
    assert len(server.runs) == runs  # the tool never ran
    # the cart is untouched: one more unit makes 3
    assert client.post("/tools/add", json=call_body("add", {"sku": "A"}, trace_id=trace)).json()["output"] == "3 items"


# -- idempotent replay, also of failed calls ---------------------------------------------------
def test_failed_calls_replay_without_running_again(live):
    server, client = live
    trace = new_trace()
    cases = [
        (call_body("refuse", {"reason": "Order not found"}, trace_id=trace, call_id="call_r"), "/tools/refuse", 400),
        (call_body("add", {"qty": 1}, trace_id=trace, call_id="call_v"), "/tools/add", 422),
        (call_body("add", '{"sku": ', trace_id=trace, call_id="call_m"), "/tools/add", 400),
    ]
    for body, path, status in cases:
        first = client.post(path, json=body)
        runs = list(server.runs)
        again = [client.post(path, json=body) for _ in range(3)]
        assert first.status_code == status
        assert all(a.status_code == status and a.json() == first.json() for a in again)
        assert server.runs == runs
    assert server.runs.count(("refuse", "call_r")) == 1
    assert server.metrics["counters"]["replayed_calls"] >= 9
    r = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {"want": 0}, "trace_id": trace})
    details = json.loads(r.headers["x-rft-grade-details"])
    assert r.json() == {"score": 1.0} and details["subscores"]["calls"] == 3.0  # each call recorded once


def test_retryable_error_runs_again_and_is_recorded_once(live):
    server, client = live
    trace = new_trace()
    server.flaky_left["call_f"] = 2
    body = call_body("flaky", {}, trace_id=trace, call_id="call_f")
    statuses = [client.post("/tools/flaky", json=body).status_code for _ in range(4)]
    assert statuses == [503, 503, 200, 200]  # the 4th is a replay
    assert server.runs.count(("flaky", "call_f")) == 3


# -- grading ---------------------------------------------------------------------------------
@pytest.mark.parametrize("as_grade", [False, True])
def test_a_bool_grade_counts_as_0_or_1(live, as_grade):
    """Issue 36: ``return answer == gold`` answered 500; a bool is 1.0 / 0.0 (a sub-score too)."""
    _, client = live
    for text, score in (("x", 1.0), ("y", 0.0)):
        r = client.post("/grade/truth", json={"sample": {"output_text": text},
                                              "item": {"gold": "x", "as_grade": as_grade}, "trace_id": new_trace()})
        assert r.status_code == 200 and r.json() == {"score": score}
        if as_grade:
            assert json.loads(r.headers["x-rft-grade-details"])["subscores"] == {"exact": score}


@pytest.mark.parametrize("case", [*BAD_SCORES, "raise"])
def test_grader_strictness_over_http(live, case):
    server, client = live
    trace = new_trace()
    client.post("/tools/add", json=call_body("add", {"sku": "A"}, trace_id=trace))
    errors = server.metrics["counters"].get("grader_errors", 0)
    r = client.post("/grade/strict", json={"sample": {"output_text": "x"}, "item": {"case": case},
                                           "trace_id": trace})
    assert r.status_code == 500 and r.headers["content-type"] == "application/json"
    message = r.json()["error"]["message"]
    expected = "LookupError: no reference answer" if case == "raise" else BAD_SCORES[case][1]
    assert expected in message and "'strict'" in message
    assert "score" not in r.json() and "x-rft-grade-details" not in r.headers
    assert server.metrics["counters"]["grader_errors"] == errors + 1
    assert server.store.stats()["rollouts"] >= 1
    assert client.post("/grade", json={"sample": {"output_text": "x"}, "item": {"want": 1},
                                       "trace_id": trace}).json() == {"score": 1.0}  # state kept for a retry


@pytest.mark.parametrize("body, field", [
    ({"item": {}, "trace_id": "trace_g"}, "sample"),
    ({"sample": "text", "item": {}, "trace_id": "trace_g"}, "sample"),
    ({"sample": {"output_text": 3}, "item": {}, "trace_id": "trace_g"}, "sample.output_text"),
    ({"sample": {}, "item": [1], "trace_id": "trace_g"}, "item"),
    ({"sample": {}, "item": {}, "trace_id": ""}, "trace_id"),  # absent is accepted since #12 (Azure)
    ({"sample": {}, "item": {}, "trace_id": 12}, "trace_id"),
])
def test_bad_grading_requests_are_422(live, body, field):
    server, client = live
    grades = server.metrics["counters"].get("grades", 0)
    r = client.post("/grade", json=body)
    assert r.status_code == 422 and [d["field"] for d in r.json()["error"]["details"]] == [field]
    assert server.metrics["counters"].get("grades", 0) == grades


@pytest.mark.parametrize("text", ["[" * 100_000, "NaN", '{"a": ' * 500 + "1" + "}" * 500],
                         ids=["deep-array", "nan", "deep-object"])
def test_pathological_output_text_is_graded_as_plain_text(live, text):
    _, client = live
    r = client.post("/grade", json={"sample": {"output_text": text}, "item": {"want": 0}, "trace_id": new_trace()})
    assert r.status_code == 200 and r.json() == {"score": 1.0}


def test_unknown_trace_grades_an_empty_trajectory(live):
    _, client = live
    r = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {"want": 0}, "trace_id": new_trace()})
    assert r.json() == {"score": 1.0}
    assert json.loads(r.headers["x-rft-grade-details"])["subscores"] == {"calls": 0.0}


# -- body limit at the socket level ------------------------------------------------------------
def _raw_exchange(url: str, head: bytes, body: bytes) -> bytes:
    """Send raw bytes; return the whole answer (head and Content-Length body, which may arrive in
    separate TCP segments, so one ``recv`` is not enough)."""
    host, port = url.removeprefix("http://").split(":")
    answer = b""
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head + body)
        while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _content_length(answer):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer


def _content_length(answer: bytes) -> int:
    for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_declared_oversize_body_is_refused_before_it_is_sent(live):
    """A Content-Length over the limit gets 413 although only 100 bytes were sent."""
    _, client = live
    url = str(client.base_url).rstrip("/")
    head = (b"POST /tools/add HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: 50000000\r\n\r\n")
    answer = _raw_exchange(url, head, b"{" * 100)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"body_too_large" in answer


def test_lying_short_content_length_is_400(live):
    """A Content-Length shorter than the body: the server reads only that much and refuses it."""
    _, client = live
    url = str(client.base_url).rstrip("/")
    body = json.dumps(call_body("add", {"sku": "A"}, trace_id=new_trace())).encode()
    head = (b"POST /tools/add HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: 12\r\n\r\n")
    assert _raw_exchange(url, head, body).startswith(b"HTTP/1.1 400")


def test_body_that_never_arrives_is_408_after_the_body_timeout():
    """Content-Length promises 100 bytes, 10 arrive: 408 after body_timeout_s, not a wait forever."""
    server = ToolServer(auth_env_var=None, body_timeout_s=0.3)
    ran = []

    @server.tool
    def add(sku: str) -> str:
        """Add."""
        ran.append(sku)
        return sku

    with run_server(server) as url:
        head = (b"POST /tools/add HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n")
        answer = _raw_exchange(url, head, b'{"call_id"')
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"body_timeout" in answer
    assert ran == [] and server.metrics["counters"]["body_timeouts"] == 1


# -- auth and logs -----------------------------------------------------------------------------
def test_tokens_never_logged_or_echoed(monkeypatch, caplog):
    monkeypatch.setenv("RFT_AUTH_TOKENS", "env-secret-aaaa, env-secret-bbbb")
    server = ToolServer(auth_tokens=["arg-secret-cccc"])

    @server.tool
    def crash() -> str:
        """Raises, so the server logs a traceback."""
        raise RuntimeError("tool blew up")

    @server.grader
    def boom(ctx: GradingContext) -> float:
        raise RuntimeError("grader blew up")

    secrets = ["env-secret-aaaa", "env-secret-bbbb", "arg-secret-cccc", "wrong-secret-dddd"]
    caplog.set_level(logging.DEBUG)
    texts = []
    with run_server(server, log_level="debug", log_config=None) as url, httpx.Client(base_url=url) as c:
        for token in secrets:
            headers = {"Authorization": f"Bearer {token}"}
            body = call_body("crash", {}, trace_id=new_trace())
            for r in (c.post("/tools/crash", json=body, headers=headers), c.get("/tools", headers=headers),
                      c.get("/metrics", headers=headers),
                      c.post("/grade", json={"sample": {}, "trace_id": body["trace_id"]}, headers=headers)):
                texts.append(r.text + json.dumps(dict(r.headers)))
                assert (r.status_code == 401) == token.startswith("wrong")
    assert "tool blew up" in caplog.text and "grader blew up" in caplog.text  # logging did happen
    assert server.metrics["counters"]["auth_failures"] == 4
    for secret in secrets:
        assert secret not in caplog.text
        assert all(secret not in t for t in texts)
    assert all(secret not in repr(vars(server)) for secret in secrets)
