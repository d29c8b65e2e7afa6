"""Turn a pydantic JSON Schema into one the models that RFT produces accept under strict function calling.

Rules applied (OpenAI "Structured model outputs" guide, sections "Supported
schemas" and "Some type-specific keywords are not yet supported"; Azure OpenAI
"Structured outputs" how-to, "JSON Schema support and limitations", which
states the same subset): every object has ``additionalProperties: false`` and
lists *all* its properties in ``required``; a parameter that has a default
becomes nullable instead of optional (``null`` is mapped back to the default by
the server); ``title``/``default`` and the unsupported ``uniqueItems`` (sets:
the server still de-duplicates) and ``discriminator`` keywords are dropped;
``oneOf`` (pydantic's discriminated unions) becomes ``anyOf``; a ``$ref``
never has sibling keywords (strict mode refuses ``{"$ref", "description"}``,
so it becomes ``{"anyOf": [{"$ref"}], "description"}``); schemas that strict
mode cannot express (free-form dicts, ``Any``, tuples' ``prefixItems``,
``allOf``/``not``) are rejected.

**Only the keywords fine-tuned models support are emitted** (:data:`EMITTED_KEYWORDS`).
A reinforcement fine-tuning job produces a fine-tuned model, and that model is
what calls these tools in production. OpenAI's guide lists the keywords "not
yet supported for fine-tuned models" — ``minLength``, ``maxLength``,
``pattern``, ``format``, ``minimum``, ``maximum``, ``multipleOf``,
``patternProperties``, ``minItems``, ``maxItems`` — and Azure's how-to refuses
the same ones (plus ``minProperties``, ``maxProperties``, ``propertyNames``,
``unevaluated*``, ``contains``, ``uniqueItems``) for every model. Such a
constraint is therefore moved out of the schema into the node's
``description`` (``"Constraints (checked by the server): at least 1
character."``), so the model still learns it, and the server still enforces it:
the tool's pydantic arguments model keeps every constraint, and a call that
breaks one answers 422 naming the field.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

__all__ = ["CONSTRAINT_KEYWORDS", "EMITTED_KEYWORDS", "TYPED_DICT", "StrictSchemaError", "make_nullable", "strictify"]

#: The TypedDict pydantic accepts on this Python: ``typing.TypedDict`` from 3.12, else
#: ``typing_extensions.TypedDict`` (pydantic refuses ``typing.TypedDict`` before 3.12, error
#: ``typed-dict-version``: https://errors.pydantic.dev/latest/u/typed-dict-version).
TYPED_DICT = "typing.TypedDict" if sys.version_info >= (3, 12) else "typing_extensions.TypedDict"

_DROP = ("title", "default", "uniqueItems", "discriminator", "examples", "$schema", "$id", "$comment",
         "deprecated", "readOnly", "writeOnly", "contentEncoding", "contentMediaType")
_REFUSED = {
    "prefixItems": "fixed-length tuple cannot be expressed in strict mode; use list[...] or a pydantic model",
    "allOf": "allOf cannot be expressed in strict mode",
    "not": "not cannot be expressed in strict mode",
}
#: Every keyword a schema written by this module may contain (both targets' fine-tuned models accept them).
EMITTED_KEYWORDS = frozenset({"type", "description", "properties", "required", "additionalProperties", "items",
                              "enum", "const", "anyOf", "$ref", "$defs"})
#: Value constraints fine-tuned models do not support: moved into ``description``, enforced by the server.
CONSTRAINT_KEYWORDS = ("minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
                       "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "minProperties", "maxProperties")
#: ``format`` values that say nothing to the model (pydantic's ``bytes`` is any string, encoded as UTF-8).
_SILENT_FORMATS = frozenset({"binary"})
_FORMAT_WORDS = {"date-time": "an ISO 8601 date-time, e.g. 2025-01-31T13:45:00Z",
                 "date": "an ISO 8601 date, e.g. 2025-01-31", "time": "an ISO 8601 time, e.g. 13:45:00",
                 "duration": "an ISO 8601 duration, e.g. P3DT4H", "email": "an email address",
                 "uuid": "a UUID", "uri": "a URI", "ipv4": "an IPv4 address", "ipv6": "an IPv6 address",
                 "hostname": "a host name"}
_PREFIX = "Constraints (checked by the server): "


class StrictSchemaError(ValueError):
    """A (sub)schema cannot be expressed in strict mode; ``args[0]`` says why."""


def strictify(schema: dict[str, Any], where: str) -> dict[str, Any]:
    """Return a strict copy of ``schema`` (a JSON Schema dict; ``$defs`` kept) that uses only
    :data:`EMITTED_KEYWORDS`; value constraints are described in ``description`` instead.

    Args:
        schema: JSON Schema from pydantic.
        where: human-readable location used in error messages.

    Raises:
        StrictSchemaError: free-form object, untyped (``Any``) schema, tuple,
            ``allOf`` or ``not``.
    """
    strict: dict[str, Any] = _walk(copy.deepcopy(schema), where)
    return strict


def _number(value: Any) -> str:
    return json.dumps(value)


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _constraint_notes(node: dict[str, Any]) -> list[str]:
    """Pop every value constraint of ``node`` and say it in words (in :data:`CONSTRAINT_KEYWORDS` order)."""
    notes: list[str] = []
    words = {
        "minLength": lambda v: f"at least {_plural(v, 'character')}",
        "maxLength": lambda v: f"at most {_plural(v, 'character')}",
        "pattern": lambda v: f"matches the regular expression {v}",
        "format": lambda v: _FORMAT_WORDS.get(v, f"format {v}"),
        "minimum": lambda v: f">= {_number(v)}",
        "maximum": lambda v: f"<= {_number(v)}",
        "exclusiveMinimum": lambda v: f"> {_number(v)}",
        "exclusiveMaximum": lambda v: f"< {_number(v)}",
        "multipleOf": lambda v: f"a multiple of {_number(v)}",
        "minItems": lambda v: f"at least {_plural(v, 'item')}",
        "maxItems": lambda v: f"at most {_plural(v, 'item')}",
        "minProperties": lambda v: f"at least {_plural(v, 'property')}",
        "maxProperties": lambda v: f"at most {_plural(v, 'property')}",
    }
    for key in CONSTRAINT_KEYWORDS:
        if key not in node:
            continue
        value = node.pop(key)
        if key == "format" and value in _SILENT_FORMATS:
            continue
        notes.append(words[key](value))
    return notes


def _describe(node: dict[str, Any], notes: list[str]) -> None:
    if not notes:
        return
    text = _PREFIX + "; ".join(notes) + "."
    described = node.get("description")
    node["description"] = f"{described.rstrip()} {text}" if described else text


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
    notes = _constraint_notes(node)
    if "$defs" in node:
        node["$defs"] = {name: _walk(sub, f"{where} -> {name}") for name, sub in node["$defs"].items()}
    if node.get("type") == "object" or "properties" in node:
        extra = node.get("additionalProperties")
        if "properties" not in node or isinstance(extra, dict) or extra is True:
            raise StrictSchemaError(
                f"{where}: free-form object (dict/mapping) cannot be expressed in strict mode; "
                f"use a pydantic model or {TYPED_DICT} with named fields"
            )
        node["properties"] = {
            name: _walk(sub, f"{where}.{name}") for name, sub in node["properties"].items()
        }
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        node["items"] = _walk(node["items"], f"{where}[]")
    if "anyOf" in node:
        branches = []
        for sub in node["anyOf"]:
            # a scalar branch's constraints (Optional[int] with ge=1) are said once, on the parameter
            if isinstance(sub, dict) and "properties" not in sub and "$ref" not in sub:
                notes += _constraint_notes(sub)
            branches.append(_walk(sub, where))
        node["anyOf"] = branches
    _describe(node, notes)
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
