"""Dataset JSONL validation by the hosted rules.

Source: ``docs/hosted-protocol.md`` section 2 ("The dataset"): one JSON
object per line, at least 10 lines, ``messages`` required, per-line ``tools``
in chat-completions function format whose names must match the job-level
tools, ``parameters`` a JSON Schema object. Other fields are free-form and
reach tools and grader as ``item``. Every problem is reported with its
1-based line number and field path; nothing is silently dropped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["DatasetError", "DatasetIssue", "load_dataset", "validate_items"]

MIN_LINES = 10


@dataclass(frozen=True)
class DatasetIssue:
    """One validation problem: 1-based ``line`` (0 = the whole file), dotted ``field`` path, ``message``."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, field {self.field}: {self.message}"


class DatasetError(ValueError):
    """The dataset breaks the hosted rules; ``.issues`` lists every problem found."""

    def __init__(self, issues: list[DatasetIssue], source: str = "dataset") -> None:
        self.issues = issues
        shown = "\n  ".join(str(i) for i in issues[:50])
        more = f"\n  ... and {len(issues) - 50} more" if len(issues) > 50 else ""
        super().__init__(f"{source}: {len(issues)} problem(s):\n  {shown}{more}")


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[Any] | None = None


class _Function(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class _Tool(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: Literal["function"]
    function: _Function


class _Line(BaseModel):
    model_config = ConfigDict(extra="allow")

    messages: list[_Message] = Field(min_length=1)
    tools: list[_Tool] | None = None


def _schema_issues(params: dict[str, Any], strict: bool | None) -> tuple[tuple[str, str], ...]:
    """Problems with one tool's ``parameters``: (field suffix, message).

    Each distinct ``(parameters, strict)`` is checked once per process: a dataset repeats the same few
    tool definitions on every line, and ``check_schema`` dominated validation time (issue #18).
    """
    try:
        key = json.dumps(params, sort_keys=True)
    except (TypeError, ValueError):  # not JSON (items passed in from Python): checked without the cache
        return _check_schema(params, strict)
    return _schema_issues_of(key, strict)


@functools.lru_cache(maxsize=1024)
def _schema_issues_of(params_json: str, strict: bool | None) -> tuple[tuple[str, str], ...]:
    return _check_schema(json.loads(params_json), strict)


def _check_schema(params: dict[str, Any], strict: bool | None) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as exc:
        where = ".".join(str(p) for p in exc.path)
        out.append((f"parameters{'.' + where if where else ''}", f"invalid JSON Schema: {exc.message}"))
        return tuple(out)
    if params.get("type") != "object":
        out.append(("parameters.type", "must be 'object'"))
    props = params.get("properties", {})
    for name in params.get("required", []):
        if name not in props:
            out.append(("parameters.required", f"{name!r} is not in properties"))
    if strict:
        # OpenAI strict function calling: every property required, no extras.
        if params.get("additionalProperties") is not False:
            out.append(("parameters.additionalProperties", "must be false when strict is true"))
        missing = sorted(set(props) - set(params.get("required", [])))
        if missing:
            out.append(("parameters.required", f"strict tools must list every property; missing {missing}"))
    return tuple(out)


def validate_items(
    items: Iterable[Any],
    tool_names: Iterable[str] | None = None,
    *,
    min_lines: int = MIN_LINES,
    source: str = "dataset",
) -> list[dict[str, Any]]:
    """Validate parsed dataset lines by the hosted rules.

    Args:
        items: the decoded lines, in file order (line numbers start at 1).
        tool_names: the job-level tool names; ``None`` skips the name check.
        min_lines: minimum number of lines (hosted rule: 10).
        source: name used in the error message (e.g. the file path).

    Returns:
        The items as plain dicts, unchanged.

    Raises:
        DatasetError: with one :class:`DatasetIssue` per problem (line + field).
    """
    allowed = set(tool_names) if tool_names is not None else None
    items = list(items)
    issues: list[DatasetIssue] = []
    if len(items) < min_lines:
        issues.append(DatasetIssue(0, "<file>", f"has {len(items)} lines; at least {min_lines} required"))
    for lineno, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            issues.append(DatasetIssue(lineno, "<line>", f"must be a JSON object, got {type(item).__name__}"))
            continue
        try:
            line = _Line.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(p) for p in err["loc"]) or "<line>"
                issues.append(DatasetIssue(lineno, field, err["msg"]))
            continue
        for i, tool in enumerate(line.tools or []):
            fn = tool.function
            base = f"tools.{i}.function"
            if allowed is not None and fn.name not in allowed:
                issues.append(DatasetIssue(lineno, f"{base}.name",
                                           f"tool {fn.name!r} is not a job tool (job tools: {sorted(allowed)})"))
            for field, msg in _schema_issues(fn.parameters, fn.strict):
                issues.append(DatasetIssue(lineno, f"{base}.{field}", msg))
    if issues:
        raise DatasetError(issues, source)
    return items


def load_dataset(
    path: str | Path,
    tool_names: Iterable[str] | None = None,
    *,
    min_lines: int = MIN_LINES,
) -> list[dict[str, Any]]:
    """Read and validate a dataset JSONL file (see :func:`validate_items`).

    Blank lines inside the file are errors (the hosted service counts lines);
    a trailing newline is fine.

    Raises:
        DatasetError: unreadable file, invalid JSON on a line, or any rule broken.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError([DatasetIssue(0, "<file>", f"cannot read: {exc}")], str(path)) from exc
    issues: list[DatasetIssue] = []
    items: list[Any] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            issues.append(DatasetIssue(lineno, "<line>", "empty line"))
            items.append({})
            continue
        try:
            items.append(json.loads(raw))
        except json.JSONDecodeError as exc:
            issues.append(DatasetIssue(lineno, "<line>", f"invalid JSON at column {exc.colno}: {exc.msg}"))
            items.append({})
    try:
        validate_items(items, tool_names, min_lines=min_lines, source=str(path))
    except DatasetError as exc:
        bad = {i.line for i in issues}
        issues.extend(i for i in exc.issues if i.line not in bad)
    if issues:
        issues.sort(key=lambda i: i.line)
        raise DatasetError(issues, str(path))
    return items
