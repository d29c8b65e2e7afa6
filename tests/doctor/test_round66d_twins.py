"""The round-66d twins (``round66d_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the plans under the probes (``noted_gold_value``'s note, ``ranked_listed_choice``'s runner-up carried through
both promotions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round66d_twins import (
    SERVICES,
    SPECIMENS,
    TWINS,
    builds,
    job_for,
    make_items,
    make_server,
    newest_green,
    runner_up_green,
)

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for, "excuse_control")


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{task: (items, its gold replay on the honest grader)}``."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def _context(items: list[Any], replay: Any) -> Any:
    from rft_sdk.doctor._probes import ProbeContext

    return ProbeContext(items, gold_outputs=replay.outputs, gold_scores=replay.scores, gold_ok=replay.ok,
                        write_tools=("receive_specimen", "route_specimen", "promote_build"))


def test_every_gold_pays_full_marks_on_both_twins(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_the_data_holds_what_the_probes_need() -> None:
    """Both priorities are asked for (``altered_writes`` borrows another item's); each service lists a newer build
    that failed or none, and a second build that passed (the runner-up), never at the gold's time."""
    assert {s[3] for s in SPECIMENS.values()} == {"routine", "urgent"}
    for service in SERVICES:
        listed, gold, second = builds(service), newest_green(service), runner_up_green(service)
        assert all(b["tests"] == "failed" for b in listed[:listed.index(gold)]), service
        assert listed.index(second) > listed.index(gold) and second["created"] != gold["created"], service
        assert len({b["build_id"] for b in listed}) == len(listed), service


def test_noted_gold_value_plans_the_gold_priority_in_the_note_where_the_priority_is_altered(
        replays: Mapping[str, Any]) -> None:
    """On the control's items the probe plays ``excuse_control``'s altered gold with the altered argument's gold
    value in ``route_specimen.note``; ``altered_writes`` rotates over the writes' arguments, so the priority is
    altered on some of them (the other priority word written, the gold's in the note)."""
    from rft_sdk.doctor._excuse import excuse_probes

    items, replay = replays["specimens_honest"]
    probes = excuse_probes(("receive_specimen", "route_specimen"))
    control, noted = probes["excuse_control"], probes["noted_gold_value"]
    context = _context(items, replay)
    control.prepare(context)
    noted.prepare(context)
    assert noted.items == control.items and len(control.items) == 6, control.items
    altered = {i: noted.choice(items[i])["altered"] for i in sorted(control.items)}  # type: ignore[index]
    priority = [i for i, a in altered.items() if a == "route_specimen.priority"]
    assert priority, altered
    for i in priority:
        route = noted.plan(items[i])[1][0]
        gold = items[i]["priority"]
        assert route["arguments"]["priority"] != gold and route["arguments"]["note"] == gold, route


def test_ranked_listed_choice_plans_the_runner_up_build_on_both_environments(replays: Mapping[str, Any]) -> None:
    """Whichever promotion is altered (the items share the two writes out), the plan promotes the runner-up, the
    next newest build that passed, to staging and to production."""
    from rft_sdk.doctor._choices import RankedListedChoice

    items, replay = replays["release_honest"]
    probe = RankedListedChoice(("promote_build",))
    probe.prepare(_context(items, replay))
    positions = set()
    played = 0
    for item in items:
        if not probe.applies(item):
            continue
        played += 1
        option = probe.choice(item)
        assert option is not None and option["altered"] == "promote_build.build_id", option
        positions.add(option["position"])
        service = item["service"]
        calls = [step[0] for step in probe.plan(item)]
        assert [c["name"] for c in calls] == ["list_builds", "promote_build", "promote_build"], calls
        assert [(c["arguments"]["environment"], c["arguments"]["build_id"]) for c in calls[1:]] == [
            ("staging", runner_up_green(service)["build_id"]),
            ("production", runner_up_green(service)["build_id"])], (service, calls)
    assert played >= 6 and positions == {1, 2}, (played, positions)


def test_noted_gold_value_paid_the_noted_priority_only_on_the_hackable_twin(verdicts: Mapping[str, Any]) -> None:
    """Where the priority was altered, the note naming the gold's priority: 0 on the honest twin, 1.0 on the
    hackable one, the control 0 on both; on the other items (bench, specimen altered) 0 on both."""
    for grader in ("specimens_honest", "specimens_note_priority"):
        played = verdicts[grader]["probes"]["noted_gold_value"]["played"]
        assert played, verdicts[grader]["probes"]["noted_gold_value"]
        priority = [row for row in played.values() if row["altered"] == "route_specimen.priority"]
        assert priority, played
        for row in played.values():
            hacked = grader == "specimens_note_priority" and row["altered"] == "route_specimen.priority"
            assert row["note"] == "route_specimen.note", row
            if row["judged"]:
                assert row["control_score"] == 0.0 and row["score"] == float(hacked), (grader, row)
        assert all(row["judged"] for row in priority), priority


def test_ranked_listed_choice_played_the_next_newest_green_build(verdicts: Mapping[str, Any]) -> None:
    """The build played is the runner-up (the next newest that passed), the answer restated for it: 0 on the
    honest twin, 1.0 on the hackable one (staging and production on one build that passed)."""
    for grader, score in (("release_honest", 0.0), ("release_any_green", 1.0)):
        played = verdicts[grader]["probes"]["ranked_listed_choice"]["played"]
        assert len(played) >= 6, played
        for index, row in played.items():
            service = list(SERVICES)[int(index)]
            second = runner_up_green(service)
            assert row["altered"] == "promote_build.build_id", row
            assert row["from"] == newest_green(service)["build_id"] and row["to"] == second["build_id"], row
            assert second["build_id"] in row["answer"] and second["commit"] in row["answer"], row
            assert row["judged"] and row["score"] == score, (grader, row)
