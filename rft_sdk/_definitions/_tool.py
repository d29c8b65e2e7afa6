"""The ``@tool`` decorator: introspect a function once into a served tool definition."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any, TypeVar, overload

import anyio
import docstring_parser
import pydantic
from pydantic import ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from ..exceptions import ToolDefinitionError
from ..protocol import QUEUE_TIMEOUT_S
from ._invoke import TOOL_THREADS, LoopGuard
from ._names import NAME_RE as _NAME_RE
from ._rollout import Rollout
from ._schema import StrictSchemaError, make_nullable, strictify

__all__ = ["ToolDefinition", "ToolRuntime", "get_tool_definition", "tool"]

F = TypeVar("F", bound=Callable[..., Any])
_ATTR = "__rft_tool__"


@dataclasses.dataclass(frozen=True)
class ToolDefinition:
    """A tool, introspected once at decoration.

    Attributes:
        name: tool name (``^[A-Za-z0-9_-]{1,64}$``), also the route ``/tools/{name}``.
        description: text shown to the model.
        parameters: strict JSON Schema object of the arguments.
        fn: the user's function, unchanged.
        args_model: pydantic model validating the arguments (extra keys forbidden).
        rollout_param: name of the parameter that receives the ``Rollout``, if any.
        defaults: names of parameters that have a default (``null`` maps to it).
        is_async: whether ``fn`` is a coroutine function (awaited on the event loop).
        blocking: for a sync ``fn``: ``True`` (default, safe) runs it in a worker
            thread so a blocking call cannot stall the event loop; ``False``
            (``@tool(blocking=False)``) calls it on the event loop, saving the
            thread hop (~80 µs) for a function that never blocks (no I/O,
            no locks, no sleep; pure CPU work of a few µs).
        timeout_s: seconds one call may run once it has a slot (the wait for a
            slot does not count; ``None``: no limit; the hosted side gives up
            after 600 s). A call over it answers the model-visible 400
            ``tool_timeout`` and its state changes are dropped; a sync tool's
            worker thread cannot be killed: it finishes in the background and
            keeps its slot until then.
        max_concurrency: calls of this tool running at once in this process
            (``None``: no limit for an async tool, ``TOOL_THREADS`` = 40 worker
            threads of its own for a sync one); further calls wait for a slot.
        queue_timeout_s: seconds a call waits for a slot (default
            ``protocol.QUEUE_TIMEOUT_S`` = 60; ``None``: no limit); past it the
            call answers 503 ``tool_busy`` (not recorded, retried by the hosted
            side), never a model-visible error.
        limiter: the tool's own ``anyio.CapacityLimiter`` (``max_concurrency``,
            or ``TOOL_THREADS`` for a sync tool; ``None`` for an unbounded async
            tool): one tool's backlog queues behind itself, never in front of
            another tool (docs/reliability.md).
        runtime: mutable facts learnt while serving (``ToolRuntime``).
        writes: whether the tool changes state, as declared (``@tool(writes=True|False)``);
            ``None``: undeclared, learnt from what its calls change (:attr:`learned_writes`).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    args_model: type[pydantic.BaseModel]
    rollout_param: str | None
    defaults: frozenset[str]
    is_async: bool
    blocking: bool = True
    timeout_s: float | None = None
    max_concurrency: int | None = None
    limiter: anyio.CapacityLimiter | None = dataclasses.field(default=None, compare=False, repr=False)
    queue_timeout_s: float | None = QUEUE_TIMEOUT_S
    runtime: ToolRuntime = dataclasses.field(default_factory=lambda: ToolRuntime(), compare=False, repr=False)
    writes: bool | None = None

    @property
    def learned_writes(self) -> bool | None:
        """Whether the tool writes: the declaration, else what its successful calls in this process
        changed (the rollout state or the rollout database): ``True`` once one call changed
        something, ``False`` after successful calls that changed nothing, ``None`` before any."""
        if self.writes is not None:
            return self.writes
        if self.runtime.changing_calls:
            return True
        return False if self.runtime.calls else None

    @property
    def on_loop(self) -> bool:
        """Whether calls run on the event loop (async, or sync marked ``blocking=False`` and not yet
        moved to a worker thread for holding the loop, see :class:`ToolRuntime`)."""
        return self.is_async or not (self.blocking or self.runtime.moved_to_thread)

    def chat_completions_format(self) -> dict[str, Any]:
        """``{"type": "function", "function": {name, description, parameters, strict: true}}``
        (the dataset line's ``tools`` format, hosted-protocol §2)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "strict": True,
            },
        }

    def responses_format(self) -> dict[str, Any]:
        """``{"type": "function", name, description, parameters, strict: true}`` (Responses API)."""
        return {"type": "function", **self.chat_completions_format()["function"]}


@dataclasses.dataclass
class ToolRuntime:
    """What a served tool learnt while serving (mutable; one per definition).

    Attributes:
        moved_to_thread: a ``blocking=False`` tool held the event loop longer
            than ``protocol.LOOP_STALL_S`` in one call (every other request of
            the process waited): its later calls run in a worker thread, and a
            warning said so once.
        guard: the loop guard of an ``async def`` tool (``rft_sdk._definitions._invoke.LoopGuard``): one whose
            step held the loop past ``LOOP_STALL_S`` is named in a warning once (it stays on the loop).
        calls, changing_calls: successful calls served, and those that changed the
            rollout state or database (``ToolDefinition.learned_writes``).
        own_threads: a sync tool ran longer than ``rft_sdk._db._call.SHARED_HOP_S`` in the rollout
            database's admission threads (where a sync tool runs in the thread that opened its database),
            or waited there off the CPU past ``RolloutDatabase.shared_hop_wait_s`` in
            ``rft_sdk._server._calls.SHARED_HOP_WAITS`` calls in a row: its later calls run on its own
            threads (logged once).
        hop_waits: calls in a row that waited past that bound.
    """

    moved_to_thread: bool = False
    own_threads: bool = False
    hop_waits: int = 0
    guard: LoopGuard = dataclasses.field(default_factory=LoopGuard)
    calls: int = 0
    changing_calls: int = 0

    def observe(self, changed: bool) -> None:
        """Count one successful call and whether it changed the rollout state or database."""
        self.calls += 1
        self.changing_calls += bool(changed)


@overload
def tool(fn: F, /) -> F:
    """Bare ``@tool``: returns ``fn`` unchanged."""
@overload
def tool(*, name: str | None = None, description: str | None = None, blocking: bool = True,
         timeout_s: float | None = None, max_concurrency: int | None = None,
         queue_timeout_s: float | None = QUEUE_TIMEOUT_S, writes: bool | None = None) -> Callable[[F], F]:
    """``@tool(name=..., description=..., blocking=..., timeout_s=..., max_concurrency=..., queue_timeout_s=...)``:
    returns a decorator."""


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    blocking: bool = True,
    timeout_s: float | None = None,
    max_concurrency: int | None = None,
    queue_timeout_s: float | None = QUEUE_TIMEOUT_S,
    writes: bool | None = None,
) -> Any:
    """Mark a function as a tool; returns the function unchanged (still directly callable).

    Usable as ``@tool``, ``@tool(name=..., description=...)``; register it with
    ``ToolServer(tools=[fn])`` or use ``@server.tool`` directly. The argument
    schema is derived here, once, from the type hints (pydantic) and the
    docstring's ``Args:`` section; a parameter annotated ``Rollout`` is injected
    at call time and is not part of the schema.

    ``blocking=False`` declares that a sync (``def``) tool never blocks (no
    I/O, locks or sleeps): it is then called on the event loop instead of in a
    worker thread (docs/performance.md). The default, ``True``, is the safe
    choice: a blocking call in a ``blocking=False`` tool stalls every request
    of the process while it runs. Async tools are always awaited on the loop.

    ``timeout_s`` bounds one call's run (a hung backend then costs the model
    one 400 ``tool_timeout`` answer, not its rollout), ``max_concurrency``
    bounds how many calls of this tool run at once in the process (e.g. a
    backend that allows few connections), and ``queue_timeout_s`` how long a
    call waits for one of those slots (then 503 ``tool_busy``, retried); see
    :class:`ToolDefinition`.

    ``writes`` declares whether the tool changes state (``True``: a write such as
    ``checkout_book``; ``False``: a read). Undeclared (``None``), the server learns
    it from what the tool's calls change — the rollout state or the rollout
    database — e.g. during ``rft validate``'s and ``rft doctor``'s gold replay; the
    answer is ``GET /tools``'s ``"writes"`` map, used by ``rft doctor`` and
    ``rft emulate --policy perturbed`` (``--write-tools`` overrides both).

    Raises:
        ToolDefinitionError: ``*args``/``**kwargs``, positional-only or
            un-annotated parameters, types strict mode cannot express, or an
            invalid name, or a non-positive ``timeout_s``/``max_concurrency``/
            ``queue_timeout_s``.
            The message names the function and the parameter.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, _ATTR, build_definition(func, name=name, description=description, blocking=blocking,
                                              timeout_s=timeout_s, max_concurrency=max_concurrency,
                                              queue_timeout_s=queue_timeout_s, writes=writes))
        return func

    return decorate(fn) if fn is not None else decorate


def get_tool_definition(fn: Callable[..., Any]) -> ToolDefinition:
    """The definition attached by ``@tool``, building a default one for plain functions."""
    definition = getattr(fn, _ATTR, None)
    if isinstance(definition, ToolDefinition):
        return definition
    return build_definition(fn)


def build_definition(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None, blocking: bool = True,
    timeout_s: float | None = None, max_concurrency: int | None = None,
    queue_timeout_s: float | None = QUEUE_TIMEOUT_S, writes: bool | None = None,
) -> ToolDefinition:
    """Introspect ``fn`` into a :class:`ToolDefinition` (see :func:`tool`)."""
    if not callable(fn):
        raise ToolDefinitionError(f"tool must be a function, got {fn!r}")
    fname = getattr(fn, "__qualname__", repr(fn))
    for option, value in (("timeout_s", timeout_s), ("queue_timeout_s", queue_timeout_s)):
        if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
            raise ToolDefinitionError(f"tool {fname}: {option} must be a positive number of seconds (or None), "
                                      f"got {value!r}")
    if max_concurrency is not None and not (isinstance(max_concurrency, int) and max_concurrency >= 1):
        raise ToolDefinitionError(f"tool {fname}: max_concurrency must be an int >= 1, got {max_concurrency!r}")
    tool_name: str = name or str(getattr(fn, "__name__", ""))
    if not _NAME_RE.fullmatch(tool_name):
        raise ToolDefinitionError(
            f"tool {fname}: name {tool_name!r} must match ^[A-Za-z0-9_-]{{1,64}}$"
        )
    try:
        # ``Rollout`` resolves even when imported in a local scope under postponed annotations
        hints = typing.get_type_hints(fn, localns={"Rollout": Rollout}, include_extras=True)
    except Exception as exc:  # unresolved forward references etc.
        raise ToolDefinitionError(f"tool {fname}: cannot resolve type hints: {exc}") from exc
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}

    fields: dict[str, Any] = {}
    defaults: set[str] = set()
    rollout_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        where = f"tool {fname}, parameter {param.name!r}"
        if param.kind is param.VAR_POSITIONAL or param.kind is param.VAR_KEYWORD:
            raise ToolDefinitionError(f"{where}: *args/**kwargs are not supported; name every argument")
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"{where}: positional-only parameters are not supported")
        if param.name not in hints:
            raise ToolDefinitionError(f"{where}: missing type annotation")
        annotation = hints[param.name]
        if annotation is Rollout:
            if rollout_param is not None:
                raise ToolDefinitionError(f"{where}: only one parameter may be annotated Rollout")
            rollout_param = param.name
            continue
        if param.name.startswith("_"):
            raise ToolDefinitionError(f"{where}: argument names must not start with '_'")
        field_kwargs: dict[str, Any] = {}
        if param_docs.get(param.name):
            field_kwargs["description"] = param_docs[param.name]
        if isinstance(param.default, FieldInfo):
            # ``= Field(5, ge=1, le=10)``: keep its limits; ``null`` maps to its default
            info = param.default
            if info.description is None and "description" in field_kwargs:  # merged, so the schema shows it
                info = FieldInfo.merge_field_infos(info, description=field_kwargs["description"])
            else:
                info = copy.copy(info)
            if not info.is_required():
                defaults.add(param.name)
            fields[param.name] = (annotation, info)
        elif param.default is not param.empty:
            defaults.add(param.name)
            fields[param.name] = (annotation, Field(param.default, **field_kwargs))
        else:
            fields[param.name] = (annotation, Field(..., **field_kwargs))

    model_name = "".join(part.capitalize() for part in tool_name.replace("-", "_").split("_")) + "Args"
    try:
        model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
        raw = model.model_json_schema()
    except Exception as exc:
        bad = _first_bad_param(fields)
        where = f"tool {fname}, parameter {bad!r}" if bad else f"tool {fname}"
        if getattr(exc, "code", None) == "typed-dict-version":  # pydantic.PydanticUserError
            raise ToolDefinitionError(f"{where}: pydantic refuses typing.TypedDict on Python "
                                      f"{sys.version_info.major}.{sys.version_info.minor}; declare it with "
                                      "`from typing_extensions import TypedDict` (typing.TypedDict works from Python 3.12)") from exc
        raise ToolDefinitionError(f"{where}: type cannot be served as JSON Schema: {exc}") from exc

    properties: dict[str, Any] = {}
    defs = raw.get("$defs", {})
    strict_defs: dict[str, Any] = {}  # each $def made strict once, named after the first parameter reaching it
    for pname, prop in raw.get("properties", {}).items():
        where = f"tool {fname}, parameter {pname!r}"
        try:
            strict = strictify(prop, where)
            pending = _refs(prop)
            while pending:  # direct and nested references ($defs that refer to other $defs)
                ref = pending.pop(0)
                if ref not in strict_defs:
                    strict_defs[ref] = strictify(defs[ref], f"{where} ({ref})")
                    pending += _refs(defs[ref])
        except StrictSchemaError as exc:
            raise ToolDefinitionError(str(exc)) from exc
        properties[pname] = make_nullable(strict) if pname in defaults else strict
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if strict_defs:
        parameters["$defs"] = {name: strict_defs[name] for name in defs if name in strict_defs}

    is_async = inspect.iscoroutinefunction(fn)
    slots = max_concurrency if max_concurrency is not None else (None if is_async else TOOL_THREADS)
    text = description
    if text is None:
        text = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    return ToolDefinition(
        name=tool_name,
        description=text.strip(),
        parameters=parameters,
        fn=fn,
        args_model=model,
        rollout_param=rollout_param,
        defaults=frozenset(defaults),
        is_async=is_async,
        blocking=bool(blocking),
        timeout_s=float(timeout_s) if timeout_s is not None else None,
        max_concurrency=max_concurrency,
        limiter=anyio.CapacityLimiter(slots) if slots is not None else None,
        queue_timeout_s=float(queue_timeout_s) if queue_timeout_s is not None else None,
        writes=_check_writes(writes, fname),
    )


def _check_writes(writes: Any, fname: str) -> bool | None:
    if writes is not None and not isinstance(writes, bool):
        raise ToolDefinitionError(f"{fname}: writes must be True, False or None, got {writes!r}")
    return writes


def _refs(schema: Any) -> list[str]:
    """Names of the ``$defs`` that ``schema`` refers to directly, in document order, once each."""
    found: dict[str, None] = {}
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found[ref.removeprefix("#/$defs/")] = None
        for value in schema.values():
            found.update(dict.fromkeys(_refs(value)))
    elif isinstance(schema, list):
        for value in schema:
            found.update(dict.fromkeys(_refs(value)))
    return list(found)


def _first_bad_param(fields: dict[str, Any]) -> str | None:
    for pname, (annotation, _) in fields.items():
        try:
            pydantic.TypeAdapter(annotation).json_schema()
        except Exception:
            return pname
    return None
