"""``Target``: the server a portability player drives (its own module so that every player
module, of this venv or an ecosystem's, imports it without importing the others)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["REPLAY_KEY", "Target", "replay_actions"]

#: an item's key naming the calls a player makes instead of its gold ``actions`` (``rft portability --variant
#: gold-minus-last``); the grader still reads ``actions``, so the item's gold stays what the rollout is scored against
REPLAY_KEY = "rft_replay_actions"


def replay_actions(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls a player makes for ``item``: ``item[REPLAY_KEY]`` when present, else its gold ``actions``
    (``[{"name", "arguments"}]``)."""
    actions = item.get(REPLAY_KEY, item.get("actions"))
    return list(actions or [])


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
