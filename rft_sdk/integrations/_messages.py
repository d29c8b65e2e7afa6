"""Prompt messages of a hosted dataset line, in the roles trainer libraries accept.

A hosted line's ``messages`` follow OpenAI's chat format, where a ``developer`` message is the
system prompt for newer models ("developer messages ... replace the previous system messages",
OpenAI's chat-completions API reference). verifiers (0.1.x ``Unknown role: developer``; 0.4's
message union has no ``developer`` tag) and other libraries know only ``system``, ``user``,
``assistant`` and ``tool``, so the adapters map ``developer`` to ``system`` and keep the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Roles that carry the system prompt in a hosted line (``developer`` is OpenAI's newer name for it).
SYSTEM_ROLES = frozenset({"system", "developer"})


def library_role(role: str) -> str:
    """``"system"`` for a system-prompt role (:data:`SYSTEM_ROLES`), else ``role`` unchanged."""
    return "system" if role in SYSTEM_ROLES else role


def text_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` with :func:`library_role` applied and ``None`` content as ``""``.

    Raises:
        KeyError: a message without a ``role``.
    """
    return [{"role": library_role(str(m["role"])), "content": m.get("content") or ""} for m in messages]
