"""The request pipeline over a real uvicorn server: lone UTF-16 surrogates in every field,
a client that disconnects mid-body, the one JSON error handler, auth as middleware,
``Field(...)`` parameter defaults, and ``rft <command> --help``."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time

import httpx
import pytest
from pydantic import Field
from sdk_helpers import call_body, new_trace
from starlette.applications import Starlette
from starlette.routing import Mount

from rft_sdk import Grade, GradingContext, Rollout, SQLiteStore, ToolError, ToolServer
from rft_sdk.cli import main
from rft_sdk.protocol import GRADE_DETAILS_HEADER, MAX_BODY_BYTES, ErrorBody
from rft_sdk.testing import run_server

LONE = "\ud800"


def _build(**kwargs) -> ToolServer:
    server = ToolServer(auth_env_var=None, **kwargs)
    server.runs = []

    @server.tool
    def add(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add to the cart.

        Args:
            sku: Product SKU.
            qty: Units.
        """
        server.runs.append(rollout.call_id)
        cart = rollout.state.setdefault("cart", {})
        cart[sku] = cart.get(sku, 0) + qty
        return f"{sum(cart.values())} items"

    @server.tool
    def echo_bad(kind: str) -> object:
        """Returns or raises text holding a lone surrogate.

        Args:
            kind: "str", "dict" or "raise".
        """
        server.runs.append(kind)
        if kind == "str":
            return "out" + LONE
        if kind == "dict":
            return {"k" + LONE: ["v" + LONE]}
        raise ToolError("bad" + LONE)

    @server.tool
    def page(n: int = Field(5, ge=1, le=10)) -> str:
        """Return the page number and its Python type.

        Args:
            n: page number.
        """
        return f"{n}:{type(n).__name__}"

    @server.grader(default=True)
    def cart(ctx: GradingContext) -> Grade:
        """1.0 when the cart is empty; a surrogate in sub-score name and reason when item asks."""
        if ctx.item.get("bad") == "raise":
            raise RuntimeError("grader broke" + LONE)
        if ctx.item.get("bad"):
            return Grade(0.5, {"s" + LONE: 1.0}, ["why" + LONE])
        return Grade(1.0 if not ctx.state.get("cart") else 0.0)

    return server


@pytest.fixture(scope="module")
def live():
    server = _build()
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        yield server, client


def _post_raw(client: httpx.Client, path: str, body: dict) -> httpx.Response:
    """POST ``body`` as ASCII JSON (lone surrogates travel as ``\\ud800`` escapes, valid JSON)."""
    return client.post(path, content=json.dumps(body).encode("ascii"), headers={"content-type": "application/json"})


def _assert_still_serving(client: httpx.Client) -> None:
    assert client.get("/healthz").status_code == 200
    r = client.post("/tools/add", json=call_body("add", {"sku": "A"}, trace_id=new_trace()))
    assert r.status_code == 200 and r.json()["output"] == "1 items"


# -- lone surrogates in request fields: 400 JSON before anything runs ------------------------
def _tool_case(field: str) -> dict:
    body = call_body("add", {"sku": "A"}, trace_id=new_trace())
    if field == "arguments":
        body["arguments"] = '{"sku": "A' + LONE + '"}'  # the surrogate itself inside the string
    elif field == "arguments.sku":
        body["arguments"] = {"sku": "A" + LONE}  # already-decoded arguments
    elif field == "item":
        body["item"] = {"task" + LONE: 1}
    else:
        body[field] = body[field] + LONE
    return body


@pytest.mark.parametrize("field", ["call_id", "id", "trace_id", "name", "type", "arguments", "arguments.sku",
                                   "item"])
def test_lone_surrogate_in_tool_request_is_400_every_time(live, field):
    server, client = live
    body = _tool_case(field)
    runs, stats = list(server.runs), server.store.stats()
    answers = [_post_raw(client, "/tools/add", body) for _ in range(3)]
    assert {a.status_code for a in answers} == {400}
    assert answers[0].headers["content-type"] == "application/json"
    assert answers[0].json()["error"]["code"] == "malformed_json"
    assert answers[0].json()["error"]["details"][0]["field"] == ("item" if field == "item" else field)
    assert len({a.content for a in answers}) == 1  # a retry gets the same answer
    ErrorBody.model_validate(answers[0].json())
    assert server.runs == runs and server.store.stats() == stats  # nothing ran, nothing stored
    _assert_still_serving(client)


def test_lone_surrogate_escaped_inside_arguments_text_is_model_visible_400(live):
    """``arguments`` as JSON text carrying a ``\\ud800`` escape: a model-visible 400, recorded and replayed."""
    server, client = live
    trace = new_trace()
    body = call_body("add", {}, trace_id=trace)
    body["arguments"] = '{"sku": "A\\ud800"}'
    answers = [client.post("/tools/add", json=body) for _ in range(2)]
    assert [a.status_code for a in answers] == [400, 400] and answers[0].content == answers[1].content
    assert answers[0].json()["error"]["code"] == "malformed_arguments"
    assert answers[0].json()["call_id"] == body["call_id"]
    assert body["call_id"] not in server.runs
    _assert_still_serving(client)


@pytest.mark.parametrize("body, field", [
    ({"sample": {"output_text": "x"}, "item": {}, "trace_id": "t" + LONE}, "trace_id"),
    ({"sample": {"output_text": "x" + LONE}, "item": {}, "trace_id": "t"}, "sample.output_text"),
    ({"sample": {"output_text": "x"}, "item": {"a": LONE}, "trace_id": "t"}, "item.a"),
])
def test_lone_surrogate_in_grade_request_is_400_every_time(live, body, field):
    server, client = live
    grades = server.metrics["counters"].get("grades", 0)
    answers = [_post_raw(client, "/grade", body) for _ in range(2)]
    assert [a.status_code for a in answers] == [400, 400] and answers[0].content == answers[1].content
    assert answers[0].json()["error"]["details"][0]["field"] == field
    assert server.metrics["counters"].get("grades", 0) == grades
    _assert_still_serving(client)


def test_lone_surrogate_trace_id_never_reaches_sqlite(tmp_path):
    server = _build(store=SQLiteStore(tmp_path / "r.db"))
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        body = call_body("add", {"sku": "A"}, trace_id="trace" + LONE)
        answers = [_post_raw(client, "/tools/add", body) for _ in range(2)]
        assert [a.status_code for a in answers] == [400, 400] and answers[0].content == answers[1].content
        assert answers[0].json()["error"]["details"][0]["field"] == "trace_id"
        _assert_still_serving(client)


# -- lone surrogates in what user code returns or raises: replaced, answer encodes -----------
@pytest.mark.parametrize("kind, status, expected", [
    ("str", 200, "out\ufffd"),
    ("dict", 200, json.dumps({"k\ufffd": ["v\ufffd"]}, ensure_ascii=False, separators=(",", ":"))),
    ("raise", 400, "bad\ufffd"),
])
def test_lone_surrogate_in_tool_output_or_error_is_replaced(live, kind, status, expected):
    server, client = live
    trace = new_trace()
    body = call_body("echo_bad", {"kind": kind}, trace_id=trace)
    answers = [client.post("/tools/echo_bad", json=body) for _ in range(3)]
    assert {a.status_code for a in answers} == {status} and len({a.content for a in answers}) == 1
    data = answers[0].json()
    assert (data["output"] if status == 200 else data["error"]["message"]) == expected
    assert server.runs.count(kind) >= 1
    record = asyncio.run(server.store.load(trace)).trajectory[0]  # the trajectory holds what the model saw
    assert (record.output if status == 200 else record.error) == expected
    r = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {}, "trace_id": trace})
    assert r.status_code == 200
    _assert_still_serving(client)


def test_lone_surrogate_in_grade_details_and_grader_error(live):
    _, client = live
    r = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {"bad": True}, "trace_id": new_trace()})
    assert r.status_code == 200 and r.json() == {"score": 0.5}
    details = json.loads(r.headers[GRADE_DETAILS_HEADER])
    assert details == {"subscores": {"s\ufffd": 1.0}, "reasons": ["why\ufffd"]}
    body = {"sample": {"output_text": "x"}, "item": {"bad": "raise"}, "trace_id": new_trace()}
    answers = [client.post("/grade", json=body) for _ in range(2)]
    assert [a.status_code for a in answers] == [500, 500]
    assert answers[0].headers["content-type"] == "application/json"
    assert "grader broke\ufffd" in answers[0].json()["error"]["message"]
    _assert_still_serving(client)


# -- client disconnect mid-body ---------------------------------------------------------------
def test_client_disconnect_mid_body_logs_no_error(caplog):
    server = _build()
    caplog.set_level(logging.DEBUG)
    with run_server(server, log_config=None) as url:
        host, port = url.removeprefix("http://").split(":")
        for _ in range(2):
            with socket.create_connection((host, int(port)), timeout=5) as sock:
                sock.sendall(b"POST /tools/add HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 1000\r\n\r\n" + b'{"call_id": "c')
                time.sleep(0.05)
        deadline = time.monotonic() + 5
        while server.metrics["counters"].get("client_disconnects", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        with httpx.Client(base_url=url) as client:
            _assert_still_serving(client)
    assert server.metrics["counters"]["client_disconnects"] == 2
    assert "client disconnected" in caplog.text  # it is logged, below ERROR
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert len(server.runs) == 1  # only the health-check call ran


# -- one JSON error handler --------------------------------------------------------------------
def test_unexpected_exception_is_a_json_500(caplog):
    server = _build()

    async def broken_load(trace_id):
        raise KeyError("bug in a custom store")

    server.store.load = broken_load
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        r = client.post("/tools/add", json=call_body("add", {"sku": "A"}, trace_id=new_trace(), call_id="call_x"))
        assert r.status_code == 500 and r.headers["content-type"] == "application/json"
        assert r.json()["error"]["code"] == "internal_error" and r.json()["call_id"] == "call_x"
        assert "bug in a custom store" not in r.text  # internals are not shown to the model
        assert httpx.get(url + "/healthz").status_code == 200  # uvicorn closed that connection; a new one works
    assert server.metrics["counters"]["internal_errors"] == 1


def test_error_bodies_have_the_protocol_shape(live):
    _, client = live
    answers = [
        client.post("/tools/nope", json={}),
        client.post("/tools/add", content=b"{", headers={"content-type": "application/json"}),
        client.post("/tools/add", json={"trace_id": "t"}),
        client.post("/tools/add", json=call_body("add", {"qty": 1}, trace_id=new_trace())),
        client.post("/tools/add", content=b"x" * (MAX_BODY_BYTES + 1)),
        client.post("/grade/nope", json={}),
    ]
    assert [a.status_code for a in answers] == [404, 400, 422, 422, 413, 404]
    for answer in answers:
        parsed = ErrorBody.model_validate(answer.json())
        assert "output" not in answer.json() and parsed.error.code and parsed.error.message


# -- auth middleware ---------------------------------------------------------------------------
def test_auth_is_one_middleware_also_when_mounted():
    server = _build(auth_tokens=["tok-1234"])
    app = Starlette(routes=[Mount("/rft", server)])
    good = {"Authorization": "Bearer tok-1234"}
    with run_server(app) as url, httpx.Client(base_url=url + "/rft") as client:
        assert client.get("/healthz").status_code == 200
        for method, path in [("GET", "/tools"), ("GET", "/metrics"), ("POST", "/tools/add"), ("POST", "/grade"),
                             ("POST", "/tools/nope"), ("GET", "/nowhere")]:
            r = client.request(method, path, json={})
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", (method, path)
            assert r.headers["www-authenticate"] == "Bearer"
        r = client.post("/tools/add", json=call_body("add", {"sku": "A"}, trace_id=new_trace()), headers=good)
        assert r.status_code == 200
        assert client.get("/tools", headers={"Authorization": b"Bearer tok-1234\xed\xa0\x80"}).status_code == 401
    assert server.metrics["counters"]["auth_failures"] == 7


# -- Field(...) as a parameter default -----------------------------------------------------------
def test_field_default_keeps_its_limits_and_null_means_the_default(live):
    server, client = live
    schema = server.tools["page"].parameters["properties"]["n"]
    # fine-tuned models support no minimum/maximum: the limits are said in the description, enforced below
    assert "minimum" not in schema and "maximum" not in schema and "null" in schema["type"]
    assert ">= 1; <= 10" in schema["description"]
    results = {}
    for value in (50, 0, None, 7):
        r = client.post("/tools/page", json=call_body("page", {"n": value}, trace_id=new_trace()))
        results[value] = (r.status_code, r.json().get("output"), r.json().get("error", {}).get("details"))
    assert results[50][0] == 422 and [d["field"] for d in results[50][2]] == ["n"]
    assert results[0][0] == 422
    assert results[None][:2] == (200, "5:int")  # not a FieldInfo object
    assert results[7][:2] == (200, "7:int")
    r = client.post("/tools/page", json=call_body("page", {}, trace_id=new_trace()))
    assert r.json()["output"] == "5:int"


# -- CLI -----------------------------------------------------------------------------------------
def _all_commands() -> list[str]:
    from importlib.metadata import entry_points

    from rft_sdk.cli import COMMANDS_GROUP

    return ["serve", "tools", *sorted(ep.name for ep in entry_points(group=COMMANDS_GROUP))]


def test_every_declared_command_is_found():
    assert {"emulate", "train", "doctor", "top", "check", "job"} <= set(_all_commands())


@pytest.mark.parametrize("command", _all_commands())
def test_every_sub_command_help_exits_0(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: rft {command}")


def test_version_exits_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("rft-sdk ")


# -- one protocol module -------------------------------------------------------------------------
def test_server_and_emulator_share_the_protocol_constants():
    from rft_sdk.emulator import _client

    settings = _client.ClientSettings()
    assert settings.max_response_bytes == settings.max_request_bytes == MAX_BODY_BYTES == 1_000_000
    server = ToolServer(auth_env_var=None)
    assert server.body_limit == server.response_limit == MAX_BODY_BYTES
    assert _client.GRADE_DETAILS_HEADER is GRADE_DETAILS_HEADER
