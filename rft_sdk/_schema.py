"""Turn a pydantic JSON Schema into one valid under strict function calling.

Rules applied (OpenAI "Structured Outputs / strict function calling", the
hosted services' tool format): every object has ``additionalProperties:
false`` and lists *all* its properties in ``required``; a parameter that has a
default becomes nullable instead of optional (``null`` is mapped back to the
default by the server); ``title``/``default`` and the unsupported
``uniqueItems`` (sets: the server still de-duplicates) and ``discriminator``
keywords are dropped; ``oneOf`` (pydantic's discriminated unions) becomes
``anyOf``; a ``$ref`` never has sibling keywords (strict mode refuses
``{"$ref", "description"}``, so it becomes ``{"anyOf": [{"$ref"}],
"description"}``); schemas that strict mode cannot express (free-form dicts,
``Any``, tuples' ``prefixItems``, ``allOf``/``not``) are rejected.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["StrictSchemaError", "make_nullable", "strictify"]

_DROP = ("title", "default", "uniqueItems", "discriminator")
_REFUSED = {
    "prefixItems": "fixed-length tuple cannot be expressed in strict mode; use list[...] or a pydantic model",
    "allOf": "allOf cannot be expressed in strict mode",
    "not": "not cannot be expressed in strict mode",
}


class StrictSchemaError(ValueError):
    """A (sub)schema cannot be expressed in strict mode; ``args[0]`` says why."""


def strictify(schema: dict[str, Any], where: str) -> dict[str, Any]:
    """Return a strict copy of ``schema`` (a JSON Schema dict; ``$defs`` kept).

    Args:
        schema: JSON Schema from pydantic.
        where: human-readable location used in error messages.

    Raises:
        StrictSchemaError: free-form object, untyped (``Any``) schema, tuple,
            ``allOf`` or ``not``.
    """
    strict: dict[str, Any] = _walk(copy.deepcopy(schema), where)
    return strict


def _walk(node: Any, where: str) -> Any:
    if not isinstance(node, dict):
        return node
    for key in _DROP:
        node.pop(key, None)
    for key, why in _REFUSED.items():
        if key in node:
            raise StrictSchemaError(f"{where}: {why}")
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    typed = any(k in node for k in ("type", "$ref", "anyOf", "allOf", "oneOf", "enum", "const"))
    if not typed:
        raise StrictSchemaError(f"{where}: untyped value (Any) cannot be expressed in strict mode")
    if "$defs" in node:
        node["$defs"] = {name: _walk(sub, f"{where} -> {name}") for name, sub in node["$defs"].items()}
    if node.get("type") == "object" or "properties" in node:
        extra = node.get("additionalProperties")
        if "properties" not in node or isinstance(extra, dict) or extra is True:
            raise StrictSchemaError(
                f"{where}: free-form object (dict/mapping) cannot be expressed in strict mode; "
                "use a pydantic model or TypedDict with named fields"
            )
        node["properties"] = {
            name: _walk(sub, f"{where}.{name}") for name, sub in node["properties"].items()
        }
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        node["items"] = _walk(node["items"], f"{where}[]")
    if "anyOf" in node:
        node["anyOf"] = [_walk(sub, where) for sub in node["anyOf"]]
    if "$ref" in node and len(node) > 1:
        return {"anyOf": [{"$ref": node.pop("$ref")}], **node}
    return node


def make_nullable(prop: dict[str, Any]) -> dict[str, Any]:
    """Return ``prop`` widened to also accept ``null`` (for defaulted parameters)."""
    if _accepts_null(prop):
        return prop
    out = dict(prop)
    kind = out.get("type")
    if isinstance(kind, list) or (isinstance(kind, str) and "$ref" not in out):
        out["type"] = [*kind, "null"] if isinstance(kind, list) else [kind, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if "anyOf" in out:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    description = out.pop("description", None)
    wrapped: dict[str, Any] = {"anyOf": [out, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


def _accepts_null(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(sub.get("type") == "null" for sub in prop.get("anyOf", []) if isinstance(sub, dict))
