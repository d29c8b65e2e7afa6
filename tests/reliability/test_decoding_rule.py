"""The one decoding rule of request JSON (``rft_sdk._wire._json.loads_strict``), fuzzed.

Before: UTF-8-encoded surrogate bytes (``\\xed\\xa0\\x80``) passed the stdlib's
``json.loads(bytes)`` (it decodes with ``surrogatepass``) and the escape-only
surrogate scan: in ``arguments`` they answered ``500 UnicodeEncodeError``, in
``id`` the tool **ran** and then the answer failed to encode (nothing recorded:
every hosted retry ran the tool again), elsewhere they reached the tool or the
grader. Now any lone surrogate, escaped or raw, in any field is a 400 before
anything runs, with or without orjson.
"""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_helpers import body, connect, raw_request, read_response

from rft_sdk import GradingContext, Rollout, ToolServer
from rft_sdk._wire import _json
from rft_sdk._wire._json import SurrogateError, loads_strict
from rft_sdk.testing import run_server

RAW = b"\xed\xa0\x80"  # U+D800 encoded as if it were a character (CESU-8 style): not valid UTF-8
MARK = "\u2603"  # placeholder replaced by RAW in the encoded body

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20)


def _both(text: str | bytes) -> tuple[object, object]:
    """``loads_strict(text)`` with orjson and with the stdlib alone: the value, or the error's type and message."""
    outcomes = []
    for accelerated in (True, False):
        saved = _json.orjson
        if not accelerated:
            _json.orjson = None
        try:
            outcomes.append(("ok", loads_strict(text)))
        except ValueError as exc:
            outcomes.append((type(exc).__name__, str(exc)))
        finally:
            _json.orjson = saved
    return outcomes[0], outcomes[1]


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_accepted_documents_decode_the_same_with_or_without_orjson(value):
    text = json.dumps(value)
    fast, slow = _both(text.encode())
    assert fast == slow == ("ok", json.loads(text))


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from(["\\ud800", "\\udfff", "\\udc00x", "\\ud83d"]),
       st.sampled_from(["a", "b[0]", "b[1].c"]))
def test_an_escaped_lone_surrogate_anywhere_is_refused_naming_its_field(value, escape, where):
    holder = {"a": "x", "b": ["x", {"c": "x"}], "v": value}
    if where == "a":
        holder["a"] = "@@"
    elif where == "b[0]":
        holder["b"][0] = "@@"
    else:
        holder["b"][1]["c"] = "@@"
    text = json.dumps(holder).replace('"@@"', f'"{escape}"')
    fast, slow = _both(text.encode())
    assert fast == slow == ("SurrogateError", str(SurrogateError(where)))


@settings(max_examples=200, deadline=None)
@given(json_values, st.integers(0, 3))
def test_raw_encoded_surrogate_bytes_anywhere_are_refused(value, pick):
    holder = {"k": value, "s": ["p", {"q": "r"}], MARK: 1}
    targets = ['"p"', '"r"', f'"{MARK}"', '"k"']
    text = json.dumps(holder, ensure_ascii=False)
    raw = text.replace(targets[pick], targets[pick][:-1] + MARK + '"', 1).encode().replace(MARK.encode(), RAW)
    fast, slow = _both(raw)
    assert fast == slow and fast[0] == "SurrogateError"


@pytest.mark.parametrize("raw, problem", [
    (b'{"a": "\xff"}', "not valid UTF-8"),  # other invalid bytes: worded as such, not as a surrogate
    (b'{"a": NaN}', "NaN is not valid JSON"),
    (b"[" * 70 + b"]" * 70, "nests deeper than 64"),
])
def test_other_refusals_are_the_same_with_or_without_orjson(raw, problem):
    fast, slow = _both(raw)
    assert fast == slow and problem in str(fast[1])


def test_a_str_holding_a_surrogate_character_is_refused():
    with pytest.raises(SurrogateError, match="'k'"):
        loads_strict('{"k": "a\ud800"}')


# -- over a real server: every field, raw bytes, nothing runs, the connection stays usable ---------------------
def _server() -> ToolServer:
    server = ToolServer(auth_env_var=None)
    server.runs = []

    @server.tool
    def write(sku: str, rollout: Rollout) -> str:
        """Record a write (a side effect that must never run twice).

        Args:
            sku: product.
        """
        server.runs.append(rollout.call_id)
        rollout.state[sku] = rollout.state.get(sku, 0) + 1
        return "ok"

    @server.grader
    def grade(ctx: GradingContext) -> float:
        """1.0 when anything was written."""
        server.runs.append("grade")
        return 1.0 if ctx.state else 0.0

    return server


def _tool_body(field: str) -> bytes:
    b = body("write", {"sku": "A"})
    if field == "arguments":  # inside the arguments JSON text
        b["arguments"] = '{"sku": "A' + MARK + '"}'
    elif field == "arguments.sku":  # an already-decoded arguments object
        b["arguments"] = {"sku": "A" + MARK}
    elif field == "item":
        b["item"] = {"task": "t" + MARK}
    elif field == "item key":
        b["item"] = {"t" + MARK: 1}
    else:
        b[field] = b[field] + MARK
    return json.dumps(b, ensure_ascii=False).encode().replace(MARK.encode(), RAW)


TOOL_FIELDS = ["arguments", "arguments.sku", "call_id", "id", "trace_id", "name", "type", "item", "item key"]
GRADE_FIELDS = {"sample.output_text": {"sample": {"output_text": "x" + MARK}, "item": {}, "trace_id": "t1"},
                "item.a": {"sample": {"output_text": "x"}, "item": {"a": MARK}, "trace_id": "t1"},
                "trace_id": {"sample": {"output_text": "x"}, "item": {}, "trace_id": "t" + MARK}}


@pytest.fixture(scope="module")
def live():
    server = _server()
    with run_server(server) as url:
        yield server, url


@pytest.mark.parametrize("field", TOOL_FIELDS)
def test_raw_surrogate_in_any_tool_field_is_400_before_the_tool_runs(live, field):
    server, url = live
    runs = list(server.runs)
    sock = connect(url)
    try:
        for _ in range(3):  # retried: the same answer, on the same keep-alive connection
            sock.sendall(raw_request("/tools/write", _tool_body(field)))
            status, headers, payload = read_response(sock)
            assert status == 400 and headers["content-type"] == "application/json", payload
            error = json.loads(payload)["error"]
            assert error["code"] == "malformed_json" and "surrogate" in error["message"]
            assert error["details"][0]["field"] == {"arguments.sku": "arguments.sku", "item key": "item"}.get(
                field, "item.task" if field == "item" else field)
        sock.sendall(raw_request("/tools/write", json.dumps(body("write", {"sku": "B"})).encode()))
        assert read_response(sock)[0] == 200  # the connection is still usable
    finally:
        sock.close()
    assert server.runs[:len(runs)] == runs and len(server.runs) == len(runs) + 1  # only the last call ran


@pytest.mark.parametrize("field", sorted(GRADE_FIELDS))
def test_raw_surrogate_in_any_grade_field_is_400_before_the_grader_runs(live, field):
    server, url = live
    runs = len(server.runs)
    payload = json.dumps(GRADE_FIELDS[field], ensure_ascii=False).encode().replace(MARK.encode(), RAW)
    answer = httpx.post(url + "/grade", content=payload, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"]["details"][0]["field"] == field
    assert len(server.runs) == runs


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_bytes_never_answer_5xx_and_never_run_a_tool_on_a_refusal(live, data):
    """Random byte edits of a valid body (insert raw surrogates, invalid UTF-8, control bytes, truncate)."""
    server, url = live
    good = json.dumps(body("write", {"sku": "Z"}), ensure_ascii=False).encode()
    edits = data.draw(st.lists(st.tuples(st.integers(0, len(good)), st.sampled_from(
        [RAW, b"\xff", b"\xc3", b"\x00", b'"', b"\\", b"\\ud800", b"{", b"]", b""])), min_size=1, max_size=4))
    mutated = good
    for at, piece in edits:
        mutated = mutated[:at] + piece + mutated[at:]
    runs = len(server.runs)
    answer = httpx.post(url + "/tools/write", content=mutated, headers={"content-type": "application/json"})
    assert answer.status_code < 500, answer.text
    assert answer.headers["content-type"] == "application/json"
    if answer.status_code != 200:
        assert len(server.runs) == runs  # a refused request ran nothing
