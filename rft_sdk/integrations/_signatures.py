"""Turn a hosted tool definition (JSON schema) into a Python function TRL can render.

TRL exposes an environment's public methods as tools and renders their schemas
with ``transformers.utils.get_json_schema`` (type hints + a Google-style
docstring). The tools here live on a server and are described by JSON schemas,
so each one becomes a method whose ``__signature__``, ``__annotations__`` and
``__doc__`` say what the schema says; calling it forwards the keyword arguments
unchanged to the server, which validates them (strictly) as in a hosted run.

The mapping (JSON Schema → hint): ``string`` → ``str``, ``integer`` → ``int``,
``number`` → ``float``, ``boolean`` → ``bool``, ``array`` → ``list[<items>]``,
``object`` → ``dict``, ``["T", "null"]`` / ``anyOf`` with ``null`` → ``T | None``;
``enum`` becomes the docstring's ``(choices: [...])`` that ``get_json_schema``
reads back. Finer constraints (patterns, bounds, nested object properties) are
not representable in a Python hint; the model sees the coarser schema, and the
server still enforces the exact one.
"""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Callable
from typing import Any, Optional

__all__ = ["RESERVED_NAMES", "python_type", "schema_method"]

RESERVED_NAMES = frozenset({"reset", "get_reward"})  # TRL's environment hooks, never tools
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python type hint for a JSON schema (see the module docstring for the mapping).

    Raises:
        ValueError: a ``type`` this mapping does not know.
    """
    if "anyOf" in schema:
        members = [s for s in schema["anyOf"] if s.get("type") != "null"]
        hint = python_type(members[0]) if len(members) == 1 else Any
        return Optional[hint] if len(members) < len(schema["anyOf"]) else hint  # noqa: UP045 - built at runtime
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        hint = python_type({**schema, "type": non_null[0]}) if len(non_null) == 1 else Any
        return Optional[hint] if "null" in kind else hint  # noqa: UP045
    if kind == "array":
        return types.GenericAlias(list, (python_type(schema["items"]),)) if schema.get("items") else list
    if kind is None:
        return Any
    if kind not in _SCALARS:
        raise ValueError(f"JSON schema type {kind!r} has no Python equivalent; expected one of "
                         f"{sorted([*_SCALARS, 'array', 'null'])}")
    return _SCALARS[kind]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def schema_method(definition: dict[str, Any], call: Callable[[Any, str, dict[str, Any]], str]) -> Callable[..., str]:
    """A method ``(self, *, <params>) -> str`` for a chat-completions tool definition.

    Args:
        definition: ``{"type": "function", "function": {"name", "description", "parameters"}}``
            (``server.dataset_tools()`` / ``GET /tools``).
        call: ``call(self, name, arguments)``, run with the keyword arguments the model gave.

    Raises:
        ValueError: the tool is named like a TRL hook (``reset``, ``get_reward``), starts
            with ``_``, or its schema uses a type with no Python equivalent.
    """
    function = definition["function"]
    name = function["name"]
    if name in RESERVED_NAMES or name.startswith("_") or not name.isidentifier():
        raise ValueError(f"tool {name!r} cannot be a TRL environment method (reserved, private or not an "
                         "identifier); rename the tool or leave it out with tools=[...]")
    parameters = function.get("parameters") or {}
    properties: dict[str, Any] = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    doc_args = []
    for pname, pschema in properties.items():
        hint = python_type(pschema)
        annotations[pname] = hint
        default = inspect.Parameter.empty if pname in required else None
        params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint, default=default))
        text = _one_line(pschema.get("description") or pname)
        if "enum" in pschema:
            text += f" (choices: {json.dumps(pschema['enum'])})"
        doc_args.append(f"    {pname}: {text}")
    annotations["return"] = str

    def method(self: Any, **arguments: Any) -> str:
        return call(self, name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _one_line(function.get("description") or name) + (
        "\n\nArgs:\n" + "\n".join(doc_args) if doc_args else "")
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return method
