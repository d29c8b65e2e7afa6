"""``Target``: the server a portability player drives (its own module so that every player
module, of this venv or an ecosystem's, imports it without importing the others)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Target"]


@dataclass
class Target:
    """The server under test: ``base_url`` (hosted routes), ``token``, ``grader``, and where its
    surfaces are (``mcp_path``, ``openenv_path``)."""

    base_url: str
    token: str | None = None
    grader: str | None = None
    mcp_path: str = "/mcp"
    openenv_path: str = "/openenv"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}
