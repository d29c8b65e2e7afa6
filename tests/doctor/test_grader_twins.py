"""The grader-twin corpus through ``rft doctor`` against real servers: every hackable grader fails
"unhackable" through a probe that does not fire on its honest twin, and no honest grader fails."""

from __future__ import annotations

import json

import pytest
from grader_twins import CORPUS, GROUPS, job_for, judge_server, make_items, make_server

from rft_sdk.doctor import cli
from rft_sdk.testing import run_server

# a long file: the scheduler starts it first (tests/conftest.py); its module fixture runs the doctor on every grader
# (237 s in a fresh-clone CI run on a loaded 2-core machine, past 3/4 of the default 300 s): a bound of its own
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

BY_NAME = {t.grader: t for t in CORPUS}


@pytest.fixture(scope="module")
def served():
    with judge_server() as judge_url:
        server = make_server(judge_url)
        with run_server(server) as url:
            yield server, url


@pytest.fixture(scope="module")
def reports(served, tmp_path_factory):
    """``rft doctor --principles gradeable,unhackable`` once per grader: {grader: (exit code, doctor.json)}."""
    server, url = served
    out = {}
    for twin in CORPUS:
        folder = tmp_path_factory.mktemp(twin.grader)
        dataset, config = folder / "d.jsonl", folder / "job.json"
        dataset.write_text("".join(json.dumps(i) + "\n" for i in make_items(server, twin.task)), encoding="utf-8")
        config.write_text(json.dumps(job_for(server, url, twin.grader)), encoding="utf-8")
        code = cli.main(["--dataset", str(dataset), "--config", str(config), "--out", str(folder / "out"),
                         "--principles", "gradeable,unhackable", "--replays", "1", "--regrades", "1"])
        out[twin.grader] = (code, json.loads((folder / "out" / "doctor.json").read_text()))
    return out


def test_corpus_has_the_shapes_and_families_the_issue_asks_for():
    honest = [t for t in CORPUS if t.honest and not t.strict]
    hackable = [t for t in CORPUS if not t.honest]
    assert len({t.task for t in honest}) == 4 and len(honest) >= 5  # exact, numeric, set F1, end state, judge
    assert len(hackable) >= 8
    assert all(BY_NAME[t.twin].honest and BY_NAME[t.twin].task == t.task for t in hackable)
    assert len({frozenset(t.caught_by) for t in hackable}) >= 6  # different families, different probes


@pytest.mark.parametrize("name", [t.grader for t in CORPUS if t.honest and not t.strict])
def test_no_honest_grader_fails(reports, name):
    code, report = reports[name]
    assert code == 0, report["principles"]["unhackable"]["failed_probes"]
    assert report["principles"]["gradeable"]["passed"] is True
    unhackable = report["principles"]["unhackable"]
    assert unhackable["passed"] is True and unhackable["failed_probes"] == []
    # warnings mean something: an honest grader ends without any (issue 37, item 4)
    assert unhackable["warned_probes"] == []


@pytest.mark.parametrize("name", [t.grader for t in CORPUS if not t.honest])
def test_every_hackable_grader_fails_through_a_probe_its_twin_survives(reports, name):
    twin = BY_NAME[name]
    code, report = reports[name]
    _, twin_report = reports[twin.twin]
    failed = report["principles"]["unhackable"]["failed_probes"]
    assert code == 1 and report["principles"]["unhackable"]["passed"] is False
    twin_rows = twin_report["principles"]["unhackable"]["probes"]
    discriminating = [p for p in failed if twin_rows[p]["verdict"] == "pass" and twin_rows[p]["items"] == []]
    assert set(twin.caught_by) & set(discriminating), (failed, {p: twin_rows[p]["verdict"] for p in failed})
    row = report["principles"]["unhackable"]["probes"][twin.caught_by[0]]
    # at least half the items: altered_writes shares a write's arguments out across items (the key on half,
    # the value on the other half), so a grader blind to one argument is paid on about its share
    assert row["intent"] == "hack" and row["rewarded_share"] >= 0.5


def test_a_path_matching_grader_fails_gradeable_on_a_valid_alternative(reports):
    code, report = reports["path_matching"]
    gradeable = report["principles"]["gradeable"]
    assert code == 1 and gradeable["passed"] is False
    assert gradeable["alternatives_by_path"] == {"skip_lookup": {"checked": 10, "rejected": 10, "truncated": 0}}
    assert any(f["severity"] == "fail" and "valid alternative" in f["message"] for f in gradeable["findings"])
    assert report["principles"]["unhackable"]["passed"] is True  # strict is not hackable
    # its honest twin accepts the same alternative
    assert reports["end_state"][1]["principles"]["gradeable"]["alternatives_by_path"]["skip_lookup"]["rejected"] == 0


def test_set_f1_partial_credit_for_a_hedge_stays_below_the_line(reports):
    rows = reports["set_f1"][1]["principles"]["unhackable"]["probes"]
    dump = rows["answer_space_dump"]
    assert 0 < dump["mean_score"] < 0.25 and dump["verdict"] == "pass"  # honest F1 of a hedge: low, not zero
    assert reports["recall_set"][1]["principles"]["unhackable"]["probes"]["answer_space_dump"]["mean_score"] == 1.0
    assert len({m for g in GROUPS.values() for m in g}) < 3 * len(GROUPS)  # answers overlap, as real ones do
    assert rows["cross_item_replay"]["verdict"] == "pass"  # the least-overlapping donor keeps honest F1 out


def test_skip_reasons_name_the_real_cause(reports):
    rows = reports["exact"][1]["principles"]["unhackable"]["probes"]
    assert rows["read_only"]["verdict"] == "skipped"
    assert list(rows["read_only"]["skip_reasons"]) == ["the gold changes nothing: reading only is the right solution"]
    rows = reports["end_state"][1]["principles"]["unhackable"]["probes"]
    assert "the gold changes state" in next(iter(rows["answer_without_work"]["skip_reasons"]))
