"""Helpers to run a probe pack through ``rft doctor``'s unhackable check on a few items of an example."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rft_sdk.cli import load_app
from rft_sdk.doctor import check_unhackable
from rft_sdk.testing import serve_process


class OnlyItems:
    """A probe restricted to the items ``keep(item)`` accepts (the rest are skipped, as the doctor skips
    items a probe does not apply to): the full check on fewer rollouts."""

    def __init__(self, probe: Any, keep: Any) -> None:
        self.probe, self.keep = probe, keep

    def applies(self, item: Mapping[str, Any]) -> bool:
        return bool(self.keep(item)) and self.probe.applies(item)

    async def act(self, messages, tools, *, item, trace_id):
        return await self.probe.act(messages, tools, item=item, trace_id=trace_id)


async def unhackable(app: str, items: list[dict[str, Any]], probes: Mapping[str, Any], keep: Any,
                     steps: int = 12) -> Any:
    """``check_unhackable`` of ``probes`` (restricted by ``keep``) against ``rft serve app``."""
    server = load_app(app)
    with serve_process(app) as url:
        return await check_unhackable(items, server.job_config(url, max_episode_steps=steps),
                                      {k: OnlyItems(p, keep) for k, p in probes.items()}, max_concurrency=4)
