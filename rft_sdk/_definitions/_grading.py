"""Graders: ``Grade``, ``GradingContext`` and the ``@grader`` decorator.

Hosted protocol §3 "Grading": the service POSTs ``{sample, item, trace_id}``
and expects ``{"score": float}``. The SDK hands the grader the whole
trajectory and final state recorded under the trace_id.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

from .._wire._json import loads_strict
from ..exceptions import GraderDefinitionError, GraderError
from ._invoke import LoopGuard
from ._names import NAME_RE as _NAME_RE
from ._rollout import ToolCallRecord

__all__ = ["Grade", "GraderDefinition", "GradingContext", "coerce_grade", "get_grader_definition", "grader", "marked_grader"]

F = TypeVar("F", bound=Callable[..., Any])
_ATTR = "__rft_grader__"


@dataclasses.dataclass(frozen=True)
class Grade:
    """A score with its explanation: ``Grade(score, subscores={}, reasons=[])``.

    The second positional argument is ``subscores``: ``Grade(0.0, reasons=["no write"])`` names
    ``reasons``; ``Grade(0.5, {"end_state": 1.0, "answer": 0.0})`` is a half score with two sub-scores.

    Attributes:
        score: the reward answered on the wire as ``{"score": score}``.
        subscores: named partial scores (reported in the ``x-rft-grade-details`` header).
        reasons: human-readable notes (same header).
    """

    score: float
    subscores: Mapping[str, float] = dataclasses.field(default_factory=dict)
    reasons: Sequence[str] = dataclasses.field(default_factory=list)

    def details(self) -> dict[str, Any]:
        """``{"subscores": {...}, "reasons": [...]}`` (plain JSON types)."""
        return {"subscores": {str(k): float(v) for k, v in self.subscores.items()},
                "reasons": [str(r) for r in self.reasons]}


@dataclasses.dataclass(frozen=True)
class GradingContext:
    """Everything a grader may use about one rollout.

    Attributes:
        sample: the hosted ``sample`` object; ``output_text`` is always a str
            (``""`` if absent) and ``output_json`` holds the parsed text when the
            text is JSON (else the value sent, usually ``None``).
        item: the dataset line (from the request, else from the first tool call).
        trace_id: the rollout's trace_id.
        trajectory: every recorded tool call, in order (empty when the model
            called no tools: an unknown trace_id is not an error).
        state: the rollout's final state (``{}`` when no tool ran): a fresh copy decoded from the
            stored JSON of ``Rollout.state``, which the grader may change (nothing it changes is kept).
        grader: name of the grader being run.
        traced: ``False`` when the grading request carried no ``trace_id``
            (Azure's grader tests): ``trajectory`` and ``state`` are then
            unknown, not "no tools called"; ``trace_id`` is ``""``.
        db: the rollout's database, read-only, with row-level diff helpers
            (``rft_sdk.GradingDatabase``: ``await ctx.db.diff_gold(actions)``),
            when the server has one (``ToolServer(db=...)``), else ``None``; for a
            request without ``trace_id`` it reads the template (a rollout that made no call).
    """

    sample: dict[str, Any]
    item: dict[str, Any]
    trace_id: str
    trajectory: tuple[ToolCallRecord, ...] = ()
    state: dict[str, Any] = dataclasses.field(default_factory=dict)
    grader: str = "default"
    traced: bool = True
    db: Any = None

    @property
    def output_text(self) -> str:
        """The final answer text, ``sample["output_text"]``."""
        return self.sample.get("output_text") or ""

    @property
    def output_json(self) -> Any:
        """The final answer parsed as JSON, or ``None``."""
        return self.sample.get("output_json")

    def calls(self, name: str | None = None) -> list[ToolCallRecord]:
        """Recorded calls in order, optionally only those of tool ``name``."""
        return [r for r in self.trajectory if name is None or r.name == name]

    def count(self, name: str | None = None) -> int:
        """Number of recorded calls (of tool ``name`` when given)."""
        return len(self.calls(name))

    @property
    def errors(self) -> list[ToolCallRecord]:
        """Recorded calls that answered an error (status not 2xx)."""
        return [r for r in self.trajectory if not r.ok]


@dataclasses.dataclass(frozen=True)
class GraderDefinition:
    """A grader, introspected at decoration.

    Attributes:
        name: route name (``POST /grade/{name}``), ``^[A-Za-z0-9_-]{1,64}$``.
        fn: ``(GradingContext) -> float | Grade`` (sync runs in a thread).
        score_range: inclusive ``(low, high)`` bounds, or ``None`` for any finite score.
        default: whether it also serves ``POST /grade``.
        is_async: whether ``fn`` is a coroutine function.
        guard: the loop guard (``rft_sdk._definitions._invoke.invoke_guarded``): an ``async def`` grader that never
            awaits runs in a worker thread; one whose step holds the loop past ``LOOP_STALL_S`` is named in a warning.
    """

    name: str
    fn: Callable[[GradingContext], Any]
    score_range: tuple[float, float] | None
    default: bool
    is_async: bool
    guard: LoopGuard = dataclasses.field(default_factory=LoopGuard, compare=False, repr=False)


@overload
def grader(fn: F, /) -> F:
    """Bare ``@grader``: returns ``fn`` unchanged."""
@overload
def grader(*, name: str | None = None, score_range: tuple[float, float] | None = None,
           default: bool = False) -> Callable[[F], F]:
    """``@grader(name=..., score_range=..., default=...)``: returns a decorator."""


def grader(fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
           score_range: tuple[float, float] | None = None, default: bool = False) -> Any:
    """Mark ``fn(ctx: GradingContext) -> float | Grade`` as a grader; returns it unchanged.

    Usable as ``@grader`` or ``@grader(name=..., score_range=(0.0, 1.0), default=True)``,
    standalone (``ToolServer(graders=[fn])``) or as ``@server.grader``. The first
    registered grader serves ``POST /grade``, unless one has ``default=True`` (even one registered
    later); a second ``default=True`` grader on one server raises ``GraderDefinitionError`` when it
    is registered. ``score_range=None`` (the default) accepts any finite score; with bounds, a score
    outside them answers HTTP 500.

    Raises:
        GraderDefinitionError: not a one-argument callable, bad name or range.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, _ATTR, build_grader(func, name=name, score_range=score_range, default=default))
        return func

    return decorate(fn) if fn is not None else decorate


def marked_grader(fn: Callable[..., Any]) -> GraderDefinition | None:
    """The definition attached by ``@grader``, or ``None`` for a plain function."""
    definition = getattr(fn, _ATTR, None)
    return definition if isinstance(definition, GraderDefinition) else None


def get_grader_definition(fn: Callable[..., Any]) -> GraderDefinition:
    """The definition attached by ``@grader``, or a default one for plain functions."""
    return marked_grader(fn) or build_grader(fn)


def build_grader(fn: Callable[..., Any], *, name: str | None = None,
                 score_range: tuple[float, float] | None = None, default: bool = False) -> GraderDefinition:
    """Validate ``fn`` and options into a :class:`GraderDefinition` (see :func:`grader`)."""
    if not callable(fn):
        raise GraderDefinitionError(f"grader must be a function, got {fn!r}")
    fname = getattr(fn, "__qualname__", repr(fn))
    gname: str = name or str(getattr(fn, "__name__", ""))
    if not _NAME_RE.fullmatch(gname):
        raise GraderDefinitionError(f"grader {fname}: name {gname!r} must match ^[A-Za-z0-9_-]{{1,64}}$")
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(params) != 1:
        raise GraderDefinitionError(f"grader {fname}: must take exactly one required argument (the GradingContext)")
    if score_range is not None:
        low, high = (float(v) for v in score_range)
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise GraderDefinitionError(f"grader {fname}: score_range must be finite (low, high), got {score_range!r}")
        score_range = (low, high)
    return GraderDefinition(gname, fn, score_range, default, inspect.iscoroutinefunction(fn))


def coerce_grade(value: Any, definition: GraderDefinition) -> Grade:
    """Check a grader's return value and turn it into a :class:`Grade`.

    A ``bool`` (the score or a sub-score) counts as 0.0 / 1.0, so ``return answer == gold``
    works as a grader's last line.

    Raises:
        GraderError: wrong type (str, None, ...), non-finite score or
            sub-score, or score outside ``definition.score_range``.
    """
    grade = value if isinstance(value, Grade) else None
    if grade is None:
        if not isinstance(value, numbers.Real):  # bool is a numbers.Real: True -> 1.0
            raise GraderError(f"grader {definition.name!r} returned {type(value).__name__} "
                              f"{value!r:.80}; expected a float, bool or Grade")
        grade = Grade(float(value))
    if not isinstance(grade.score, numbers.Real):
        raise GraderError(f"grader {definition.name!r} returned Grade.score of type {type(grade.score).__name__}")
    score = float(grade.score)
    if not math.isfinite(score):
        raise GraderError(f"grader {definition.name!r} returned a non-finite score: {score}")
    if definition.score_range is not None:
        low, high = definition.score_range
        if not low <= score <= high:
            raise GraderError(f"grader {definition.name!r} returned score {score} outside its declared "
                              f"range [{low}, {high}]")
    for key, sub in grade.subscores.items():
        if not isinstance(sub, numbers.Real) or not math.isfinite(float(sub)):
            raise GraderError(f"grader {definition.name!r}: sub-score {key!r} is not a finite number: {sub!r}")
    return Grade(score, {k: float(v) for k, v in grade.subscores.items()}, list(grade.reasons))


def parse_sample(sample: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``sample`` with ``output_text`` a str and ``output_json`` parsed from it when it
    is strict JSON nested at most ``MAX_JSON_DEPTH`` deep (else ``None``), unless sent non-null.
    A sample with only ``output_json`` (some Azure grader tests) gets ``output_text`` = its
    compact JSON text."""
    out = dict(sample)
    text = out.get("output_text")
    if not isinstance(text, str) and out.get("output_json") is not None:
        text = json.dumps(out["output_json"], ensure_ascii=False, separators=(",", ":"))
    out["output_text"] = text if isinstance(text, str) else ""
    if out.get("output_json") is None and out["output_text"].strip():
        try:
            out["output_json"] = loads_strict(out["output_text"])
        except ValueError:  # not JSON (or NaN/too deeply nested): plain text
            out["output_json"] = None
    else:
        out.setdefault("output_json", None)
    return out
