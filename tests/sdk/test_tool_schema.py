"""Schema derivation at decoration: strict-mode rules and definition errors."""

from __future__ import annotations

from typing import Any, Literal, Optional

import pydantic
import pytest

from rft_sdk import Rollout, ToolDefinitionError, ToolServer, tool
from rft_sdk._tool import get_tool_definition


def _walk_objects(schema):
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for value in schema.values():
            yield from _walk_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk_objects(value)


class Address(pydantic.BaseModel):
    street: str
    zip_code: str = "00000"


def test_strict_schema_shape_and_docstring():
    @tool
    def search(query: str, top_k: int = 3, mode: Literal["fast", "exact"] = "fast",
               address: Optional[Address] = None, *, rollout: Rollout) -> list:
        """Search the catalogue.

        More details here.

        Args:
            query: Free text.
            top_k: How many hits.
        """
        return []

    d = get_tool_definition(search)
    p = d.parameters
    assert d.description == "Search the catalogue.\n\nMore details here."
    assert set(p["properties"]) == {"query", "top_k", "mode", "address"}  # rollout not in schema
    assert p["required"] == ["query", "top_k", "mode", "address"]
    assert p["properties"]["query"] == {"type": "string", "description": "Free text."}
    assert p["properties"]["top_k"] == {"type": ["integer", "null"], "description": "How many hits."}
    assert p["properties"]["mode"]["enum"] == ["fast", "exact", None]
    for obj in _walk_objects(p):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert "default" not in str(p) and "title" not in str(p)
    assert search("x", rollout=None) == []  # function returned unchanged


def test_decorator_options_and_formats():
    @tool(name="lookup-v2", description="Look things up.")
    def lookup(key: str) -> str:
        return key

    server = ToolServer(tools=[lookup], auth_env_var=None)
    (cc,) = server.dataset_tools("chat_completions")
    (rs,) = server.dataset_tools("responses")
    assert cc["type"] == "function" and cc["function"]["name"] == "lookup-v2" and cc["function"]["strict"] is True
    assert rs == {"type": "function", **cc["function"]}
    with pytest.raises(ValueError):
        server.dataset_tools("xml")


@pytest.mark.parametrize(
    "source, param",
    [
        ("def f(*args: int) -> str: ...", "args"),
        ("def f(**kw: int) -> str: ...", "kw"),
        ("def f(a: int, /) -> str: ...", "a"),
        ("def f(a) -> str: ...", "a"),
        ("def f(a: dict[str, int]) -> str: ...", "a"),
        ("def f(a: Any) -> str: ...", "a"),
        ("def f(a: object) -> str: ...", "a"),
    ],
)
def test_unsupported_signatures_fail_at_decoration(source, param):
    namespace: dict = {"Any": Any}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError) as info:
        tool(namespace["f"])
    message = str(info.value)
    assert "f" in message and repr(param) in message


def test_duplicate_and_bad_names():
    def a(x: int) -> int:
        return x

    server = ToolServer(tools=[a], auth_env_var=None)
    with pytest.raises(ToolDefinitionError, match="duplicate"):
        server.add_tool(a)
    with pytest.raises(ToolDefinitionError, match="name"):
        tool(name="has space")(a)
