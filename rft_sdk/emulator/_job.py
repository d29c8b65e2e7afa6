"""Job config models: the hosted reinforcement job shape the emulator accepts.

Source: ``docs/hosted-protocol.md`` section 1 ("The job") and
``docs/ARCHITECTURE.md`` ("Job config accepted by the emulator"). The emulator
accepts either the full shape ``{"method": {"type": "reinforcement",
"reinforcement": {...}}}`` (the other top-level job fields, ``model``,
``training_file``, ``seed``..., are checked by name but not used) or just the
inner ``"reinforcement"`` object. Every object refuses unknown keys, as
``docs/job-config.md`` says: a hand-edited ``"max_episode_step": 10`` is an
error naming the key and the nearest valid one, never a silent default.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .._jobs._config import (
    TARGETS,
    EndpointGraderSpec,
    FineTuningJob,
    ToolSpec,
    unknown_key_hint,
    validation_error_text,
)

__all__ = [
    "EndpointGrader",
    "Hyperparameters",
    "JobConfigError",
    "JobTool",
    "ReinforcementJob",
    "TARGETS",
    "load_job",
    "samples_per_item",
    "target_problems",
]

#: Samples per item at ``compute_multiplier == 1.0`` (the emulator's choice;
#: the hosted services do not publish their base group size).
BASE_SAMPLES_PER_ITEM = 4


class JobConfigError(ValueError):
    """The job config is not a valid hosted reinforcement job (message names the field)."""


#: One job-level tool, ``{"name", "server_url", "headers"}``: the hosted job's own model
#: (:class:`rft_sdk._jobs._config.ToolSpec`), so the emulator and ``rft validate`` accept the same shape.
JobTool = ToolSpec


class EndpointGrader(EndpointGraderSpec):
    """The endpoint grader: ``{"type": "endpoint", "name", "url", "headers", "rate_limit", "pass_threshold"}``.

    The hosted job's model (:class:`rft_sdk._jobs._config.EndpointGraderSpec`: same keys, same URL rule)
    with the emulator's defaults: ``type`` may be left out, ``rate_limit`` is in requests per second
    (default 50; the emulator spaces grader calls so that no more than that many start per second) and
    ``pass_threshold`` (default 1.0) is the score at or above which a rollout counts as passed.
    """

    type: Literal["endpoint"] = "endpoint"
    rate_limit: float = Field(default=50.0, gt=0)  # type: ignore[assignment]  # the emulator's default
    pass_threshold: float = 1.0  # the emulator's default


class Hyperparameters(BaseModel):
    """Job hyperparameters; the emulator uses ``compute_multiplier`` and ``eval_samples``.

    ``"auto"`` (the service chooses) is accepted for every number; the emulator reads
    it as ``compute_multiplier = 1.0`` and as "not set" (``None``) for the others.
    """

    model_config = ConfigDict(extra="forbid")

    compute_multiplier: float = Field(default=1.0, gt=0)
    eval_interval: int | None = None
    eval_samples: int | None = Field(default=None, ge=1)
    n_epochs: int | None = None
    batch_size: int | None = None
    learning_rate_multiplier: float | None = None
    reasoning_effort: str | None = None

    @field_validator("compute_multiplier", mode="before")
    @classmethod
    def _auto_compute(cls, value: Any) -> Any:
        return 1.0 if value == "auto" else value

    @field_validator("eval_interval", "eval_samples", "n_epochs", "batch_size", "learning_rate_multiplier",
                     mode="before")
    @classmethod
    def _auto_unset(cls, value: Any) -> Any:
        return None if value == "auto" else value


class ReinforcementJob(BaseModel):
    """The inner ``"reinforcement"`` object of a hosted job.

    Raises (at construction): ``pydantic.ValidationError`` on bad fields; use
    :func:`load_job` for a :class:`JobConfigError` that names the field.
    """

    model_config = ConfigDict(extra="forbid")

    tools: list[JobTool] = Field(default_factory=list)
    grader: EndpointGrader
    max_episode_steps: int = Field(default=10, ge=1)
    #: ``None``: the job leaves it to the service (the emulator then sends nothing to an
    #: OpenAI-compatible policy); ``False``: one tool call per model turn.
    parallel_tool_calls: bool | None = None
    hyperparameters: Hyperparameters = Field(default_factory=Hyperparameters)

    @model_validator(mode="after")
    def _unique_tools(self) -> ReinforcementJob:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate tool names: {dupes}")
        return self

    @property
    def tool_names(self) -> set[str]:
        """Names of the job-level tools."""
        return {t.name for t in self.tools}

    def tool(self, name: str) -> JobTool | None:
        """The job tool called ``name``, or ``None``."""
        for t in self.tools:
            if t.name == name:
                return t
        return None


def _format_validation_error(exc: ValidationError, prefix: str) -> str:
    return validation_error_text(exc, ReinforcementJob, prefix)


def _unknown_keys(data: Mapping[str, Any], allowed: Any, prefix: str) -> list[str]:
    where = f"{prefix}." if prefix else ""
    return [f"{where}{key}: {unknown_key_hint(str(key), allowed)}" for key in data if key not in allowed]


def load_job(source: str | Path | Mapping[str, Any] | ReinforcementJob) -> ReinforcementJob:
    """Load and validate a job config.

    Args:
        source: a path to a JSON file, a mapping (full hosted job or the inner
            ``reinforcement`` object) or an already-built :class:`ReinforcementJob`.

    Returns:
        The validated inner job.

    Raises:
        JobConfigError: unreadable file, bad JSON, a non-reinforcement method,
            a non-endpoint grader, or an invalid field (the message names it,
            e.g. ``method.reinforcement.grader.url: ...``).
    """
    if isinstance(source, ReinforcementJob):
        return source
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise JobConfigError(f"cannot read job config {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise JobConfigError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    else:
        data = source
    if not isinstance(data, Mapping):
        raise JobConfigError("job config must be a JSON object")
    prefix = ""
    if "method" in data:
        method = data["method"]
        if unknown := _unknown_keys(data, FineTuningJob.model_fields, ""):
            raise JobConfigError("; ".join(unknown))
        if not isinstance(method, Mapping) or method.get("type") != "reinforcement":
            raise JobConfigError("method.type: must be 'reinforcement'")
        if unknown := _unknown_keys(method, ("type", "reinforcement"), "method"):
            raise JobConfigError("; ".join(unknown))
        inner = method.get("reinforcement")
        if not isinstance(inner, Mapping):
            raise JobConfigError("method.reinforcement: missing or not an object")
        data, prefix = inner, "method.reinforcement"
    grader = data.get("grader")
    if isinstance(grader, Mapping) and grader.get("type", "endpoint") != "endpoint":
        where = f"{prefix}.grader.type" if prefix else "grader.type"
        raise JobConfigError(f"{where}: the emulator calls endpoint graders only, got {grader.get('type')!r}")
    try:
        return ReinforcementJob.model_validate(dict(data))
    except ValidationError as exc:
        raise JobConfigError(_format_validation_error(exc, prefix)) from exc


def target_problems(job: ReinforcementJob, target: str) -> list[str]:
    """What the hosted ``target`` (``"openai"`` or ``"azure"``) would do differently with ``job``.

    For ``"azure"``: Azure AI Foundry's endpoint grader cannot send headers (the
    ``microsoft-foundry/fine-tuning`` agentic-RFT samples, "Limitations"), so grader
    headers are dropped; a grader that needs them answers 401 and every rollout is
    discarded. Serve it behind ``ToolServer(grader_secret=...)`` instead. ``"openai"``
    forwards every header; no problem to report.

    Returns:
        One sentence per problem (empty: the job runs as written).

    Raises:
        JobConfigError: unknown target.
    """
    if target not in TARGETS:
        raise JobConfigError(f"target must be one of {list(TARGETS)}, got {target!r}")
    if target == "azure" and job.grader.headers:
        return [f"Azure's endpoint grader cannot send headers: {sorted(job.grader.headers)} will not be sent to "
                f"{job.grader.url!r} (serve the grader behind ToolServer(grader_secret=...))"]
    return []


def samples_per_item(compute_multiplier: float, base: int = BASE_SAMPLES_PER_ITEM) -> int:
    """Samples (rollouts) per item for a ``compute_multiplier``.

    Rule (the emulator's own; the hosted services do not publish theirs):
    ``max(1, floor(base * compute_multiplier + 0.5))`` — round half up, never
    fewer than one. With the default ``base = 4``: 1.0 → 4, 0.5 → 2, 0.3 → 1,
    0.1 → 1, 1.5 → 6, 2.0 → 8.

    Raises:
        ValueError: ``compute_multiplier <= 0`` or ``base < 1``.
    """
    if not compute_multiplier > 0:
        raise ValueError(f"compute_multiplier must be > 0, got {compute_multiplier}")
    if base < 1:
        raise ValueError(f"base must be >= 1, got {base}")
    return max(1, math.floor(base * compute_multiplier + 0.5))
