"""The hosted fine-tuning job, as both services document it, checked with pydantic.

One model per object of the job (``docs/job-config.md`` lists every field and
the public source it was checked against):

* ``FineTuningJob``: ``{"model", "training_file", "validation_file", "suffix",
  "seed", "method"}`` (OpenAI fine-tuning API ``POST /v1/fine_tuning/jobs``;
  Azure uses the same call through ``AIProjectClient.get_openai_client()``);
* ``ReinforcementSpec``: ``{"grader", "tools", "max_episode_steps",
  "parallel_tool_calls", "hyperparameters"}`` (agent RFT fields: the
  ``microsoft-foundry/fine-tuning`` agentic-RFT README; the official
  ``openai`` client types have only ``grader`` and ``hyperparameters``);
* ``Hyperparameters``: every value a number or ``"auto"``; ``reasoning_effort``
  one of ``default|low|medium|high`` (``ReinforcementHyperparametersParam``).

``validate_job(data, target)`` adds what one service needs beyond the shape:
Azure's endpoint grader cannot send headers (its samples' "Limitations").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PositiveFloat,
    PositiveInt,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = [
    "BUILTIN_GRADER_TYPES",
    "REASONING_EFFORTS",
    "TARGETS",
    "BuiltinGraderSpec",
    "EndpointGraderSpec",
    "FineTuningJob",
    "Hyperparameters",
    "JobTarget",
    "MethodSpec",
    "ReinforcementSpec",
    "ToolSpec",
    "validate_job",
]

#: Services a job can be written for.
JobTarget = Literal["openai", "azure"]
TARGETS: tuple[str, ...] = get_args(JobTarget)
ReasoningEffort = Literal["default", "low", "medium", "high"]
#: ``hyperparameters.reasoning_effort`` values (openai-python ``ReinforcementHyperparametersParam``).
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
BuiltinGraderType = Literal["string_check", "text_similarity", "score_model", "python", "multi"]
#: Built-in grader types a reinforcement job takes besides ``endpoint`` (hosted protocol §1).
BUILTIN_GRADER_TYPES: tuple[str, ...] = get_args(BuiltinGraderType)

_Auto = Literal["auto"]


def _http_url(value: str, field: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"{field} must be an http(s) URL, got {value!r}")
    return value


class Hyperparameters(BaseModel):
    """``method.reinforcement.hyperparameters``: each value a positive number or ``"auto"``
    (the service picks); ``reasoning_effort`` in :data:`REASONING_EFFORTS`. Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")

    batch_size: PositiveInt | _Auto | None = None
    learning_rate_multiplier: PositiveFloat | _Auto | None = None
    n_epochs: PositiveInt | _Auto | None = None
    compute_multiplier: PositiveFloat | _Auto | None = None
    eval_interval: PositiveInt | _Auto | None = None
    eval_samples: PositiveInt | _Auto | None = None
    reasoning_effort: ReasoningEffort | None = None


class ToolSpec(BaseModel):
    """One job tool: ``{"name", "server_url", "headers"}``; headers are forwarded verbatim."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    server_url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("server_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "server_url")


class EndpointGraderSpec(BaseModel):
    """``{"type": "endpoint", "name"?, "url", "headers"?, "rate_limit"? (requests/s), "pass_threshold"?}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["endpoint"]
    name: str | None = None
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    rate_limit: PositiveInt | None = None
    pass_threshold: float | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "url")


class BuiltinGraderSpec(BaseModel):
    """A built-in grader (``type`` in :data:`BUILTIN_GRADER_TYPES`); its other fields are the service's to check."""

    model_config = ConfigDict(extra="allow")

    type: BuiltinGraderType


def _grader_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, Mapping) else getattr(value, "type", None)
    return "endpoint" if kind == "endpoint" else "builtin"


class ReinforcementSpec(BaseModel):
    """``method.reinforcement``: an endpoint grader or a built-in one, the tools, the episode bound."""

    model_config = ConfigDict(extra="forbid")

    grader: Annotated[Annotated[EndpointGraderSpec, Tag("endpoint")] | Annotated[BuiltinGraderSpec, Tag("builtin")],
                      Discriminator(_grader_kind)]
    tools: list[ToolSpec] = Field(default_factory=list)
    max_episode_steps: int | None = Field(default=None, ge=1)
    parallel_tool_calls: bool | None = None
    hyperparameters: Hyperparameters = Field(default_factory=Hyperparameters)

    @model_validator(mode="after")
    def _unique_tools(self) -> ReinforcementSpec:
        names = [t.name for t in self.tools]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"duplicate tool names: {dupes}")
        return self


class MethodSpec(BaseModel):
    """``method``: ``{"type": "reinforcement", "reinforcement": {...}}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["reinforcement"]
    reinforcement: ReinforcementSpec


class FineTuningJob(BaseModel):
    """The whole job body. ``model`` and ``training_file`` are required to submit; a job
    exported without them (``rft tools --base-url``) is the ``method`` part only.
    ``suffix``: at most 64 characters (OpenAI fine-tuning API reference)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1)
    training_file: str | None = Field(default=None, min_length=1)
    validation_file: str | None = None
    suffix: str | None = Field(default=None, max_length=64)
    seed: int | None = None
    metadata: dict[str, str] | None = None
    method: MethodSpec


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())


def validate_job(data: Mapping[str, Any], target: str = "openai", *, submittable: bool = False) -> FineTuningJob:
    """Check a job body for ``target`` (``"openai"`` or ``"azure"``).

    Args:
        data: the job (``{"method": ...}`` at least).
        submittable: also require ``model`` and ``training_file``.

    Returns:
        The parsed job (``model_dump(exclude_none=True)`` gives the JSON to send).

    Raises:
        ValueError: unknown target, a field of the wrong shape (the message names each,
            e.g. ``method.reinforcement.hyperparameters.reasoning_effort: ...``), a missing
            ``model``/``training_file`` when ``submittable``, or for Azure an endpoint
            grader with headers (Azure's endpoint grader cannot send them yet).
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}")
    try:
        job = FineTuningJob.model_validate(dict(data))
    except ValidationError as exc:
        raise ValueError(_errors(exc)) from None
    if submittable:
        missing = [f for f in ("model", "training_file") if getattr(job, f) is None]
        if missing:
            raise ValueError(f"a submittable job needs {' and '.join(missing)}")
    grader = job.method.reinforcement.grader
    if target == "azure" and isinstance(grader, EndpointGraderSpec) and grader.headers:
        raise ValueError("method.reinforcement.grader.headers: Azure AI Foundry's endpoint grader cannot send "
                         "headers yet; serve the grader behind ToolServer(grader_secret=...) (its URL is the "
                         "credential) or without auth")
    return job
