"""A rollout's item bytes reused across its calls (``rft_sdk._wire._hosted_body``): the same rule, the same errors.

``decode_request`` skips decoding an item the rollout already holds; these tests
check it gives exactly what ``decode_object`` (the one decoding rule on the whole
body) gives -- the value, or the same ``EndpointError`` -- on fuzzed and hostile
bodies, with the item known or not, and with or without orjson.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rft_sdk._wire import _json
from rft_sdk._wire._body import decode_object
from rft_sdk._wire._endpoint import EndpointError
from rft_sdk._wire._hosted_body import decode_request, trace_id_hint
from rft_sdk._wire._item_cache import ItemCache
from rft_sdk._wire._json import depth_within

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
    | st.sampled_from(['"', "\\", "[", "]{", '\\"[', "}", "item", '"item":']),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=25)
items = st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5)
formats = st.sampled_from([{"separators": (",", ":")}, {}, {"indent": 1}, {"ensure_ascii": False},
                           {"separators": (" , ", " : "), "ensure_ascii": False}])


def outcome(fn, *args):
    """``("ok", value)`` or ``("error", status, code, message, details)``."""
    try:
        return ("ok", fn(*args))
    except EndpointError as exc:
        return ("error", exc.status, exc.code, exc.message, exc.details)


def via_reuse(raw: bytes, cache: ItemCache):
    """``decode_request``'s result as ``decode_object`` gives it (the reused item decoded back in)."""
    data, item_json = decode_request(raw, cache)
    if item_json is not None:
        assert "item" not in data
        data = {**data, "item": json.loads(item_json)}
    return data


def body(item, fmt, order, trace_id="t1", extra=None):
    members = {"type": "function_call", "call_id": "c1", "trace_id": trace_id, "name": "write",
               "arguments": json.dumps({"sku": "A"}), **(extra or {})}
    keys = list(members) + ["item"]
    keys = keys[order % len(keys):] + keys[:order % len(keys)]
    members["item"] = item
    return json.dumps({k: members[k] for k in keys}, **fmt).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items, formats, st.integers(0, 6), st.booleans())
def test_known_or_first_seen_items_decode_exactly_as_the_whole_body(item, fmt, order, known_first):
    raw = body(item, fmt, order)
    cache = ItemCache()
    if known_first:
        decode_request(body(item, fmt, 6), cache)  # item last: its bytes are remembered as sent
    expected = outcome(decode_object, raw)
    assert outcome(via_reuse, raw, cache) == expected
    again = body(item, fmt, order).replace(b'"c1"', b'"c2"')  # a later call of the rollout
    assert outcome(via_reuse, again, cache) == outcome(decode_object, again)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items, st.data())
def test_byte_edits_of_a_body_with_a_known_item_get_the_same_answer(item, data):
    """Random edits anywhere (inside the item too): the reuse path never accepts what the rule refuses."""
    good = body(item, {"separators": (",", ":"), "ensure_ascii": False}, 6)
    cache = ItemCache()
    decode_request(good, cache)  # remembered
    edits = data.draw(st.lists(st.tuples(st.integers(0, len(good)), st.sampled_from(
        [b"\xed\xa0\x80", b"\xff", b"\x00", b'"', b"\\", b"\\ud800", b"{", b"}", b"[", b"]", b",", b" ", b"NaN",
         b"1234567890123456789012", b'"item":null,', b'"item":{},', b""])), min_size=1, max_size=3))
    mutated = good
    for at, piece in edits:
        mutated = mutated[:at] + piece + mutated[at:]
    assert outcome(via_reuse, mutated, cache) == outcome(decode_object, mutated)


ITEM = {"messages": [{"role": "user", "content": 'a "quoted" [text] {x}\\n'}], "n": [1, 2.5, None], "k": {}}
RAW_ITEM = json.dumps(ITEM, separators=(",", ":")).encode()


def _prefix(**members):
    return json.dumps({"type": "function_call", "call_id": "c9", "trace_id": "t1", **members},
                      separators=(",", ":"))[:-1].encode()


def _deep(levels: int) -> bytes:
    return b'{"d":' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"


HOSTILE = {
    "duplicate item, last wins": _prefix() + b',"item":' + RAW_ITEM + b',"item":null}',
    "duplicate item, other object": _prefix() + b',"item":' + RAW_ITEM + b',"item":{"a":1}}',
    "known bytes nested in arguments": _prefix(arguments={"item": ITEM}) + b',"item":{"b":2}}',
    "known bytes nested, no item": _prefix(arguments={"x": ITEM}) + b"}",
    "escaped key": _prefix() + b',"it\\u0065m":' + RAW_ITEM + b"}",
    "trailing data": _prefix() + b',"item":' + RAW_ITEM + b"} x",
    "NaN outside the item": _prefix() + b',"n":NaN,"item":' + RAW_ITEM + b"}",
    "escaped lone surrogate outside": _prefix(name="\ud800") + b',"item":' + RAW_ITEM + b"}",
    "raw surrogate bytes outside": _prefix() + b',"x":"\xed\xa0\x80","item":' + RAW_ITEM + b"}",
    "invalid UTF-8 in a key": _prefix() + b',"\xff":1,"item":' + RAW_ITEM + b"}",
    "too deep outside": _prefix() + b',"a":' + b"[" * 64 + b"]" * 64 + b',"item":' + RAW_ITEM + b"}",
    "big integer outside": _prefix() + b',"a":123456789012345678901234,"item":' + RAW_ITEM + b"}",
    "item not an object": _prefix() + b',"item":[1,2]}',
    "item truncated": _prefix() + b',"item":' + RAW_ITEM[:-1] + b"}",
    "item longer than known": _prefix() + b',"item":' + RAW_ITEM[:-1] + b',"z":1}}',
    "whitespace everywhere": b' { "type" : "function_call" ,\n"call_id":"c9", "trace_id"\t: "t1" , "item" : '
                             + RAW_ITEM + b" } \n",
    "item 63 deep (body 64)": _prefix() + b',"item":' + _deep(63) + b"}",
    "item 64 deep (body 65)": _prefix() + b',"item":' + _deep(64) + b"}",
    "item first, trace_id after": b'{"item":' + RAW_ITEM + b',"trace_id":"t1","call_id":"c9"}',
    "not an object": b'["trace_id", "t1"]',
    "a trace_id hint that is nested": b'{"arguments":{"trace_id":"t1"},"trace_id":"t2","item":' + RAW_ITEM + b"}",
}


@pytest.mark.parametrize("accelerated", [True, False], ids=["orjson", "stdlib"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_bodies_get_what_the_whole_body_decode_gives(case, accelerated, monkeypatch):
    if not accelerated:
        monkeypatch.setattr(_json, "orjson", None)
    raw = HOSTILE[case] + b" " * 2048  # over the small-body threshold, so the walk is tried
    for known in (RAW_ITEM, _deep(63), _deep(64), None):
        cache = ItemCache()
        if known is not None:  # an earlier call of t1 sent it (remembered only if the rule accepted it)
            outcome(decode_request, _prefix() + b',"item":' + known + b"}" + b" " * 2048, cache)
        assert (cache.get("t1") is not None) == (known is not None and known != _deep(64))
        assert outcome(via_reuse, raw, cache) == outcome(decode_object, raw), (case, known)


def test_a_known_item_is_not_decoded_or_checked_again(monkeypatch):
    """The second call of a rollout passes only the body around the item to the rule."""
    item = {"messages": [{"role": "user", "content": "x" * 20_000}]}
    raw = body(item, {"separators": (",", ":")}, 6)
    cache = ItemCache()
    seen: list[int] = []
    real, real_accepts = _json.loads_strict, _json.accepts
    monkeypatch.setattr("rft_sdk._wire._hosted_body.loads_strict", lambda text, *a: seen.append(len(text)) or real(text, *a))
    monkeypatch.setattr("rft_sdk._wire._hosted_body.accepts",
                        lambda text, *a: seen.append(len(text)) or real_accepts(text, *a))
    data, item_json = decode_request(raw, cache)
    assert item_json is not None and json.loads(item_json) == item and max(seen) > 20_000  # first sight: checked
    seen.clear()
    data2, item_json2 = decode_request(raw.replace(b'"c1"', b'"c2"'), cache)
    assert item_json2 is item_json and data2["call_id"] == "c2" and max(seen) < 300  # only the rest: ~200 bytes


def test_trace_id_hint_reads_the_first_unescaped_member():
    assert trace_id_hint(b'{"a":1,"trace_id" : "trace_9f"}') == "trace_9f"
    assert trace_id_hint(b'{"trace_id":"t\\u0031"}') is None  # escaped: no hint (the whole body is decoded)
    assert trace_id_hint(b'{"trace_id":7}') is None and trace_id_hint(b"{}") is None


def test_item_cache_bounds_interns_and_forgets():
    cache = ItemCache(max_bytes=120, max_entries=3)  # items of 38 bytes: three distinct ones fit
    a = cache.put("t1", b'{"a":"' + b"x" * 30 + b'"}')
    b = cache.put("t2", bytes(bytearray(a)))  # equal bytes, another object: the same object is kept
    assert b is a and cache.bytes == len(a) and len(cache) == 2
    cache.put("t3", b'{"b":"' + b"y" * 30 + b'"}')
    cache.put("t4", b'{"c":"' + b"z" * 30 + b'"}')  # a 4th entry: the least recently used (t1) goes
    assert cache.get("t1") is None and cache.get("t2") is a and cache.bytes == 3 * len(a) <= 120
    cache.drop("t2")
    assert cache.bytes == 2 * len(a) and len(cache) == 2  # a's bytes went with its last user
    cache.put("t6", b'{"d":"' + b"w" * 30 + b'"}')
    cache.put("t7", b'{"e":"' + b"v" * 30 + b'"}')  # 4 distinct items are over 120 bytes: the oldest goes
    assert cache.get("t3") is None and cache.bytes <= 120
    huge = b'{"h":"' + b"h" * 200 + b'"}'
    assert cache.put("t5", huge) is huge and cache.get("t5") is None  # larger than the bound: not kept


def _depth(value, level=1) -> int:
    if isinstance(value, dict):
        return max([level] + [_depth(v, level + 1) for v in value.values()])
    if isinstance(value, list):
        return max([level] + [_depth(v, level + 1) for v in value])
    return 0


@settings(max_examples=400, deadline=None)
@given(json_values, formats, st.integers(0, 8))
def test_depth_within_agrees_with_the_decoded_depth(value, fmt, limit):
    text = json.dumps(value, **fmt)
    assert depth_within(text.encode(), limit) == (_depth(value) <= limit)
    assert depth_within(text, limit) == (_depth(value) <= limit)


@settings(max_examples=200, deadline=None)
@given(items, st.dictionaries(st.text(max_size=5), json_values, max_size=3), st.text(max_size=8), formats)
def test_a_grade_fingerprint_is_the_same_whether_its_item_was_reused_or_not(item, sample, trace_id, fmt):
    from rft_sdk._server._grade_call import fingerprint

    raw = json.dumps({"sample": sample, "item": item, "trace_id": trace_id}, **fmt).encode() + b" " * 2048
    whole = decode_object(raw)
    cache = ItemCache()
    cache.put(trace_id, json.dumps(item, **fmt).encode())  # bytes a call of the rollout carried
    data, item_json = decode_request(raw, cache)
    assert fingerprint(data, item_json) == fingerprint(whole)


@settings(max_examples=300, deadline=None)
@given(json_values, st.lists(st.tuples(st.integers(0, 200), st.sampled_from(
    [b"\xed\xa0\x80", b"\xff", b'"', b"\\", b"\\ud800", b"[", b"]", b"NaN", b"1e400", b"12345678901234567890123"])),
    max_size=2), st.integers(1, 6), st.booleans())
def test_accepts_is_the_rule_without_its_value(value, edits, limit, accelerated):
    from rft_sdk._wire._json import accepts, loads_strict

    text = json.dumps(value, ensure_ascii=False).encode()
    for at, piece in edits:
        text = text[:at] + piece + text[at:]
    saved = _json.orjson
    if not accelerated:
        _json.orjson = None
    try:
        try:
            loads_strict(text, limit)
            expected = True
        except ValueError:
            expected = False
        assert accepts(text, limit) == expected
    finally:
        _json.orjson = saved
