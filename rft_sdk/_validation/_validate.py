"""Dataset checks by the hosted rules of one target, before anything is uploaded (``rft validate``).

Every finding names the line, the field and the fix. The rules, and where each
comes from:

* **Lines** (``docs/hosted-protocol.md`` §2): one JSON object per line, at least
  10 lines, ``messages`` a non-empty list of ``{"role", "content"}`` with roles
  ``system|developer|user|assistant|tool``; a ``content`` is a string or a list
  of parts, each an object with a string ``type`` (a ``text`` part with a
  string ``text``: the chat-completions content parts). The model writes the answer, so the
  last message must not be ``assistant`` or ``tool`` (Azure's RFT how-to,
  "Training & evaluation file formation requirements": "The final message must
  be from the user, not the assistant"); Azure also says "System messages
  aren't supported" (a warning: its agentic preview may differ) and takes at most
  50,000 training lines.
* **Tools** (§2): ``{"type": "function", "function": {"name", "description",
  "parameters", "strict": true}}``; names ``^[A-Za-z0-9_-]{1,64}$``, unique per line.
* **Strict schemas, recursively** (OpenAI "Structured model outputs" guide,
  "Supported schemas"): the root is an object (never ``anyOf``); every object,
  nested ones included, has ``additionalProperties: false`` and lists all its
  properties in ``required``; ``$ref`` targets exist.
* **Keyword subset** (:data:`TARGET_RULES`): composition keywords (``allOf``,
  ``not``, ``if``/``then``/``else``, ``dependent*``) are refused by strict mode;
  the value constraints are "not yet supported for fine-tuned models" (OpenAI,
  same guide, "Some type-specific keywords are not yet supported") and not
  supported at all on Azure (Azure OpenAI "Structured outputs" how-to); a
  reinforcement job's output is a fine-tuned model that will be called with these
  tools, so both are errors. Size limits: OpenAI 5,000 object properties, 10
  levels, 1,000 enum values, 120,000 characters of names and values; Azure 100
  properties and 5 levels (same sources).

Live checks against a server's ``GET /tools`` are in ``_validate_live``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._definitions._names import NAME_RE as _NAME_RE
from .._definitions._schema import CONSTRAINT_KEYWORDS, EMITTED_KEYWORDS
from .._jobs._config import TARGETS
from ._report import Finding, Report, Severity

__all__ = ["MIN_LINES", "TARGET_RULES", "Finding", "Report", "Severity", "TargetRules", "check_lines",
           "read_dataset", "schema_problems"]

#: Fewest lines a dataset file may have (hosted protocol §2).
MIN_LINES = 10
ROLES = ("system", "developer", "user", "assistant", "tool")
_ANNOTATIONS = frozenset({"title", "$comment", "examples", "definitions"})
_REGENERATE = "regenerate the line's tools with `rft tools MODULE:ATTR` (the SDK writes strict, supported schemas)"


@dataclass(frozen=True)
class TargetRules:
    """What one hosted target accepts (sources in the module docstring).

    Attributes:
        target: ``"openai"`` or ``"azure"``.
        refused: JSON Schema keyword → why the target refuses it.
        max_properties / max_depth / max_enum_values / max_schema_chars: strict-mode size limits.
        system_role: whether ``system`` messages are documented as supported.
        final_roles: roles the last message may have.
        max_lines: most lines of a training file (``None``: not documented).
    """

    target: str
    refused: Mapping[str, str]
    max_properties: int
    max_depth: int
    max_enum_values: int
    max_schema_chars: int
    system_role: bool
    final_roles: frozenset[str]
    max_lines: int | None = None


_COMPOSITION = dict.fromkeys(("allOf", "not", "dependentRequired", "dependentSchemas", "if", "then", "else"),
                             "is not supported in strict mode (OpenAI structured outputs guide)")
_FINE_TUNED = dict.fromkeys(("minLength", "maxLength", "pattern", "format", "minimum", "maximum", "multipleOf",
                             "patternProperties", "minItems", "maxItems"),
                            "is not supported by fine-tuned models, and the model this job produces will call "
                            "this tool (OpenAI structured outputs guide)")
_AZURE = dict.fromkeys((*_FINE_TUNED, "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
                        "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems"),
                       "is not supported by Azure OpenAI structured outputs")
#: Per-target rules, by target name.
TARGET_RULES: dict[str, TargetRules] = {
    "openai": TargetRules("openai", {**_COMPOSITION, **_FINE_TUNED}, 5000, 10, 1000, 120_000, True,
                          frozenset({"user", "developer", "system"})),
    "azure": TargetRules("azure", {**_COMPOSITION, **_AZURE}, 100, 5, 500, 15_000, False,
                         frozenset({"user"}), max_lines=50_000),
}


def read_dataset(path: str | Path, report: Report) -> list[Any]:
    """The decoded lines of a JSONL file; unreadable files, blank lines and invalid JSON are errors
    in ``report`` (such a line is decoded as ``None`` and skipped by :func:`check_lines`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report.add("error", None, "<file>", f"cannot read: {exc}", "check the path; the file must be UTF-8 JSONL")
        return []
    items: list[Any] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            report.add("error", lineno, "<line>", "empty line (the service counts lines)", "remove the blank line")
            items.append(None)
            continue
        try:
            items.append(json.loads(raw))
        except json.JSONDecodeError as exc:
            report.add("error", lineno, "<line>", f"invalid JSON at column {exc.colno}: {exc.msg}",
                       "write one JSON object per line")
            items.append(None)
    return items


def check_lines(items: Iterable[Any], report: Report, *, job_tools: Iterable[str] | None = None,
                min_lines: int = MIN_LINES) -> None:
    """Check decoded dataset lines (``None`` entries: lines already reported unreadable) into ``report``.

    Args:
        job_tools: the job's tool names; a line offering another tool is an error. ``None``: not checked.
        min_lines: fewest lines (hosted rule: 10).

    Raises:
        ValueError: ``report.target`` is not a known target.
    """
    if report.target not in TARGET_RULES:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {report.target!r}")
    rules = TARGET_RULES[report.target]
    items = list(items)
    report.lines = len(items)
    allowed = set(job_tools) if job_tools is not None else None
    if len(items) < min_lines:
        report.add("error", None, "<file>", f"has {len(items)} lines; at least {min_lines} are required",
                   "add lines (the hosted service refuses smaller files)")
    if rules.max_lines is not None and len(items) > rules.max_lines:
        report.add("error", None, "<file>", f"has {len(items)} lines; {rules.target} takes at most {rules.max_lines:,}",
                   "split the data or sample it down")
    for lineno, item in enumerate(items, start=1):
        if item is None:
            continue
        if not isinstance(item, dict):
            report.add("error", lineno, "<line>", f"must be a JSON object, got {type(item).__name__}",
                       'write {"messages": [...], "tools": [...], ...} on each line')
            continue
        _check_messages(item.get("messages"), lineno, rules, report)
        _check_tools(item.get("tools"), lineno, rules, allowed, report)


def _check_messages(messages: Any, lineno: int, rules: TargetRules, report: Report) -> None:
    if not isinstance(messages, list) or not messages:
        report.add("error", lineno, "messages", "required: a non-empty list of chat messages",
                   'add "messages": [{"role": "user", "content": "..."}]')
        return
    for i, msg in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(msg, dict):
            report.add("error", lineno, where, "must be an object with role and content",
                       '{"role": "user", "content": "..."}')
            continue
        role = msg.get("role")
        if role not in ROLES:
            report.add("error", lineno, f"{where}.role", f"{role!r} is not a chat role", f"use one of {list(ROLES)}")
        elif role == "system" and not rules.system_role:
            report.add("warning", lineno, f"{where}.role", f"{rules.target}'s RFT how-to says system messages "
                       "aren't supported", "use role 'developer', or put the instructions in the user message")
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            report.add("error", lineno, f"{where}.content", f"must be a string or a list of parts, got "
                       f"{type(content).__name__}", "write the text as a string")
        for k, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str) \
                    or (part["type"] == "text" and not isinstance(part.get("text"), str)):
                report.add("error", lineno, f"{where}.content.{k}", "a part must be an object with a string "
                           f"\"type\" (a text part with a string \"text\"), got {json.dumps(part)[:60]}",
                           'write {"type": "text", "text": "..."}, or the whole content as a string')
    last = messages[-1].get("role") if isinstance(messages[-1], dict) else None
    if last in ROLES and last not in rules.final_roles:
        why = ("the model writes the answer in RFT, so a line ending with the answer is an SFT line"
               if last == "assistant" else f"{rules.target} requires the last message to be from the user")
        report.add("error", lineno, f"messages.{len(messages) - 1}.role", f"the last message is {last!r}: {why}",
                   'end the line with the user turn; keep a reference answer in its own field (e.g. '
                   '"reference_answer"), which reaches the grader as item')


def _check_tools(tools: Any, lineno: int, rules: TargetRules, allowed: set[str] | None, report: Report) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        report.add("error", lineno, "tools", "must be a list of function tools", _REGENERATE)
        return
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        base = f"tools.{i}"
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            report.add("error", lineno, base, 'must be {"type": "function", "function": {"name", "description", '
                       '"parameters", "strict": true}} (chat-completions format)', _REGENERATE)
            continue
        name = fn.get("name")
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            report.add("error", lineno, f"{base}.function.name", f"{name!r} must match ^[A-Za-z0-9_-]{{1,64}}$",
                       "rename the tool (letters, digits, '_' and '-', at most 64)")
        elif name in seen:
            report.add("error", lineno, f"{base}.function.name", f"tool {name!r} is declared twice on this line",
                       "keep one definition per tool")
        else:
            seen.add(name)
            if allowed is not None and name not in allowed:
                report.add("error", lineno, f"{base}.function.name", f"tool {name!r} is not one of the job's "
                           f"tools {sorted(allowed)}: its calls have no URL", "add it to the job or drop it here")
        strict = fn.get("strict")
        if strict is not True:
            report.add("warning", lineno, f"{base}.function.strict", f"is {strict!r}: without strict mode the model "
                       "may send arguments that do not match the schema", 'set "strict": true (' + _REGENERATE + ")")
        params = fn.get("parameters", {"type": "object", "properties": {}})
        for severity, suffix, message, fix in schema_problems(params, rules.target, strict is True):
            report.add(severity, lineno, f"{base}.function.parameters{suffix}", message, fix)


def schema_problems(params: Any, target: str, strict: bool = True) -> tuple[tuple[Severity, str, str, str], ...]:
    """Problems of one tool's ``parameters`` for ``target``: ``(severity, field suffix, message, fix)``.

    Each distinct ``(parameters, target, strict)`` is checked once per process: a dataset repeats the
    same few definitions on every line.
    """
    try:
        key = json.dumps(params, sort_keys=True)
    except (TypeError, ValueError):
        return _schema_problems(params, target, strict)
    return _cached_problems(key, target, strict)


@functools.lru_cache(maxsize=1024)
def _cached_problems(params_json: str, target: str, strict: bool) -> tuple[tuple[Severity, str, str, str], ...]:
    return _schema_problems(json.loads(params_json), target, strict)


def _schema_problems(params: Any, target: str, strict: bool) -> tuple[tuple[Severity, str, str, str], ...]:
    rules = TARGET_RULES[target]
    out: list[tuple[Severity, str, str, str]] = []
    if not isinstance(params, dict):
        return (("error", "", "must be a JSON Schema object", _REGENERATE),)
    meta = _meta_schema_problem(params)
    if meta:
        out.append(("error", meta[0], f"invalid JSON Schema: {meta[1]}", _REGENERATE))
    if params.get("type") != "object" or "anyOf" in params:
        out.append(("error", ".type", "the root must be an object (never anyOf)", _REGENERATE))
    defs = {**params.get("definitions", {}), **params.get("$defs", {})}
    totals = {"properties": 0, "enum": 0, "chars": 0, "depth": 0}
    _walk(params, "", 1, strict, rules, defs, totals, out)
    if totals["properties"] > rules.max_properties:
        out.append(("error", "", f"{totals['properties']} object properties; {target} allows {rules.max_properties}",
                    "split the tool or flatten the arguments"))
    if totals["depth"] > rules.max_depth:
        out.append(("error", "", f"objects nested {totals['depth']} levels deep; {target} allows {rules.max_depth}",
                    "flatten the arguments"))
    if totals["enum"] > rules.max_enum_values:
        out.append(("error", "", f"{totals['enum']} enum values; {target} allows {rules.max_enum_values}",
                    "use a string parameter checked by the server"))
    if totals["chars"] > rules.max_schema_chars:
        out.append(("error", "", f"{totals['chars']} characters of property names and enum/const values; "
                    f"{target} allows {rules.max_schema_chars:,}", "shorten names or enums"))
    return tuple(out)


def _walk(node: Any, path: str, depth: int, strict: bool, rules: TargetRules, defs: Mapping[str, Any],
          totals: dict[str, int], out: list[tuple[Severity, str, str, str]]) -> None:
    if not isinstance(node, dict):
        return
    for key in node:
        if key in rules.refused:
            moved = key in CONSTRAINT_KEYWORDS
            fix = ("drop it and say the constraint in the description; check it in the tool (the SDK does both)"
                   if moved else "express it with anyOf, or check it in the tool")
            out.append(("error", f"{path}.{key}", f"{key!r} {rules.refused[key]}", fix))
        elif key == "default":
            out.append(("warning", f"{path}.default", "strict mode has no defaults: the model always sends a value",
                        "make the parameter nullable and let the server map null to the default"))
        elif key not in EMITTED_KEYWORDS and key not in _ANNOTATIONS and key not in CONSTRAINT_KEYWORDS:
            out.append(("warning", f"{path}.{key}", f"{key!r} is not in the strict-mode subset", _REGENERATE))
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if ref != "#" and not (ref.startswith(("#/$defs/", "#/definitions/")) and name in defs):
            out.append(("error", f"{path}.$ref", f"{ref!r} points at no definition", _REGENERATE))
    if isinstance(node.get("enum"), list):
        totals["enum"] += len(node["enum"])
        totals["chars"] += sum(len(str(v)) for v in node["enum"])
    if "const" in node:
        totals["chars"] += len(str(node["const"]))
    props = node.get("properties")
    if node.get("type") == "object" or isinstance(props, dict):
        totals["depth"] = max(totals["depth"], depth)
        props = props if isinstance(props, dict) else {}
        totals["properties"] += len(props)
        totals["chars"] += sum(len(p) for p in props)
        if strict:
            if node.get("additionalProperties") is not False:
                out.append(("error", f"{path}.additionalProperties" if path else ".additionalProperties",
                            "must be false on every object when strict is true (nested objects too)", _REGENERATE))
            missing = [p for p in props if p not in (node.get("required") or [])]
            if missing:
                out.append(("error", f"{path}.required", f"strict mode needs every property in required; "
                            f"missing {missing}", "list them all; make optional ones nullable (type [T, \"null\"])"))
        for name, sub in props.items():
            _walk(sub, f"{path}.properties.{name}", depth + 1, strict, rules, defs, totals, out)
    if isinstance(node.get("items"), dict):
        _walk(node["items"], f"{path}.items", depth, strict, rules, defs, totals, out)
    for i, sub in enumerate(node.get("anyOf") or []):
        _walk(sub, f"{path}.anyOf.{i}", depth, strict, rules, defs, totals, out)
    for key in ("$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            _walk(sub, f"{path}.{key}.{name}", depth, strict, rules, defs, totals, out)


def _meta_schema_problem(params: dict[str, Any]) -> tuple[str, str] | None:
    """``(field suffix, message)`` when ``params`` is not valid JSON Schema (draft 2020-12); checked with
    ``jsonschema`` when installed (the ``emulate`` extra), else only by the structural rules above."""
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
    except ImportError:
        return None
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as exc:
        where = "".join(f".{p}" for p in exc.path)
        return where, exc.message
    return None
