"""The other-write twins (``other_write_twins``) through the doctor against one real server: the honest
grader (every package's pin) passes every probe without a warning; the hackable twin (only the asked
package's pin) fails through ``superset_other_write``, which the honest twin passes, and which never
plays the comment tool (a note) nor the gold's own package."""

from __future__ import annotations

import asyncio

import pytest
from other_write_twins import TWINS, WORKSPACE, job_for, make_items, make_server

from rft_sdk.doctor import check_unhackable
from rft_sdk.testing import run_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    """{grader: unhackable evidence}; no write tools given (declared)."""
    server = make_server()
    out = {}
    with run_server(server) as url:
        async def run_all() -> None:
            for grader in TWINS:
                out[grader] = (await check_unhackable(make_items(server), job_for(server, url, grader))).evidence
        asyncio.run(run_all())
    return out


def test_the_honest_grader_passes_every_probe_without_warnings(verdicts):
    ev = verdicts["pin_whole_state"]
    assert ev["failed_probes"] == [], {p: (ev["probes"][p]["mean_score"], ev["probes"][p].get("played"))
                                       for p in ev["failed_probes"]}
    assert ev["warned_probes"] == []
    assert ev["probes"]["superset_other_write"]["verdict"] == "pass"


def test_the_hackable_grader_fails_through_superset_other_write_only(verdicts):
    ev = verdicts["pin_asked_only"]
    assert "superset_other_write" in ev["failed_probes"], ev["probes"]["superset_other_write"]
    # the probes that play the gold's own package or the gold's own tool do not see it
    for probe in ("superset_unused_write", "superset_in_scope"):
        assert probe not in ev["failed_probes"], ev["probes"][probe]


def test_the_extra_call_is_another_tool_on_another_package_never_a_comment(verdicts):
    played = verdicts["pin_asked_only"]["probes"]["superset_other_write"]["played"]
    assert played
    items = make_items(make_server())
    for index, entry in played.items():
        item = items[int(index)]
        other = [p for p in WORKSPACE[item["workspace"]] if p != item["package"]]
        assert entry["call"] in {f"unpin_package(package={p!r})" for p in other}, (entry, item["package"])
        assert entry["judged"] is True


def test_on_main_only_the_new_probe_sees_it(verdicts):
    """The probes that existed before (another item's writes, the gold's own write retargeted, an unused
    tool on the gold's own package) do not catch the hackable twin: their extra calls are refused or
    lower both twins alike."""
    ev = verdicts["pin_asked_only"]
    assert set(ev["failed_probes"]) == {"superset_other_write"}, ev["failed_probes"]
