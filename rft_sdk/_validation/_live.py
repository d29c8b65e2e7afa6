"""The dataset's tools against the server's own: ``GET /tools`` fetched live, or a ``ToolServer`` in process.

A dataset line declares each tool's schema to the model; the server validates
what the model sends against *its* schema. When the two drift (a parameter
renamed ``country`` on the server, still ``nation`` in the dataset), every call
of that tool answers 422 and the run learns nothing from it. This module diffs
them, tool by tool, parameter by parameter, recursively: names, JSON types,
``required``, ``enum`` values. The rules:

* a dataset tool the server does not serve → error (its calls answer 404);
* a dataset parameter the server lacks → error (the server forbids unknown
  keys: 422); the nearest server name is suggested;
* a server parameter the dataset lacks → error when the server needs a value
  (required and not nullable), else a warning (the model can never set it);
* a type the model may send that the server does not accept → error (an
  ``integer`` sent where the server takes ``number`` is fine);
* an ``enum`` value the dataset offers that the server refuses → error.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

import httpx

from ._validate import Report, Severity

__all__ = ["diff_line_tools", "diff_tool", "fetch_tools", "server_tools_of"]

_FIX = "regenerate the dataset's tools from the server: `rft tools MODULE:ATTR` (or GET /tools)"


def server_tools_of(app: Any) -> dict[str, dict[str, Any]]:
    """``{name: function spec}`` of a ``ToolServer`` (what its ``GET /tools`` answers), in process."""
    return {t["function"]["name"]: t["function"] for t in app.dataset_tools("chat_completions")}


def fetch_tools(base_url: str, headers: Mapping[str, str] | None = None, *, timeout_s: float = 10.0,
                transport: httpx.BaseTransport | None = None) -> tuple[dict[str, dict[str, Any]] | None, str | None]:
    """``GET {base_url}/tools`` → ``({name: function spec}, None)``, or ``(None, why)`` when it fails.

    ``why`` starts with ``"unreachable"`` (no answer), ``"unauthorized"`` (401/403: the headers
    are refused) or ``"unsupported"`` (another status or body: not an rft-sdk server).
    """
    url = base_url.rstrip("/") + "/tools"
    try:
        with httpx.Client(transport=transport, timeout=timeout_s) as client:
            resp = client.get(url, headers=dict(headers or {}))
    except httpx.HTTPError as exc:
        return None, f"unreachable: GET {url}: {type(exc).__name__}: {exc}"
    if resp.status_code in (401, 403):
        return None, f"unauthorized: GET {url} answered {resp.status_code}"
    try:
        body = resp.json()
        tools = body["tools"] if resp.status_code == 200 else None
        found = {t["function"]["name"]: t["function"] for t in tools} if isinstance(tools, list) else None
    except (ValueError, KeyError, TypeError):
        found = None
    if found is None:
        return None, f"unsupported: GET {url} answered {resp.status_code} without a tools list"
    return found, None


def diff_line_tools(items: list[Any], server: Mapping[str, Mapping[str, Any]], report: Report) -> None:
    """Diff every line's ``tools`` against ``server`` (``{name: function spec}``) into ``report``;
    also warn once for a served tool that no line offers."""
    offered: set[str] = set()
    seen: dict[str, list[tuple[Severity, str, str, str]]] = {}  # lines repeat the same few definitions
    for lineno, item in enumerate(items, start=1):
        tools = item.get("tools") if isinstance(item, dict) else None
        if isinstance(item, dict) and not tools and server:
            report.add("warning", lineno, "tools", f"the line offers the model no tools, so a hosted model can call "
                       f"none of the server's {len(server)}: it can only answer from the prompt",
                       'add "tools" from `rft tools MODULE:ATTR` (a replay policy may still call them in rft emulate)')
        if not isinstance(tools, list):
            continue
        for i, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                continue
            offered.add(fn["name"])
            try:
                key = json.dumps(fn, sort_keys=True)
            except (TypeError, ValueError):
                key = None
            problems = seen.get(key) if key is not None else None
            if problems is None:
                problems = diff_tool(fn, server)
                if key is not None:
                    seen[key] = problems
            for severity, suffix, message, fix in problems:
                report.add(severity, lineno, f"tools.{i}.function{suffix}", message, fix)
    for name in sorted(set(server) - offered):
        if items:
            report.add("warning", None, "tools", f"the server serves {name!r} but no line offers it to the model",
                       "add it to the lines' tools if the model should use it")


def diff_tool(line_fn: Mapping[str, Any], server: Mapping[str, Mapping[str, Any]]
              ) -> list[tuple[Severity, str, str, str]]:
    """Problems of one dataset tool (its ``function`` object) against the server's tools:
    ``(severity, field suffix, message, fix)``."""
    name = line_fn["name"]
    if name not in server:
        near = difflib.get_close_matches(name, list(server), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return [("error", ".name", f"the server has no tool {name!r}{hint}; it serves {sorted(server)}: every call "
                 "answers 404", _FIX)]
    ours, theirs = line_fn.get("parameters") or {}, server[name].get("parameters") or {}
    out: list[tuple[Severity, str, str, str]] = []
    _diff(ours, theirs, ".parameters", ours, theirs, name, out, set())
    return out


def _resolve(node: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(32):  # a chain of $refs, bounded
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        ref = node["$ref"]
        if ref == "#":
            node = root
            continue
        key = ref.rsplit("/", 1)[-1]
        node = (root.get("$defs") or {}).get(key, (root.get("definitions") or {}).get(key))
    return node


def _branches(node: Any, root: Mapping[str, Any]) -> list[dict[str, Any]]:
    node = _resolve(node, root)
    if not isinstance(node, dict):
        return []
    if isinstance(node.get("anyOf"), list):
        return [b for sub in node["anyOf"] for b in _branches(sub, root)]
    return [node]


def _types(node: Any, root: Mapping[str, Any]) -> set[str]:
    """JSON types a schema accepts (``"any"`` when untyped)."""
    out: set[str] = set()
    for b in _branches(node, root):
        kind = b.get("type")
        if isinstance(kind, str):
            out.add(kind)
        elif isinstance(kind, list):
            out.update(k for k in kind if isinstance(k, str))
        elif "enum" in b or "const" in b:
            values = b.get("enum", [b.get("const")])
            out.update(_json_type(v) for v in values)
        elif "properties" in b:
            out.add("object")
        else:
            out.add("any")
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "any"


def _enum(node: Any, root: Mapping[str, Any]) -> list[Any] | None:
    values: list[Any] = []
    for b in _branches(node, root):
        if "enum" in b:
            values += b["enum"]
        elif "const" in b:
            values.append(b["const"])
        elif b.get("type") != "null":
            return None  # some branch takes any value of its type
    return values


def _object(node: Any, root: Mapping[str, Any]) -> dict[str, Any] | None:
    for b in _branches(node, root):
        if isinstance(b.get("properties"), dict):
            return b
    return None


def _diff(ours: Any, theirs: Any, path: str, our_root: Mapping[str, Any], their_root: Mapping[str, Any],
          tool: str, out: list[tuple[Severity, str, str, str]], seen: set[tuple[int, int]]) -> None:
    pair = (id(_resolve(ours, our_root)), id(_resolve(theirs, their_root)))
    if pair in seen:  # recursive schemas
        return
    seen.add(pair)
    sent, taken = _types(ours, our_root), _types(theirs, their_root)
    if "any" not in taken:
        extra = {t for t in sent - taken if not (t == "integer" and "number" in taken)}
        if extra:
            out.append(("error", path, f"the dataset lets the model send {sorted(extra)} but the server's {tool!r} "
                        f"takes {sorted(taken)}: such calls answer 422", _FIX))
    our_enum, their_enum = _enum(ours, our_root), _enum(theirs, their_root)
    if our_enum is not None and their_enum is not None:
        refused = [v for v in our_enum if v not in their_enum]
        if refused:
            out.append(("error", f"{path}.enum", f"values {refused} are offered to the model but the server's "
                        f"{tool!r} accepts only {their_enum}", _FIX))
    our_obj, their_obj = _object(ours, our_root), _object(theirs, their_root)
    if our_obj is not None and their_obj is not None:
        _diff_properties(our_obj, their_obj, path, our_root, their_root, tool, out, seen)
    our_items, their_items = _items(ours, our_root), _items(theirs, their_root)
    if our_items is not None and their_items is not None:
        _diff(our_items, their_items, f"{path}.items", our_root, their_root, tool, out, seen)


def _items(node: Any, root: Mapping[str, Any]) -> Any:
    for b in _branches(node, root):
        if isinstance(b.get("items"), dict):
            return b["items"]
    return None


def _diff_properties(ours: dict[str, Any], theirs: dict[str, Any], path: str, our_root: Mapping[str, Any],
                     their_root: Mapping[str, Any], tool: str, out: list[tuple[Severity, str, str, str]],
                     seen: set[tuple[int, int]]) -> None:
    our_props, their_props = ours["properties"], theirs["properties"]
    their_required = set(theirs.get("required") or [])
    for name in our_props:
        if name not in their_props:
            near = difflib.get_close_matches(name, list(their_props), n=1, cutoff=0.5)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            out.append(("error", f"{path}.properties.{name}", f"the server's {tool!r} has no parameter {name!r}"
                        f"{hint}; it takes {sorted(their_props)}: every call that sends it answers 422", _FIX))
    for name, sub in their_props.items():
        if name in our_props:
            if name in their_required and "null" not in _types(sub, their_root) \
                    and name not in (ours.get("required") or []):
                out.append(("warning", f"{path}.required", f"{name!r} is optional in the dataset but the server's "
                            f"{tool!r} requires it: calls without it answer 422", _FIX))
            _diff(our_props[name], sub, f"{path}.properties.{name}", our_root, their_root, tool, out, seen)
            continue
        needed = name in their_required and "null" not in _types(sub, their_root)
        severity: Severity = "error" if needed else "warning"
        consequence = ("the model can never send it, so every call answers 422" if needed
                       else "the model can never set it (the server uses its default)")
        out.append((severity, f"{path}.properties", f"the server's {tool!r} takes {name!r} but the dataset does not "
                    f"declare it: {consequence}", _FIX))


