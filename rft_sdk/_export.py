"""Export a ``ToolServer`` into the hosted job's and dataset's shapes (hosted protocol §1, §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._grading import GraderDefinition
    from ._tool import ToolDefinition

__all__ = ["ExportMixin"]


class ExportMixin:
    """Export methods of ``ToolServer`` (needs ``_tools``, ``_graders``, ``_default_grader``)."""

    _tools: dict[str, ToolDefinition]
    _graders: dict[str, GraderDefinition]
    _default_grader: str | None
    _grader_secret: str | None

    def job_tools(self, base_url: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """The job's ``tools``: ``[{"name", "server_url": base_url + "/tools/{name}", "headers"}]``."""
        base = base_url.rstrip("/")
        return [{"name": n, "server_url": f"{base}/tools/{n}", "headers": dict(headers or {})}
                for n in self._tools]

    def dataset_tools(self, fmt: str = "chat_completions") -> list[dict[str, Any]]:
        """Tool definitions for a dataset line's ``tools``.

        Args:
            fmt: ``"chat_completions"`` (``{"type": "function", "function": {...}}``,
                the hosted dataset format) or ``"responses"`` (flat Responses API format).

        Raises:
            ValueError: unknown ``fmt``.
        """
        if fmt == "chat_completions":
            return [d.chat_completions_format() for d in self._tools.values()]
        if fmt == "responses":
            return [d.responses_format() for d in self._tools.values()]
        raise ValueError(f"fmt must be 'chat_completions' or 'responses', got {fmt!r}")

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

    def job_config(self, base_url: str, *, token: str | None = None, headers: dict[str, str] | None = None,
                   grader: str | None = None, max_episode_steps: int = 10, compute_multiplier: float = 1.0,
                   rate_limit: int = 50, pass_threshold: float = 1.0, eval_interval: int = 3,
                   eval_samples: int = 5, n_epochs: int = 1, batch_size: int = 16,
                   reasoning_effort: str = "medium") -> dict[str, Any]:
        """The full hosted job ``method`` shape (hosted protocol §1)::

            {"method": {"type": "reinforcement", "reinforcement": {
                "tools": [...], "grader": {...}, "max_episode_steps": int,
                "hyperparameters": {"compute_multiplier", "eval_interval", "eval_samples",
                                    "n_epochs", "batch_size", "reasoning_effort"}}}}

        ``token`` adds ``Authorization: Bearer <token>`` to every tool's and the
        grader's headers (on top of ``headers``); a grader behind a ``grader_secret``
        path gets no token (its URL is its credential).
        """
        sent = dict(headers or {})
        grader_headers = dict(sent)
        if token:
            sent["Authorization"] = f"Bearer {token}"
            if not self._grader_secret:
                grader_headers = sent
        return {"method": {"type": "reinforcement", "reinforcement": {
            "tools": self.job_tools(base_url, sent),
            "grader": self.grader_spec(base_url, grader, grader_headers, rate_limit, pass_threshold),
            "max_episode_steps": int(max_episode_steps),
            "hyperparameters": {"compute_multiplier": float(compute_multiplier), "eval_interval": eval_interval,
                                "eval_samples": eval_samples, "n_epochs": n_epochs, "batch_size": batch_size,
                                "reasoning_effort": reasoning_effort},
        }}}
