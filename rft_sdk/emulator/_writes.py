"""Which tools write: declared (``@tool(writes=...)``) or learnt from a gold dry run, never guessed.

The server answers ``GET /tools`` with ``"writes": {name: true | false | null}``: the
declaration, else what the tool's calls changed in that process (the rollout state
or the rollout database; ``null`` before any call). :func:`learn_write_tools` replays
every item's gold once (fresh rollouts, graded and discarded) when some gold tool is
still unknown, then asks again. ``rft doctor`` and ``rft emulate --policy perturbed``
use this one answer; ``--write-tools`` overrides it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from .._wire._tls import ssl_context
from ._client import ClientSettings
from ._job import ReinforcementJob
from ._policy import ReferenceReplayPolicy
from ._session import run_rollouts

__all__ = ["gold_tool_names", "learn_write_tools", "served_writes"]


def _base_url(server_url: str, name: str) -> str:
    url = server_url.rstrip("/")
    for suffix in (f"/tools/{name}", "/tools"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url.rsplit("/", 1)[0]


async def served_writes(job: ReinforcementJob, *, timeout_s: float = 10.0, field: str = "writes"
                        ) -> dict[str, bool | None]:
    """``{tool: writes}`` from each job tool server's ``GET /tools`` map ``field``: ``"writes"`` (declared,
    or learnt from every call the process served so far) or ``"declared"`` (``@tool(writes=...)`` only);
    tools whose server gives no such map (not an rft-sdk server, or an older one) are ``None``.

    Raises:
        httpx.HTTPError: a server could not be reached.
    """
    out: dict[str, bool | None] = {t.name: None for t in job.tools}
    bases: dict[str, dict[str, str]] = {}
    for t in job.tools:
        bases.setdefault(_base_url(t.server_url, t.name), dict(t.headers))
    async with httpx.AsyncClient(timeout=timeout_s, verify=ssl_context()) as client:
        for base, headers in bases.items():
            resp = await client.get(f"{base}/tools", headers=headers)
            if resp.status_code != 200:
                continue
            writes = resp.json().get(field)
            if isinstance(writes, dict):
                for name, value in writes.items():
                    if name in out and isinstance(value, bool):
                        out[name] = value
    return out


def gold_tool_names(items: Sequence[Mapping[str, Any]], actions_field: str = "actions") -> set[str]:
    """The tool names the items' gold ``actions`` call."""
    return {str(a.get("name")) for i in items for a in (i.get(actions_field) or []) if isinstance(a, Mapping)}


async def learn_write_tools(items: Sequence[Mapping[str, Any]], job: ReinforcementJob, *,
                            settings: ClientSettings | None = None, max_concurrency: int = 32,
                            actions_field: str = "actions") -> tuple[set[str], dict[str, bool | None]]:
    """The write tools: ``(names whose writes is true, the full map)``, after a gold dry run when a
    tool the gold calls is still unknown (one reference replay per item with gold fields).

    A tool the gold never calls and nobody declared stays ``None`` and is not counted as a write.

    Raises:
        httpx.HTTPError: a tool server could not be reached.
    """
    writes = await served_writes(job)
    unknown = {n for n in gold_tool_names(items, actions_field) if writes.get(n) is None}
    if unknown:
        gold = [dict(i) for i in items if isinstance(i.get(actions_field), list)
                and isinstance(i.get("reference_answer"), str)]
        if gold:
            await run_rollouts(gold, ReferenceReplayPolicy(actions_field), job, samples_per_item=1,
                               max_concurrency=max_concurrency, settings=settings)
            writes = await served_writes(job)
    return {n for n, w in writes.items() if w}, writes
