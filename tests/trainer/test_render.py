"""Rendering of conversations and parsing of policy output."""

import json

from rft_sdk.train import ByteTokenizer, format_call, parse_output, render_prompt, render_tools

TOK = ByteTokenizer()
TOOL = {"type": "function", "function": {"name": "get_order_status", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}}}}


def test_single_call_parses_to_wire_shape():
    out = parse_output('<call>get_order_status {"order_id": "#W1"}</call>')
    assert out.content is None
    assert len(out.tool_calls) == 1
    call = out.tool_calls[0]
    assert call["name"] == "get_order_status"
    assert json.loads(call["arguments"]) == {"order_id": "#W1"}
    assert call["id"].startswith("fc_") and call["call_id"].startswith("call_")


def test_parallel_calls_and_surrounding_text():
    out = parse_output('ok <call>a {"x": 1}</call>\n<call>b {}</call> done')
    assert [c["name"] for c in out.tool_calls] == ["a", "b"]
    assert [json.loads(c["arguments"]) for c in out.tool_calls] == [{"x": 1}, {}]
    assert len({c["call_id"] for c in out.tool_calls}) == 2


def test_plain_text_is_final_answer_stripped():
    assert parse_output("  delivered \n").content == "delivered"
    assert parse_output("  delivered \n").tool_calls == []


def test_unparseable_calls_become_final_answers():
    for text in ('<call>get_order_status {"order_id": "#W1"}',  # unclosed
                 '<call>get_order_status {"order_id": </call>',  # bad JSON
                 '<call>get_order_status ["#W1"]</call>',  # not an object
                 '<call>a {}</call><call>b {"x"'):  # one good, one unclosed
        out = parse_output(text)
        assert out.tool_calls == [] and out.content == text.strip(), text


def test_render_chat_conversation_exact_text():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Status of #W1?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "fc_1", "type": "function",
             "function": {"name": "get_order_status", "arguments": '{"order_id":"#W1"}'}}]},
        {"role": "tool", "tool_call_id": "fc_1", "content": "pending"},
    ]
    ids = render_prompt(messages, [TOOL], TOK)
    first = ('T:get_order_status(order_id)\nS:Be brief.\nU:Status of #W1?\n'
             'A:<call>get_order_status {"order_id": "#W1"}</call>')
    expected = [256] + list(first.encode()) + [257] + list(b"R:pending\nA:")
    assert ids == expected


def test_render_responses_items_match_chat_rendering():
    chat = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "1", "function": {"name": "a", "arguments": {"x": 1}}},
                {"id": "2", "function": {"name": "b", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "A"},
            {"role": "tool", "tool_call_id": "2", "content": "B"}]
    responses = [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                 {"type": "function_call", "name": "a", "arguments": '{"x": 1}', "call_id": "1"},
                 {"type": "function_call", "name": "b", "arguments": "{}", "call_id": "2"},
                 {"type": "function_call_output", "call_id": "1", "output": "A"},
                 {"type": "function_call_output", "call_id": "2", "output": "B"}]
    assert render_prompt(chat, [], TOK) == render_prompt(responses, [], TOK)
    text = TOK.decode(render_prompt(chat, [], TOK))
    assert text == 'U:hi\nA:<call>a {"x": 1}</call><call>b {}</call>R:A\nR:B\nA:'


def test_tool_output_truncated_and_tools_line():
    ids = render_prompt([{"role": "tool", "content": "x" * 50}], [], TOK, max_tool_chars=10)
    assert TOK.decode(ids) == "R:" + "x" * 10 + "\nA:"
    assert render_tools([TOOL, {"name": "noargs", "parameters": {}}]) == "T:get_order_status(order_id);noargs()\n"


def test_format_call_roundtrip_through_parser():
    text = format_call("get_order_status", '{"order_id": "#W9"}')
    assert parse_output(text).tool_calls[0]["arguments"] == json.dumps({"order_id": "#W9"})


def test_tokenizer_roundtrip_and_errors():
    assert TOK.decode(TOK.encode("héllo") + [TOK.eos_id]) == "héllo"
    try:
        TOK.decode([999])
    except ValueError as exc:
        assert "999" in str(exc)
    else:
        raise AssertionError("out-of-range id accepted")
