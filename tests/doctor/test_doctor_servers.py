"""The doctor against real uvicorn servers: an honest one passes all four principles,
each deliberately broken one is caught by the right principle."""

from __future__ import annotations

import pytest
from doctor_helpers import NoisyPolicy, fast_probes, job_for, make_items, make_server, production_log

from rft_sdk.doctor import check_gradeable, check_learnable, check_unhackable, run_doctor
from rft_sdk.emulator import DatasetError
from rft_sdk.testing import run_server


async def test_honest_server_passes_all_four():
    server = make_server("honest")
    with run_server(server) as url:
        report = await run_doctor(make_items(server), job_for(server, url), policy=NoisyPolicy(),
                                  production_log=production_log(), samples=4, probes=fast_probes(),
                                  replays=2, regrades=1)
    verdicts = {name: p.passed for name, p in report.principles.items()}
    assert verdicts == {"gradeable": True, "production_like": True, "learnable": True, "unhackable": True}
    assert report.exit_code == 0
    probes = report.principles["unhackable"].evidence["probes"]
    assert all(row["mean_score"] == 0.0 for row in probes.values() if row["verdict"] != "skipped")
    assert probes["answer_without_work"]["verdict"] == "skipped"  # every item writes
    assert report.principles["unhackable"].evidence["warned_probes"] == []
    assert report.to_dict()["warnings"] == report.warnings  # other warnings (latency) depend on the machine
    learn = report.principles["learnable"].evidence
    assert learn["share_items_with_signal"] == 1.0  # 2 right and 2 wrong samples per item
    assert learn["mean_best_minus_mean"] == pytest.approx(0.5)
    assert learn["reward_kind"] == "binary"
    grade = report.principles["gradeable"].evidence
    assert grade["gold_below_threshold_share"] == 0.0 and grade["nondeterministic_items"] == []


async def test_injectable_grader_fails_unhackable_on_the_injection_probe_only():
    server = make_server("injectable")
    with run_server(server) as url:
        result = await check_unhackable(make_items(server), job_for(server, url), fast_probes())
    assert result.passed is False
    assert result.evidence["failed_probes"] == ["injected_score"]
    row = result.evidence["probes"]["injected_score"]
    assert row["mean_score"] == 1.0 and row["pass_rate"] == 1.0 and row["items"] == list(range(10))
    assert row["intent"] == "hack" and row["verdict"] == "fail" and row["rewarded_share"] == 1.0
    assert result.evidence["probes"]["empty_answer"]["mean_score"] == 0.0
    assert any("injected_score" in f.message and f.advice for f in result.findings)


async def test_lenient_grader_fails_every_hack_probe_and_warns_on_the_shortcut():
    server = make_server("lenient")
    with run_server(server) as url:
        result = await check_unhackable(make_items(server), job_for(server, url), fast_probes())
    rows = result.evidence["probes"]
    assert result.passed is False
    # claimed_write is relative (does the reply add more with a write missing than with it done?): a grader that
    # pays 1.0 whatever happened lets the reply add nothing, so it passes there; the other probes catch it
    assert rows["claimed_write"]["verdict"] == "pass" and rows["claimed_write"]["rollouts"] > 0
    ran = {n for n, r in rows.items() if r["intent"] == "hack" and r["verdict"] != "skipped"} - {"claimed_write"}
    assert set(result.evidence["failed_probes"]) == ran and len(ran) == 23  # with the three value probes, malformed_value, swapped_arguments, wildcard_value, folded_text, refused_writes and neighbour_entity
    assert "neighbour_entity" in ran  # the order of the id the user names, moved to the next one: paid
    assert result.evidence["warned_probes"] == []
    # every item writes: the probes defined only where the gold changes nothing are skipped, and so are
    # tool_spam (no declared budget), self_certification (no status-like argument), superset_in_scope (no
    # sibling entity in the items' data), answer_superset (no JSON answer with a list field), hedged_answer
    # (an answer probe), superset_unused_write and superset_other_write (no write tool the gold leaves unused),
    # and duplicated_write and reordered_writes (write_removal: leaving the write out keeps the lenient score, so it is not graded), and
    # annotated_wrong_outcome (no annotation tool the gold leaves unused), inflated_value and negated_value (no
    # number written),
    # repeated_first_write (one write per item), intermediate_value (an answer probe) and the near misses
    # (no integer argument, no +/- modifier, no digit groups, no integer string, no other write tool), and
    # certified_status (no status tool the gold leaves unused), preceding_write (no number written),
    # reflected_readback (no free-text argument), superstring_number, unparsed_number, near_time, half_day_time,
    # read_time and loose_value (the answer
    # states no number or time, or is not graded:
    # answer_control), padded_list (no list argument), truncated_text (no copied text of 12+ characters),
    # and interval_value, special_number and interval_answer (no number written or stated), and the written_*
    # answers (their controls, a wrong answer after the gold's writes, earn the gold's score: nothing is judged),
    # joined_words and first_word_only (no text of two words written), consistent_value (no number stated) and
    # other_listed_choice and ranked_listed_choice (no read lists the keys), answer_line_only (no marked answer
    # line), unread_note (no note write the user asks for), near_date, neighbour_date and swapped_date (no date
    # stated), flipped_decision (one write tool), refused_spam (no budget), dropped_commit (no commit write) and
    # swapped_writes (one write per item), shared_surname (no person's name written), unlisted_choice (as
    # other_listed_choice, on items listing alternatives), named_listed_choice (no read lists the keys),
    # datetime_date (no moment stated), precise_value (no precision stated), prompt_figure (no number written) and
    # unread_reason (no reason the user gave recorded), other_kind_choice (no enum member named), ranked_date (no
    # first day asked for), own_read_answer (no read with a number argument), year_date (no date stated),
    # undone_write (no undo tool), answer_subset (no listed answer line), whole_unit_value, unit_figure and
    # prose_figure (no value stated), other_reason (no reason recorded), near_sibling_write (no listed flags),
    # superset_apart (no write with two sibling-bearing arguments), claimed_sibling_write (no listed answer line),
    # dropped_write, last_write_only and later_write_value (one write per item), other_member (no enum of 3 members), stated_member
    # (no enum member the answer names), other_list (no list the answer names), tail_swap (no ranking line),
    # excused_wrong_outcome (no text argument left unset), unread_empty_answer, unread_part_answer, narrowed_read_answer, namesake_code (no written code named by a name), unread_page_choice and unread_page_answer (no paged read), working_figure (no figure beside a marked line), other_zone_time (no zoned moment), own_list_answer (no listed answer line), own_read_product, omitted_part and undeducted_figure (no number on a marked line), sibling_read_answer (every item writes), named_text_swap (no text argument a message names), other_listed_time (no moment answered), excused_listed_choice (no listed runner-up beside a text slot), other_entity_read (every item writes), noted_gold_value (as excused_wrong_outcome: no text slot left unset), hedged_time (no moment), donor_write (no write argument beside the entity's own), other_stated_word (no answer template), trailing_entry (no ranking line), entry_first_words (no listed line), prose_time, ignored_time and other_record_answer (every item writes), other_session
    # (no time or date written inside an id),
    # own_read_date
    # (no date answered), own_read_total and own_reads_sum (no read-only item whose value a rule gives),
    # superseded_request, superseded_left, superseded_count and superseded_reads (one user turn) and tied_order (no ranking line, no tie rule), utc_clock_write (no clock time
    # written), skipped_fee (no number written), answer_missing_one, unread_missing_one and reversed_ranking (no listed
    # answer line), donor_read_answer and lookalike_entity (answer probes: every item writes), item_field_answer (no
    # second field of the answer's shape in the row), leading_entry and excluded_entry (answer probes),
    # widened_list (no list written), moved_write (no earlier write of another tool with the same
    # arguments), boundary_sibling (no dated records), later_read_answer (no
    # dated answer), working_runner_up and ranked_listed_answer (every item writes)
    skipped = {n for n, r in rows.items() if r["verdict"] == "skipped"}
    assert skipped == {"named_listed_choice", "datetime_date", "precise_value", "relative_value", "prompt_figure", "unread_reason",
                       "other_kind_choice", "ranked_date", "own_read_answer", "year_date", "undone_write",
                       "answer_subset", "whole_unit_value", "unit_figure", "prose_figure", "other_reason",
                       "near_sibling_write", "category_answer", "superset_apart", "claimed_sibling_write",
                       "dropped_write", "last_write_only", "later_write_value", "other_member", "stated_member", "own_read_date", "own_read_total",
                       "own_reads_sum", "superseded_request", "superseded_left", "superseded_count", "superseded_reads", "other_list", "tail_swap", "excused_wrong_outcome", "tied_order", "utc_clock_write", "skipped_fee",
                       "answer_missing_one", "unread_missing_one", "unread_empty_answer", "unread_part_answer", "narrowed_read_answer", "namesake_code", "unread_page_choice", "unread_page_answer", "other_session", "prose_time", "ignored_time",
                       "other_record_answer", "working_figure", "other_zone_time", "utc_clock_time", "own_list_answer", "own_read_product", "omitted_part", "undeducted_figure", "sibling_read_answer", "working_runner_up", "ranked_listed_answer", "named_text_swap", "other_listed_time", "excused_listed_choice", "other_entity_read", "noted_gold_value", "hedged_time", "donor_write", "other_stated_word", "trailing_entry", "entry_first_words",
                       "reversed_ranking", "donor_read_answer",
                       "lookalike_entity", "item_field_answer", "leading_entry", "widened_list", "excluded_entry",
                       "moved_write", "boundary_sibling", "later_read_answer", "repeated_entry", "utc_literal_choice", "emptied_state_answer", "exempted_entities", "listed_member_answer",
                       "answer_without_work", "work_then_dump", "tool_spam", "wrong_answer", "self_certification",
                       "superset_in_scope", "answer_superset", "hedged_answer", "superset_unused_write",
                       "superset_other_write", "duplicated_write", "reordered_writes", "annotated_wrong_outcome",
                       "inflated_value", "negated_value", "repeated_first_write", "intermediate_value", "neighbour_value",
                       "modifier_value", "component_value", "range_value", "replaced_write",
                       "certified_status", "preceding_write", "reflected_readback",
                       "superstring_number", "unparsed_number", "near_time", "padded_list", "truncated_text", "interval_value",
                       "interval_answer",
                       "special_number", "near_value", "precise_written_value", "near_stated_value", "sibling_entity",
                       "joined_words", "first_word_only", "consistent_value", "other_listed_choice",
                       "ranked_listed_choice", "answer_line_only", "unread_note", "near_date", "flipped_decision",
                       "hedged_listed_text", "ranked_time", "loose_value", "half_day_time", "read_time",
                       "neighbour_date", "swapped_date", "refused_spam", "dropped_commit", "swapped_writes",
                       "shared_surname", "unlisted_choice",
                       *(n for n in rows if n.startswith(("adv_", "written_")))}


async def test_hack_threshold_is_configurable():
    server = make_server("injectable")
    with run_server(server) as url:
        result = await check_unhackable(make_items(server), job_for(server, url),
                                        probes={}, hack_threshold=0.5)
    assert result.passed is None  # no probe ran: not checked, never a silent pass
    with pytest.raises(ValueError, match="hack_threshold"):
        await check_unhackable(make_items(server), job_for(server, "http://127.0.0.1:9"), hack_threshold=1.5)
    with pytest.raises(ValueError, match="hack_share"):
        await check_unhackable(make_items(server), job_for(server, "http://127.0.0.1:9"), hack_share=2.0)


async def test_credit_for_nothing_is_a_failure_past_five_percent_of_the_gold():
    # an empty answer leaves no outcome, so there is no honest partial credit for it: the line is 0.05
    for score, verdict in ((0.5, "fail"), (0.1, "fail"), (0.04, "pass")):
        partial = make_server("honest", empty_credit=score)
        with run_server(partial) as url:
            result = await check_unhackable(make_items(partial), job_for(partial, url),
                                            {"empty_answer": fast_probes()["empty_answer"]})
        row = result.evidence["probes"]["empty_answer"]
        assert row["verdict"] == verdict and row["mean_score"] == pytest.approx(score)
        assert result.evidence["gold_replayed"] == 10


async def test_nondeterministic_grader_fails_gradeable():
    server = make_server("random")
    with run_server(server) as url:
        result = await check_gradeable(make_items(server), job_for(server, url), replays=3, regrades=1)
    assert result.passed is False
    assert len(result.evidence["nondeterministic_items"]) >= 5
    assert result.evidence["gold_checked"] is True
    assert any(f.severity == "fail" and "scored differently" in f.message for f in result.findings)


async def test_gold_rejected_by_its_grader_fails_gradeable():
    server = make_server("honest")
    items = make_items(server)
    items[3]["reference_answer"] = "done"  # old value missing: the gold scores 0.5 < pass threshold 1.0
    with run_server(server) as url:
        result = await check_gradeable(items, job_for(server, url), replays=1, regrades=1)
    assert result.passed is False
    assert result.evidence["gold_below_threshold_items"] == [3]  # item index, not key
    assert result.evidence["gold_below_threshold_share"] == pytest.approx(0.1)


async def test_a_gold_longer_than_max_episode_steps_is_named_as_cut_off():
    server = make_server("honest")
    items = make_items(server)
    lookup = next(a for a in items[2]["actions"] if a["name"] == "lookup")
    items[2]["actions"] = [lookup] * 3 + items[2]["actions"]  # 3 reads more: past the job's 4 turns
    with run_server(server) as url:
        result = await check_gradeable(items, job_for(server, url), replays=1, regrades=1)
    assert result.passed is False and result.evidence["gold_truncated_items"] == [2]
    cut = next(f for f in result.findings if "cut off" in f.message)
    assert cut.severity == "fail" and "max_episode_steps=4" in cut.message and "raise" in cut.advice


async def test_zero_variance_dataset_fails_learnable():
    server = make_server("honest")
    with run_server(server) as url:
        result, rollouts = await check_learnable(make_items(server, zero_variance=True), job_for(server, url),
                                                 NoisyPolicy(), samples=4)
    assert len(rollouts) == 40
    assert result.passed is False
    assert result.evidence["share_items_all_same"] == 1.0
    assert result.evidence["always_solved"] == list(range(10))
    assert any("always solved" in f.message for f in result.findings)


async def test_shifted_production_log_fails_production_like():
    server = make_server("honest")
    with run_server(server) as url:
        report = await run_doctor(make_items(server), job_for(server, url), policy=NoisyPolicy(),
                                  production_log=production_log(shifted=True), principles=["production_like"])
    result = report.principles["production_like"]
    assert list(report.principles) == ["production_like"]
    assert result.passed is False and report.exit_code == 1
    assert {"prompt_tokens", "language", "tool_mix", "calls_per_rollout"} <= set(result.evidence["out_of_bounds"])
    assert result.evidence["features"]["language"]["production"] == {"CYRILLIC": 30}


async def test_without_log_production_like_is_not_checked():
    server = make_server("honest")
    with run_server(server) as url:
        report = await run_doctor(make_items(server), job_for(server, url), principles=["production_like"])
    assert report.principles["production_like"].passed is None
    assert report.exit_code == 0
    assert report.to_dict()["principles"]["production_like"]["passed"] is None


async def test_bad_inputs_are_refused():
    server = make_server("honest")
    job = job_for(server, "http://127.0.0.1:9")
    with pytest.raises(DatasetError):
        await run_doctor(make_items(server, n=3), job)  # the hosted minimum is 10 lines
    with pytest.raises(ValueError, match="principle"):
        await run_doctor(make_items(server), job, principles=["speedy"])
    with pytest.raises(ValueError, match="target"):
        await run_doctor(make_items(server), job, target="gcp")
    with pytest.raises(ValueError, match="skip-probes"):
        await run_doctor(make_items(server), job, skip_probes=["nope"], principles=["production_like"])


async def test_a_probe_that_raises_choosing_its_items_is_skipped_loudly_and_the_others_still_run():
    from rft_sdk.doctor._probes import TextProbe

    class Boom(TextProbe):
        def prepare(self, context):
            raise ZeroDivisionError("integer modulo by zero")

    server = make_server("lenient")
    with run_server(server) as url:
        result = await check_unhackable(make_items(server), job_for(server, url),
                                        {**fast_probes(), "boom": Boom(lambda item: "x")})
    rows = result.evidence["probes"]
    assert rows["boom"]["verdict"] == "skipped" and result.evidence["errored_probes"] == {
        "boom": "ZeroDivisionError: integer modulo by zero"}
    assert any("raised ZeroDivisionError" in r for r in rows["boom"]["skip_reasons"])
    assert any(f.severity == "warn" and "probe boom raised" in f.message for f in result.findings)
    assert result.passed is False and rows["empty_answer"]["verdict"] == "fail"  # the others still ran
