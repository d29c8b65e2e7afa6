"""The SandboxProvider seam: the coding examples run on a provider that has no local paths.

``PathlessProvider`` stands in for a remote sandbox service: it offers only the
protocol's methods (no ``path``, no ``resolve``), so any example code that
touches a local path fails here. No network: it wraps the local pool.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from rft_sdk.sandbox import SandboxLimits, SandboxPool, SandboxProvider
from rft_sdk.testing import run_server

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = frozenset({"trace_id", "run", "arun", "popen", "read_bytes", "read_text", "write_bytes", "write_text",
                     "list_dir", "files", "is_file", "relpath"})


class _RemoteBox:
    def __init__(self, box: Any) -> None:
        self._box = box

    def __getattr__(self, name: str) -> Any:
        if name not in ALLOWED:
            raise AttributeError(f"a remote sandbox has no {name!r} (examples must use the provider's methods)")
        return getattr(self._box, name)


class PathlessProvider:
    def __init__(self, pool: SandboxPool) -> None:
        self._pool, self.limits = pool, pool.limits

    def create(self, trace_id: str, template: Any = None) -> _RemoteBox:
        return _RemoteBox(self._pool.create(trace_id, template))

    def get(self, trace_id: str) -> _RemoteBox | None:
        box = self._pool.get(trace_id)
        return None if box is None else _RemoteBox(box)

    def for_rollout(self, rollout: object, template: Any = None) -> _RemoteBox:
        return _RemoteBox(self._pool.for_rollout(rollout, template))

    def release(self, trace_id: str) -> bool:
        return self._pool.release(trace_id)

    def sweep(self, now: float | None = None) -> int:
        return self._pool.sweep(now)

    def close(self) -> None:
        self._pool.close()


def test_the_local_pool_and_a_stand_in_satisfy_the_protocol(tmp_path: Path) -> None:
    pool = SandboxPool(tmp_path / "b")
    assert isinstance(pool, SandboxProvider) and isinstance(PathlessProvider(pool), SandboxProvider)
    with pytest.raises(AttributeError, match="remote sandbox has no 'path'"):
        _ = PathlessProvider(pool).create("t").path
    pool.close()


async def _call(client: httpx.AsyncClient, trace: str, name: str, args: dict[str, Any], item: dict[str, Any]) -> Any:
    cid = uuid.uuid4().hex[:12]
    body = {"type": "function_call", "id": f"fc_{cid}", "call_id": f"call_{cid}", "name": name,
            "arguments": json.dumps(args), "trace_id": trace, "item": item}
    resp = await client.post(f"/tools/{name}", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()["output"]


async def test_test_fix_runs_on_a_provider_without_local_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.test_fix import app

    provider = PathlessProvider(SandboxPool(tmp_path / "remote", limits=SandboxLimits(timeout_s=120)))
    monkeypatch.setattr(app, "pool", lambda: provider)
    item = json.loads((ROOT / "examples/test_fix/data/test.jsonl").read_text().splitlines()[0])
    with run_server(app.server) as url:
        async with httpx.AsyncClient(base_url=url, timeout=300) as client:
            for action in item["actions"]:
                await _call(client, "gold", action["name"], action["arguments"], item)
            assert "shelfkit/" in await _call(client, "gold", "list_dir", {"path": "."}, item)
            gold = await client.post("/grade", json={"sample": {"output_text": "done"}, "item": item,
                                                     "trace_id": "gold"})
            await _call(client, "hack", "write_file", {"path": "conftest.py", "content": "import os\nos._exit(0)\n"},
                        item)
            await _call(client, "hack", "run_tests", {"target": "tests"}, item)
            hack = await client.post("/grade", json={"sample": {"output_text": "done"}, "item": item,
                                                     "trace_id": "hack"})
    assert gold.json()["score"] == pytest.approx(1.0) and hack.json()["score"] == 0.0
    assert provider.get("gold") is None and provider.get("hack") is None
    provider.close()
