"""Export a ``ToolServer`` into the hosted job's and dataset's shapes (hosted protocol §1, §2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .._definitions._grading import GraderDefinition
    from .._definitions._tool import ToolDefinition
    from ._auth import BearerAuth

__all__ = ["ExportMixin"]

#: A hyperparameter value: a positive number, or ``"auto"`` (the service chooses).
HyperValue = int | float | Literal["auto"]


class ExportMixin:
    """Export methods of ``ToolServer`` (needs ``_tools``, ``_graders``, ``_default_grader``)."""

    _tools: dict[str, ToolDefinition]
    _graders: dict[str, GraderDefinition]
    _default_grader: str | None
    _grader_secret: str | None
    _auth: BearerAuth

    def job_tools(self, base_url: str, headers: dict[str, str] | None = None, *,
                  shared_url: bool = False) -> list[dict[str, Any]]:
        """The job's ``tools``: ``[{"name", "server_url": base_url + "/tools/{name}", "headers"}]``;
        with ``shared_url`` every tool's ``server_url`` is ``base_url + "/tools"`` (the server
        dispatches on the body's ``name``; Azure AI Foundry's samples use one URL)."""
        base = base_url.rstrip("/")
        return [{"name": n, "server_url": f"{base}/tools" if shared_url else f"{base}/tools/{n}",
                 "headers": dict(headers or {})} for n in self._tools]

    def dataset_tools(self, fmt: str = "chat_completions", names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Tool definitions for a dataset line's ``tools``, in the server's order (registration order).

        Args:
            fmt: ``"chat_completions"`` (``{"type": "function", "function": {...}}``,
                the hosted dataset format) or ``"responses"`` (flat Responses API format).
            names: the tools to offer, by name (``None``: every tool). The selection keeps the
                server's order, whatever the order of ``names``; a name given twice counts once,
                and an empty ``names`` gives ``[]``. For a line that offers the model only some
                tools (``rft validate`` checks that each gold call names a tool the line offers).

        Raises:
            ValueError: unknown ``fmt``, or a name the server does not serve (the message lists
                the server's tool names).
            TypeError: ``names`` is a single string (pass a list: ``names=["get_book"]``).
        """
        if fmt not in ("chat_completions", "responses"):
            raise ValueError(f"fmt must be 'chat_completions' or 'responses', got {fmt!r}")
        tools = list(self._tools.values())
        if names is not None:
            if isinstance(names, str):
                raise TypeError(f"names must be an iterable of tool names, not the string {names!r}: "
                                f"pass names=[{names!r}]")
            wanted = dict.fromkeys(names)
            unknown = [n for n in wanted if n not in self._tools]
            if unknown:
                served = f"its tools are {list(self._tools)}" if self._tools else "it serves no tool yet"
                raise ValueError(f"dataset_tools(names=...): no tool named {', '.join(map(repr, unknown))} on this "
                                 f"server; {served}")
            tools = [d for name, d in self._tools.items() if name in wanted]
        if fmt == "chat_completions":
            return [d.chat_completions_format() for d in tools]
        return [d.responses_format() for d in tools]

    def grader_spec(self, base_url: str, name: str | None = None, headers: dict[str, str] | None = None,
                    rate_limit: int = 50, pass_threshold: float = 1.0) -> dict[str, Any]:
        """The job's endpoint grader: ``{"type": "endpoint", "name", "url", "headers",
        "rate_limit", "pass_threshold"}``. ``name=None`` means the default grader
        (``url`` = ``base_url + "/grade"``); a name gives ``base_url + "/grade/{name}"``.
        With a ``grader_secret`` the URL is ``base_url + "/grade/s/<secret>[/{name}]"``,
        served without headers (the exported config then holds the secret: keep it private).

        Raises:
            ValueError: no such grader (or no grader at all).
        """
        base = base_url.rstrip("/")
        if self._grader_secret:
            base = f"{base}/grade/s/{self._grader_secret}"
            default_url, named = base, f"{base}/{{}}"
        else:
            default_url, named = f"{base}/grade", f"{base}/grade/{{}}"
        if name is None:
            if self._default_grader is None:
                raise ValueError("this server has no grader; register one with @server.grader")
            gname, url = self._default_grader, default_url
        elif name in self._graders:
            gname, url = name, named.format(name)
        else:
            raise ValueError(f"no grader named {name!r}; available: {sorted(self._graders)}")
        return {"type": "endpoint", "name": gname, "url": url, "headers": dict(headers or {}),
                "rate_limit": int(rate_limit), "pass_threshold": float(pass_threshold)}

    def job_config(self, base_url: str, *, target: str = "openai", token: str | None = None,
                   headers: dict[str, str] | None = None, grader: str | None = None,
                   builtin_grader: Mapping[str, Any] | None = None, model: str | None = None,
                   training_file: str | None = None, validation_file: str | None = None,
                   suffix: str | None = None, seed: int | None = None, metadata: Mapping[str, str] | None = None,
                   max_episode_steps: int = 10, parallel_tool_calls: bool | None = None, rate_limit: int = 50,
                   pass_threshold: float = 1.0, compute_multiplier: HyperValue | None = None,
                   eval_interval: HyperValue | None = None, eval_samples: HyperValue | None = None,
                   n_epochs: HyperValue | None = None, batch_size: HyperValue | None = None,
                   learning_rate_multiplier: HyperValue | None = None, reasoning_effort: str | None = None,
                   submittable: bool = False, allow_unauthenticated: bool = False,
                   allow_insecure_url: bool = False) -> dict[str, Any]:
        """The hosted fine-tuning job for ``target`` (``"openai"`` or ``"azure"``), validated
        (``rft_sdk._jobs._config.validate_job``; fields, defaults and sources in ``docs/job-config.md``)::

            {"model"?, "training_file"?, "validation_file"?, "suffix"?, "seed"?, "metadata"?,
             "method": {"type": "reinforcement", "reinforcement": {
                "tools": [...], "grader": {...}, "max_episode_steps": int, "parallel_tool_calls"?,
                "hyperparameters"?: {"compute_multiplier"?, "eval_interval"?, "eval_samples"?,
                                     "n_epochs"?, "batch_size"?, "reasoning_effort"?,
                                     "learning_rate_multiplier"?}}}}

        Keys given as ``None`` are left out, so every hyperparameter the caller did not set
        is the service's own default (``"auto"`` on OpenAI; Azure documents ``eval_samples``
        5, ``eval_interval`` 1, ``reasoning_effort`` medium). Each hyperparameter is a positive
        number or ``"auto"``; ``reasoning_effort`` one of ``default|low|medium|high``.

        ``target="openai"``: one URL per tool (``base_url/tools/{name}``); ``token`` becomes
        ``Authorization: Bearer <token>`` on the tools and the grader.
        ``target="azure"``: every tool at the one shared URL ``base_url/tools`` (routed by
        the body's ``name``, as Microsoft's samples do), ``token`` becomes
        ``X-Functions-Key: <token>`` on the tools; the grader never carries headers
        (Azure's endpoint grader cannot send them), so a token needs a ``grader_secret``.
        With a ``grader_secret`` the grader URL is ``base_url/grade/s/<secret>`` without
        headers for both targets (the job then holds the secret: keep it private).

        A server that checks tokens (``auth_tokens`` or ``$RFT_AUTH_TOKENS``) refuses every
        call without one, so a job for it needs ``token`` or a token header in ``headers``
        (``Authorization``, ``X-Functions-Key`` or ``api-key``); ``allow_unauthenticated=True``
        writes it anyway (e.g. a gateway adds the header).

        ``builtin_grader`` (e.g. ``{"type": "string_check", ...}``) replaces the endpoint
        grader: the way to export a tools-only server.

        Raises:
            ValueError: the server has no grader and no ``builtin_grader`` is given (the
                message says what to do), an unknown grader name or target, a server that
                checks tokens and no token (unless ``allow_unauthenticated``), a field the
                service would refuse (named), an Azure grader that would need headers, or
                (``submittable=True``) no ``model``/``training_file`` (Azure: no
                ``validation_file``) or a URL the service cannot reach safely (loopback,
                private, plain http; unless ``allow_insecure_url``).
        """
        from .._jobs._config import TARGETS, validate_job
        from ._auth import TOKEN_HEADERS

        if target not in TARGETS:
            raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}")
        sent = dict(headers or {})
        if token:
            sent.update({"X-Functions-Key": token} if target == "azure" else {"Authorization": f"Bearer {token}"})
        credentialed = any(name.lower() in {h for h, _ in TOKEN_HEADERS} for name in sent)
        if self._auth.enabled and not credentialed and not allow_unauthenticated:
            raise ValueError("this server checks tokens (auth_tokens / $RFT_AUTH_TOKENS) but the job would send "
                             "none, so every tool call would answer 401: pass token= (rft job --token-env VAR), or "
                             "allow_unauthenticated=True (--allow-unauthenticated) if something else adds the header")
        if builtin_grader is not None:
            grader_obj: dict[str, Any] = dict(builtin_grader)
        elif self._default_grader is None and grader is None:
            raise ValueError("this server has no grader; register one with @server.grader, or export with "
                             "a built-in grader (job_config(builtin_grader={\"type\": \"string_check\", ...}), "
                             "rft job --builtin-grader JSON)")
        else:
            grader_headers = {} if (self._grader_secret or target == "azure") else sent
            if target == "azure" and (token or self._auth.enabled) and not self._grader_secret:
                raise ValueError("Azure AI Foundry's endpoint grader cannot send headers, so a server with a "
                                 "token needs ToolServer(grader_secret=...) (or $RFT_GRADER_SECRET): the grader "
                                 "is then exported as base_url/grade/s/<secret>")
            grader_obj = self.grader_spec(base_url, grader, grader_headers, rate_limit, pass_threshold)
        tools = self.job_tools(base_url, sent, shared_url=target == "azure")
        hyper = {"compute_multiplier": compute_multiplier, "eval_interval": eval_interval,
                 "eval_samples": eval_samples, "n_epochs": n_epochs, "batch_size": batch_size,
                 "reasoning_effort": reasoning_effort, "learning_rate_multiplier": learning_rate_multiplier}
        reinforcement = {"tools": tools, "grader": grader_obj, "max_episode_steps": max_episode_steps,
                         "parallel_tool_calls": parallel_tool_calls, "hyperparameters": hyper}
        job = {"model": model, "training_file": training_file, "validation_file": validation_file,
               "suffix": suffix, "seed": seed, "metadata": dict(metadata) if metadata is not None else None,
               "method": {"type": "reinforcement", "reinforcement": reinforcement}}
        out = validate_job(job, target, submittable=submittable,
                           allow_insecure_url=allow_insecure_url).model_dump(exclude_none=True)
        if not out["method"]["reinforcement"]["hyperparameters"]:  # nothing chosen: the service decides all
            del out["method"]["reinforcement"]["hyperparameters"]
        return out
