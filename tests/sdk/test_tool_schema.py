"""Schema derivation at decoration: strict-mode rules and definition errors."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import pydantic
import pytest

from rft_sdk import Rollout, ToolDefinitionError, ToolServer, tool
from rft_sdk._definitions._tool import get_tool_definition


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
               address: Address | None = None, *, rollout: Rollout) -> list:
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
    parameters = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"],
                  "additionalProperties": False}
    assert cc == {"type": "function", "function": {"name": "lookup-v2", "description": "Look things up.",
                                                   "parameters": parameters, "strict": True}}
    assert rs == {"type": "function", "name": "lookup-v2", "description": "Look things up.",
                  "parameters": parameters, "strict": True}
    with pytest.raises(ValueError):
        server.dataset_tools("xml")


def test_dataset_tools_names_selects_tools_in_the_servers_order():
    server = ToolServer(auth_env_var=None)

    @server.tool
    def get_book(book_id: str) -> str:
        """Read a book."""
        return book_id

    @server.tool
    def lend_book(book_id: str, member: str) -> str:
        """Lend a book."""
        return member

    @server.tool
    def return_book(loan_id: int) -> str:
        """Return a loan."""
        return str(loan_id)

    def names(tools):
        return [t["function"]["name"] if "function" in t else t["name"] for t in tools]

    assert names(server.dataset_tools()) == ["get_book", "lend_book", "return_book"]
    assert names(server.dataset_tools(names=["return_book", "get_book"])) == ["get_book", "return_book"]
    assert names(server.dataset_tools(names=iter(["lend_book", "lend_book"]))) == ["lend_book"]
    assert names(server.dataset_tools("responses", names=("lend_book",))) == ["lend_book"]
    assert server.dataset_tools("responses", names=["lend_book"])[0]["type"] == "function"
    assert server.dataset_tools(names=[]) == []
    assert server.dataset_tools(names=["get_book"]) == server.dataset_tools()[:1]
    with pytest.raises(ValueError, match=r"no tool named 'lend', 'give' on this server; its tools are "
                                         r"\['get_book', 'lend_book', 'return_book'\]"):
        server.dataset_tools(names=["lend", "get_book", "give"])
    with pytest.raises(TypeError, match=r"not the string 'get_book': pass names=\['get_book'\]"):
        server.dataset_tools(names="get_book")
    with pytest.raises(ValueError, match="fmt must be"):
        server.dataset_tools("xml", names=["get_book"])
    with pytest.raises(ValueError, match="it serves no tool yet"):
        ToolServer(auth_env_var=None).dataset_tools(names=["get_book"])


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
    for bad in ("has space", "abc\n", "x" * 65):  # a trailing newline is refused too (matched whole)
        with pytest.raises(ToolDefinitionError, match="name"):
            tool(name=bad)(a)


# -- strict-mode validity over a variety of signatures ------------------------------------------
_STRICT_UNSUPPORTED = {"default", "title", "uniqueItems", "prefixItems", "allOf", "oneOf", "not",
                       "discriminator", "patternProperties", "propertyNames", "if", "then", "else"}


def _strict_violations(node, path="$"):
    """Hand-written check of the OpenAI strict function-calling rules (structured outputs guide):
    every object closed (additionalProperties false) with all properties required; no $ref
    siblings; no unsupported keywords; every schema typed."""
    found = []
    if isinstance(node, dict):
        if path.count("properties") or path == "$" or "items" in path or "anyOf" in path or "$defs" in path:
            if not any(k in node for k in ("type", "$ref", "anyOf", "enum", "const")) and path != "$.$defs":
                found.append(f"{path}: untyped")
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                found.append(f"{path}: additionalProperties is not false")
            if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
                found.append(f"{path}: required != properties")
        if "$ref" in node and len(node) > 1:
            found.append(f"{path}: $ref has siblings {sorted(set(node) - {'$ref'})}")
        found += [f"{path}: unsupported keyword {k}" for k in _STRICT_UNSUPPORTED & set(node)]
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    found += _strict_violations(sub, f"{path}.{key}.{name}")
            elif key == "items":
                found += _strict_violations(value, f"{path}.items")
            elif key == "anyOf":
                for i, sub in enumerate(value):
                    found += _strict_violations(sub, f"{path}.anyOf[{i}]")
    return found


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Line(pydantic.BaseModel):
    """One order line."""

    sku: str
    qty: int = 1
    tags: list[str] = []


class Order(pydantic.BaseModel):
    lines: list[Line]
    gift: Line | None = None
    colour: Colour = Colour.RED


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    good: bool


def test_variety_of_signatures_is_strict_valid_and_round_trips():
    jsonschema = pytest.importorskip("jsonschema")

    def place(note: str | None, skus: list[str], mode: Literal["fast", "exact"], colour: Colour,
              order: Order, priority: Priority = Priority.LOW, limit: int = 3, ratio: float = 0.5,
              extra: list[Line] | None = None, unique: set[str] = frozenset(), flag: bool = False,
              pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")] = None,
              bounded: Annotated[int, pydantic.Field(ge=0, le=10)] = 5, *, rollout: Rollout) -> str:
        """Place an order.

        Args:
            note: Free text or null.
            order: The order to place.
            pet: A pet (cat or dog).
        """
        return "ok"

    d = get_tool_definition(tool(place))
    p = d.parameters
    assert _strict_violations(p) == []
    jsonschema.Draft202012Validator.check_schema(p)
    # described $ref fields keep their description next to an anyOf, not next to the $ref
    assert p["properties"]["order"] == {"anyOf": [{"$ref": "#/$defs/Order"}], "description": "The order to place."}
    # a value the model may produce under this schema is accepted by the schema and by the server's validator
    sample = {"note": None, "skus": ["A"], "mode": "fast", "colour": "blue",
              "order": {"lines": [{"sku": "A", "qty": 2, "tags": []}], "gift": None, "colour": "red"},
              "priority": None, "limit": None, "ratio": 0.25, "extra": None, "unique": ["x", "x"],
              "flag": None, "pet": {"kind": "dog", "good": True}, "bounded": 10}
    jsonschema.validate(sample, p)
    validated = d.args_model.model_validate({k: v for k, v in sample.items() if not (v is None and k in d.defaults)})
    assert validated.unique == {"x"} and isinstance(validated.pet, Dog)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**sample, "surprise": 1}, p)


def test_tuples_are_refused_with_a_clear_message():
    def f(pair: tuple[int, str]) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"parameter 'pair'.*tuple.*list\[\.\.\.\]"):
        tool(f)


def test_make_nullable_widens_every_schema_form_once():
    from rft_sdk._definitions._schema import make_nullable

    assert make_nullable({"type": "string", "enum": ["a", "b"]}) == {"type": ["string", "null"],
                                                                     "enum": ["a", "b", None]}
    assert make_nullable({"type": ["integer", "string"]}) == {"type": ["integer", "string", "null"]}
    assert make_nullable({"anyOf": [{"type": "integer"}]}) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    ref = {"$ref": "#/$defs/Line", "type": "object"}
    assert make_nullable(ref) == {"anyOf": [ref, {"type": "null"}]}
    assert make_nullable({"anyOf": [{"$ref": "#/$defs/Line"}], "description": "d"}) == {
        "anyOf": [{"$ref": "#/$defs/Line"}, {"type": "null"}], "description": "d"}
    already = {"type": ["string", "null"]}
    assert make_nullable(already) is already


class _FreeForm(pydantic.BaseModel):
    counts: dict[str, int]


class _Wrapper(pydantic.BaseModel):
    inner: _FreeForm


def test_nested_model_refusal_is_a_definition_error_naming_the_parameter():
    """A model reached only through another model's field is checked like a direct one."""
    def f(wrapped: _Wrapper) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"parameter 'wrapped' \(_FreeForm\)\.counts: free-form object"):
        tool(f)
