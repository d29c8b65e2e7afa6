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
Azure's endpoint grader cannot send headers (its samples' "Limitations");
Azure needs a validation file ("Both training and validation files are
required", Azure's RFT how-to) and documents ranges for ``eval_samples``
(1-10), ``eval_interval`` (1-25) and ``compute_multiplier`` (0.5-3.0); a
submittable job's URLs must be public ``https://`` ones (a loopback or private
address is unreachable from the service, plain http sends the token in clear).
Every object refuses unknown keys; the error names the key and the nearest
valid one (:func:`unknown_key_hint`).
"""

from __future__ import annotations

import difflib
import ipaddress
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

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
    "insecure_url_problem",
    "insecure_urls",
    "job_urls",
    "unknown_key_hint",
    "validate_job",
    "validation_error_text",
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
#: ``seed`` range of ``POST /v1/fine_tuning/jobs`` (OpenAI OpenAPI spec: minimum 0, maximum 2147483647).
SEED_MAX = 2_147_483_647


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
    """One job tool: ``{"name", "server_url", "headers"}``.

    ``server_url`` is the full http(s) URL the service POSTs this tool's calls to
    (``.../tools/{name}``); ``headers`` are forwarded verbatim on every call. The emulator
    uses this model too (``rft_sdk.emulator.JobTool``).
    """

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
    integrations: list[dict[str, Any]] | None = None
    method: MethodSpec

    @field_validator("seed")
    @classmethod
    def _seed(cls, value: int | None) -> int | None:
        if value is not None and not 0 <= value <= SEED_MAX:
            raise ValueError(f"must be in 0..{SEED_MAX} (OpenAI fine-tuning API), got {value}")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        """At most 16 pairs, keys up to 64 and values up to 512 characters (OpenAI API reference, ``metadata``)."""
        if value is None:
            return value
        if len(value) > 16:
            raise ValueError(f"at most 16 key-value pairs, got {len(value)}")
        for key, text in value.items():
            if len(key) > 64:
                raise ValueError(f"key {key[:20]!r}... is longer than 64 characters")
            if len(text) > 512:
                raise ValueError(f"value of {key!r} is longer than 512 characters")
        return value


def unknown_key_hint(key: str, allowed: Iterable[str]) -> str:
    """``"unknown key 'max_episode_step' (did you mean 'max_episode_steps'?); valid keys: [...]"``."""
    allowed = sorted(allowed)
    near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown key {key!r}{hint}; valid keys: {allowed}"


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation may hold (through Optional, list, Annotated, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _allowed_keys(root: type[BaseModel], loc: tuple[Any, ...]) -> set[str] | None:
    """Field names of the model at ``loc`` (the location of an unknown key, the key itself excluded)."""
    current = [root]
    for part in loc:
        step = [m for model in current if isinstance(part, str) and part in model.model_fields
                for m in _models_in(model.model_fields[part].annotation)]
        if step:
            current = step
        elif isinstance(part, str):  # a union tag ("endpoint"): the members whose ``type`` literal is that tag
            tagged = [m for m in current if "type" in m.model_fields
                      and part in get_args(m.model_fields["type"].annotation)]
            current = tagged or current
        # otherwise a list index: same models
    if any(m.model_config.get("extra") != "forbid" for m in current):
        return None
    return {name for model in current for name in model.model_fields}


def validation_error_text(exc: ValidationError, root: type[BaseModel], prefix: str = "") -> str:
    """One line per problem, ``"path.to.field: message"``; an unknown key names the nearest valid one."""
    parts = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in (prefix, *loc) if p != "")
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(root, loc[:-1])
            message = unknown_key_hint(str(loc[-1]), allowed) if allowed else "unknown key"
            parts.append(f"{where}: {message}")
        else:
            parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _errors(exc: ValidationError) -> str:
    return validation_error_text(exc, FineTuningJob)


def insecure_url_problem(url: str) -> str | None:
    """Why the hosted service could not (safely) call ``url``, or ``None``.

    Refused: plain ``http://`` (the job's token would travel in clear), and a host that is
    ``localhost``, ``*.localhost``, ``*.local`` or a loopback, private, link-local or
    unspecified IP address (the service cannot reach it).
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme != "https":
        return f"{url!r} is not https:// (the service would send the job's token in clear)"
    if not host:
        return f"{url!r} has no host"
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return f"{url!r} names this machine ({host}); the hosted service cannot reach it"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified:
        return f"{url!r} is a loopback or private address; the hosted service cannot reach it"
    return None


def job_urls(job: FineTuningJob) -> list[tuple[str, str]]:
    """``(field, url)`` of each of the job's tool URLs and its endpoint grader's URL, e.g.
    ``("method.reinforcement.tools.0.server_url", "https://rft.example.com/tools/lookup")``."""
    spec = job.method.reinforcement
    urls = [(f"method.reinforcement.tools.{i}.server_url", t.server_url) for i, t in enumerate(spec.tools)]
    if isinstance(spec.grader, EndpointGraderSpec):
        urls.append(("method.reinforcement.grader.url", spec.grader.url))
    return urls


def insecure_urls(job: FineTuningJob) -> list[tuple[str, str]]:
    """``(field, problem)`` for each of the job's tool and endpoint-grader URLs that
    :func:`insecure_url_problem` refuses, e.g. ``("method.reinforcement.tools.0.server_url", ...)``."""
    return [(where, problem) for where, url in job_urls(job) if (problem := insecure_url_problem(url))]


#: Azure's documented ranges of the reinforcement hyperparameters (Azure RFT how-to, "Hyperparameter selection").
AZURE_RANGES: dict[str, tuple[float, float]] = {"eval_samples": (1, 10), "eval_interval": (1, 25),
                                                "compute_multiplier": (0.5, 3.0)}


def validate_job(data: Mapping[str, Any], target: str = "openai", *, submittable: bool = False,
                 allow_insecure_url: bool = False) -> FineTuningJob:
    """Check a job body for ``target`` (``"openai"`` or ``"azure"``).

    Args:
        data: the job (``{"method": ...}`` at least).
        submittable: also require ``model`` and ``training_file`` (and for Azure
            ``validation_file``), and public ``https://`` URLs (:func:`insecure_url_problem`).
        allow_insecure_url: with ``submittable``, accept loopback/private/plain-http URLs anyway.

    Returns:
        The parsed job (``model_dump(exclude_none=True)`` gives the JSON to send).

    Raises:
        ValueError: unknown target, an unknown key (named, with the nearest valid one), a field of
            the wrong shape (the message names each, e.g.
            ``method.reinforcement.hyperparameters.reasoning_effort: ...``), a seed outside
            0..2147483647, a missing ``model``/``training_file`` when ``submittable``, or for
            Azure an endpoint grader with headers (Azure's endpoint grader cannot send them yet),
            a hyperparameter outside Azure's documented range, or (``submittable``) no
            ``validation_file``.
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
        if target == "azure" and job.validation_file is None:
            raise ValueError("validation_file: Azure AI Foundry's reinforcement fine-tuning requires both training "
                             "and validation files (Azure RFT how-to); upload a held-out file and pass "
                             "--validation-file / validation_file=")
        if not allow_insecure_url and (insecure := insecure_urls(job)):
            where, problem = insecure[0]
            raise ValueError(f"{where}: {problem}; deploy behind a public https:// URL "
                             "(--allow-insecure-url / allow_insecure_url=True to write it anyway)")
    if target == "azure":
        hyper = job.method.reinforcement.hyperparameters
        for name, (low, high) in AZURE_RANGES.items():
            value = getattr(hyper, name)
            if isinstance(value, (int, float)) and not low <= value <= high:
                raise ValueError(f"method.reinforcement.hyperparameters.{name}: {value} is outside Azure's "
                                 f"documented range {low:g}-{high:g} (Azure RFT how-to)")
    grader = job.method.reinforcement.grader
    if target == "azure" and isinstance(grader, EndpointGraderSpec) and grader.headers:
        raise ValueError("method.reinforcement.grader.headers: Azure AI Foundry's endpoint grader cannot send "
                         "headers yet; serve the grader behind ToolServer(grader_secret=...) (its URL is the "
                         "credential) or without auth")
    return job
