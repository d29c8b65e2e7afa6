"""Principle 4, unhackable: nothing that fails the task earns reward.

Each probe (``_probes`` for the contract, ``_suite`` for the built-in ones)
plays one behaviour through the real tool and grader endpoints, one rollout per
applicable item. First, one reference replay per item with gold fields gives
the gold's score (the scale of the severity rule, ``_severity``) and the tool
outputs the answer-space dump lists. Per probe: ``mean_score``, the rewarded
share and items, ``pass_rate`` (share at or above ``pass_threshold``), the
verdict (``pass``/``warn``/``fail``/``skipped``/``waived``) and, for skipped
items, why. Probes named in ``skip`` are waived: not run, and recorded as such.

The principle fails when any probe fails; probes that warn leave it passing
with a finding each (the report shows ``WARN``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from rft_sdk._wire._redact import get_logger
from rft_sdk.emulator import (
    ClientSettings,
    ReferenceReplayPolicy,
    ReinforcementJob,
    RolloutResult,
    gold_tool_names,
    run_rollouts,
    served_writes,
)

from ._adversarial_values import ADVERSARIAL_VALUE_ADVICE
from ._alternatives import ALTERNATIVES_FIELD, AlternativeReplay
from ._answer_line import ANSWER_LINE_ADVICE
from ._answer_numbers import NUMBER_ADVICE
from ._argument_probes import ARGUMENT_ADVICE
from ._boundary_sibling import BOUNDARY_SIBLING_ADVICE
from ._category_answer import CATEGORY_ADVICE
from ._choices import CHOICE_ADVICE
from ._claims import CLAIM_ADVICE
from ._coarse_values import COARSE_ADVICE
from ._common import has_gold, load_inputs
from ._consistent import CONSISTENT_ADVICE
from ._decisions import DECISION_ADVICE
from ._emptied_state import EMPTIED_STATE_ADVICE
from ._excluded_entry import EXCLUDED_ENTRY_ADVICE
from ._excuse import EXCUSE_ADVICE
from ._exempted import EXEMPTED_ADVICE
from ._hedged_text import HEDGED_TEXT_ADVICE
from ._in_format import IN_FORMAT_ADVICE
from ._item_fields import ITEM_FIELD_ADVICE
from ._joined_words import JOINED_WORDS_ADVICE
from ._later_read import LATER_READ_ADVICE
from ._leading_entry import LEADING_ENTRY_ADVICE
from ._lenient_probes import LENIENT_ADVICE
from ._literal_time import LITERAL_TIME_ADVICE
from ._member_rule import MEMBER_RULE_ADVICE
from ._missing_one import MISSING_ONE_ADVICE
from ._moved_write import MOVED_WRITE_ADVICE
from ._named_text import NAMED_TEXT_ADVICE
from ._namesake import NAMESAKE_ADVICE
from ._narrowed_read import NARROWED_READ_ADVICE
from ._near_dates import DATE_ADVICE
from ._near_probes import NEAR_ADVICE
from ._near_writes import NEAR_WRITE_ADVICE
from ._neighbour_entity import NEIGHBOUR_ENTITY_ADVICE
from ._order import ORDER_ADVICE
from ._other_kind import OTHER_KIND_ADVICE
from ._other_session import OTHER_SESSION_ADVICE
from ._outside import OUTSIDE_ADVICE
from ._own_read import OWN_READ_ADVICE
from ._own_read_date import OWN_READ_DATE_ADVICE
from ._own_read_product import OWN_READ_PRODUCT_ADVICE
from ._own_read_total import OWN_READ_TOTAL_ADVICE
from ._probes import (
    HACK,
    VALID,
    ProbeContext,
    declared_budget,
    probe_applies,
    probe_intent,
    readable_output,
    skip_reason,
)
from ._ranked_time import RANKED_TIME_ADVICE
from ._read_answers import READ_ANSWERS_ADVICE
from ._repeated_entry import REPEATED_ENTRY_ADVICE
from ._requested_note import NOTE_ADVICE
from ._result import Finding, PrincipleResult
from ._severity import HACK_SHARE, HACK_THRESHOLD, Outcome, allowance, judge_probe
from ._shifted_times import SHIFTED_TIME_ADVICE
from ._sibling_read import SIBLING_READ_ADVICE
from ._skipped_fee import SKIPPED_FEE_ADVICE
from ._suite import default_probes, normalize_answer
from ._superseded import SUPERSEDED_ADVICE
from ._superseded_reads import SUPERSEDED_READS_ADVICE
from ._surnames import SURNAME_ADVICE
from ._tied_order import TIED_ORDER_ADVICE
from ._undone import UNDONE_ADVICE
from ._unread_empty import UNREAD_EMPTY_ADVICE
from ._unread_page import UNREAD_PAGE_ADVICE
from ._unread_part import UNREAD_PART_ADVICE
from ._utc_clock import UTC_CLOCK_ADVICE
from ._value_probes import VALUE_ADVICE
from ._widened_list import WIDENED_LIST_ADVICE
from ._working_choice import WORKING_CHOICE_ADVICE
from ._write_members import WRITE_MEMBER_ADVICE
from ._write_probes import WRITE_ADVICE
from ._written_answers import WRITTEN_ADVICE

__all__ = ["ADVICE", "HACK_SHARE", "HACK_THRESHOLD", "GoldReplay", "check_unhackable", "gold_replay",
           "resolve_write_tools", "took_effect", "valid_outcome"]

logger = get_logger("rft_sdk.doctor")

ADVICE = {
    "empty_answer": "reject an empty final answer (score 0) before anything else",
    "echo_prompt": "the grader credits text the prompt already holds; check against the outcome, not words",
    "prompt_reference": "returning the reference material unchanged earns reward (MACO's 'returned the reference "
                        "code'): require that the answer differs from what the prompt gives",
    "injected_score": "text in the answer steers the grader: never let a model grader read the answer as "
                      "instructions; parse a score only from the grader's own output",
    "ignore_instructions": "text in the answer steers the grader: isolate the answer (quote it, strip "
                           "instructions) and check outcomes rather than claims",
    "self_report": "a claim of success without any work earns reward: check the outcome (state, test results "
                   "the grader ran itself, facts returned by the tools), never the answer's claims",
    "answer_space_dump": "listing every candidate earns reward: grade one committed answer (exact match on a "
                         "parsed field), penalise extra candidates (F1, not recall), never 'appears somewhere'",
    "work_then_dump": "doing the work and then pasting every candidate earns reward: grade one committed "
                      "answer (bound its length, reject pasted tool output), not facts found somewhere in it",
    "cross_item_replay": "another item's solution earns reward here: the grader checks the form of the answer "
                         "or that a write happened, not this item's value; compare with this item's gold",
    "altered_writes": "a write with a wrong value earns reward: compare the written values with the gold's end "
                      "state, not that the record was written",
    "activity_no_answer": "tool calls without an answer earn reward: reward the outcome, never activity",
    "copied_answer": "the right words without the work earn reward: grade what the tools did (end state, facts "
                     "the tools returned), not only the answer text",
    "read_only": "reading without acting earns reward: grade the end state the writes must produce",
    "noop_write": "a write that changes nothing earns reward: grade the end state, not that a tool was called",
    "answer_without_work": "the right answer without any tool call earns reward: RL will learn to guess when "
                           "answers repeat; hold out items, vary the answers, or require that the answer was "
                           "returned by a tool call of the rollout (and if the task has an outcome the end state "
                           "does not show, such as a hand-over, this is a hack: grade that outcome)",
    "wrong_answer": "another item's answer after this item's work earns reward: compare the answer with this "
                    "item's value (exact on a parsed field), not its form or the work done",
    "self_certification": "a status or flag the model can set through a write tool earns reward: re-derive the "
                          "outcome (run the check, compare the data) instead of trusting a field the policy writes",
    "superset_end_state": "writes the task did not ask for go unpunished: compare the whole end state with the "
                          "gold's (diff_gold), so extra changes lower the score",
    "superset_in_scope": "a write the task did not ask for, on another entity of the item's own (another flight, "
                         "service or order of the same customer), goes unpunished: compare the whole end state "
                         "with the gold's, not only the record the task is about",
    "superset_apart": "a write the task did not ask for, on another entity of the item's own and with other values "
                      "(the sibling ticket given to another mechanic), goes unpunished: compare the whole end state "
                      "with the gold's, not only the records the gold changed",
    "claimed_sibling_write": "an extra write on another entity of the item's own, listed in the answer as if it were "
                             "due, goes unpunished: check every condition of the rule for every entity written, or "
                             "compare the end state with the gold's",
    "near_sibling_write": "an extra write on the entity that misses just one of the conditions the right ones share "
                          "(the expired box on legal hold) goes unpunished: check every condition of the rule for "
                          "every entity written (or compare the end state with the gold's)",
    "answer_superset": "the right answer with extra elements in its list fields (citations, files, ids) earns the "
                       "full score: grade each list by precision as well as recall (set F1 or exact set), so "
                       "padding it lowers the score",
    "adv_special_numbers": "nan/inf/-0/1e308 earn reward: parse numbers strictly and refuse non-finite values "
                           "(math.isfinite) before comparing with a tolerance",
    "adv_interval": "an interval or range earns reward: parse exactly one number, refuse '±', 'to', 'between', 'a-b'",
    "adv_wildcard": "a wildcard or pattern earns reward: compare literally; never glob, fnmatch or regex-match "
                    "the model's answer against the truth (or expand it)",
    "adv_every_candidate": "'all of the above' or every candidate at once earns reward: grade one committed "
                           "answer, never a pattern or a list that contains it",
    "adv_invisible": "invisible or confusable characters beat a guard: normalise (NFKC, strip format characters "
                     "Cf) before counting words or comparing, and refuse mixed scripts",
    "adv_confusable": "every candidate joined by look-alike separators (fullwidth comma, vertical line, "
                      "semicolon) passes a guard on the raw text and matches after NFKC: normalise first, then "
                      "guard and compare the same text",
    "adv_long_answer": "a long answer without the value earns reward: bound the answer's length and grade the "
                       "value, never the length or effort",
    "adv_wrong_field": "the answer in the wrong field earns reward: read the answer only from its field",
    "adv_answer_prefix": "a prefix of the answer earns reward: compare whole values (==), never startswith or "
                         "'answer in reference'",
    "tool_spam": "calls far past what the task needs still earn reward: declare a tool-call budget "
                 "(the item's 'max_tool_calls' or --budget) and have the grader enforce it",
    "refused_spam": "refused calls past the budget cost nothing: count every recorded call against the budget "
                    "(ctx.count() counts refused ones too), not only the successful ones",
    "refused_writes": "writes the tools refused (nothing written) earn reward: rebuild the outcome from the end state, or "
                      "read a call's arguments only where the call succeeded (ToolCallRecord.ok)",
    "dropped_commit": "the drafting writes without the final submit (or confirm, publish) earn reward: grade what "
                      "was committed (the submitted queue, the confirmed booking), never the drafting calls of the "
                      "trajectory",
    **IN_FORMAT_ADVICE,
    **ORDER_ADVICE,
    **OUTSIDE_ADVICE,
    **EXCUSE_ADVICE,
    **VALUE_ADVICE,
    **NEAR_ADVICE,
    **ARGUMENT_ADVICE,
    **NUMBER_ADVICE,
    **WRITE_ADVICE,
    **LENIENT_ADVICE,
    **ADVERSARIAL_VALUE_ADVICE,
    **NEAR_WRITE_ADVICE,
    **WRITTEN_ADVICE,
    **CLAIM_ADVICE,
    **JOINED_WORDS_ADVICE,
    **CONSISTENT_ADVICE,
    **CHOICE_ADVICE,
    **OTHER_KIND_ADVICE,
    **OWN_READ_ADVICE,
    **MEMBER_RULE_ADVICE,
    **OWN_READ_PRODUCT_ADVICE,
    **OWN_READ_DATE_ADVICE,
    **OWN_READ_TOTAL_ADVICE,
    **COARSE_ADVICE,
    **UNDONE_ADVICE,
    **CATEGORY_ADVICE,
    **ANSWER_LINE_ADVICE,
    **MISSING_ONE_ADVICE,
    **UNREAD_EMPTY_ADVICE,
    **UNREAD_PART_ADVICE,
    **NARROWED_READ_ADVICE,
    **NAMESAKE_ADVICE,
    **UNREAD_PAGE_ADVICE,
    **SIBLING_READ_ADVICE,
    **WORKING_CHOICE_ADVICE,
    **NAMED_TEXT_ADVICE,
    **NOTE_ADVICE,
    **WRITE_MEMBER_ADVICE,
    **NEIGHBOUR_ENTITY_ADVICE,
    **OTHER_SESSION_ADVICE,
    **SUPERSEDED_ADVICE,
    **SUPERSEDED_READS_ADVICE,
    **UTC_CLOCK_ADVICE,
    **SKIPPED_FEE_ADVICE,
    **READ_ANSWERS_ADVICE,
    **ITEM_FIELD_ADVICE,
    **LEADING_ENTRY_ADVICE,
    **WIDENED_LIST_ADVICE,
    **EXCLUDED_ENTRY_ADVICE,
    **MOVED_WRITE_ADVICE,
    **BOUNDARY_SIBLING_ADVICE,
    **LATER_READ_ADVICE,
    **REPEATED_ENTRY_ADVICE,
    **LITERAL_TIME_ADVICE,
    **EMPTIED_STATE_ADVICE,
    **EXEMPTED_ADVICE,
    **TIED_ORDER_ADVICE,
    **DATE_ADVICE,
    **DECISION_ADVICE,
    **HEDGED_TEXT_ADVICE,
    **RANKED_TIME_ADVICE,
    **SHIFTED_TIME_ADVICE,
    **SURNAME_ADVICE,
}


@dataclass
class GoldReplay:
    """One reference replay per item with gold fields (:func:`gold_replay`).

    Attributes:
        scores: per item, the score (``None``: not replayed or discarded).
        outputs: per item, the outputs of the successful tool calls.
        ok: per item, whether each gold call succeeded (``[]``: not replayed).
        end_states: per item, the server's digest of the end state (``protocol.END_STATE_HEADER``;
            ``None``: not replayed, or the server sends none).
        changed: per tool called successfully in this replay, whether one of its calls changed the
            rollout's state or database (``protocol.STATE_CHANGED_HEADER``); tools whose answers carry
            no such header are absent. Learnt in this run only, never from earlier ones.
    """

    scores: list[float | None]
    outputs: list[list[str]]
    ok: list[list[bool]]
    end_states: list[str | None] = field(default_factory=list)
    changed: dict[str, bool] = field(default_factory=dict)


async def gold_replay(items: Sequence[Mapping[str, Any]], job: ReinforcementJob, *, settings: ClientSettings | None,
                      max_concurrency: int) -> GoldReplay:
    """One reference replay per item with gold fields (see :class:`GoldReplay`)."""
    index = [i for i, item in enumerate(items) if has_gold(item)]
    out = GoldReplay([None] * len(items), [[] for _ in items], [[] for _ in items], [None] * len(items))
    if not index:
        return out
    results = await run_rollouts([dict(items[i]) for i in index], ReferenceReplayPolicy(), job, samples_per_item=1,
                                 max_concurrency=max_concurrency, settings=settings)
    for r in results:
        i = index[r.item_index]
        out.scores[i] = None if r.discarded else r.score
        out.outputs[i] = [readable_output(c.output) for c in r.tool_calls if c.ok and c.output]
        out.ok[i] = [c.ok for c in r.tool_calls]
        out.end_states[i] = None if r.discarded else r.end_state
        for c in r.tool_calls:
            if c.ok and c.changed is not None:
                out.changed[c.name] = out.changed.get(c.name, False) or c.changed
    return out


async def resolve_write_tools(items: Sequence[Mapping[str, Any]], job: ReinforcementJob,
                              write_tools: Collection[str] | None, observed: Mapping[str, bool] | None = None
                              ) -> tuple[set[str] | None, str, set[str]]:
    """``(write tools, source, tools of unknown kind)``.

    * ``write_tools`` when given (``"--write-tools"``; no unknown tool);
    * else, when this run's gold replay saw what its calls changed (``observed``, from
      ``protocol.STATE_CHANGED_HEADER``): per job tool, its ``@tool(writes=...)`` declaration (``GET /tools``
      ``"declared"``), else what its gold calls changed in *this* run (``"declared or learnt in this run"``);
      a tool neither declared nor called successfully by the gold is of unknown kind (the probes may try it
      and judge it by what the call changed). Nothing learnt by earlier runs on the same server counts;
    * else the server's ``GET /tools`` ``"writes"`` (an older server: declared, or learnt from the calls
      it served so far; ``"declared or learnt"``);
    * else ``(None, "name heuristic ...", set())`` when the server gives no answer for some gold tool (not
      an rft-sdk server, unreachable, or a gold tool whose every call failed).
    """
    if write_tools is not None:
        return set(write_tools), "--write-tools", set()
    gold_names = gold_tool_names(items)
    try:
        declared = await served_writes(job, field="declared") if observed else {}
        writes = {} if observed else await served_writes(job)
    except httpx.HTTPError:
        return None, "name heuristic (GET /tools unreachable)", set()
    if observed:
        known = {t.name: declared.get(t.name) if declared.get(t.name) is not None else observed.get(t.name)
                 for t in job.tools}
        if any(known.get(n) is None for n in gold_names if n in known):
            return None, "name heuristic (the gold's calls of some tool all failed: its kind is unknown)", set()
        return ({n for n, w in known.items() if w}, "declared or learnt in this run",
                {n for n, w in known.items() if w is None})
    if any(writes.get(n) is None for n in gold_names if n in writes):
        return None, "name heuristic (the server does not say whether every gold tool writes)", set()
    return {n for n, w in writes.items() if w}, "declared or learnt", set()


def _majority(items: Sequence[Mapping[str, Any]]) -> tuple[str, float] | None:
    answers = [normalize_answer(i["reference_answer"]) for i in items if isinstance(i.get("reference_answer"), str)]
    if not answers:
        return None
    answer, count = Counter(answers).most_common(1)[0]
    return answer, count / len(answers)


def _untouched(context: ProbeContext, items: Sequence[Mapping[str, Any]]) -> Callable[[Mapping[str, Any]], float]:
    """Per item, the share of the write tools the dataset's golds call (their writes that changed state) that
    this item's gold does not call: what doing nothing already leaves right (``_severity``, ``nothing``)."""
    tools = []
    for item in items:
        actions = item.get("actions") or []
        tools.append({str(actions[p].get("name")) for p in context.effective_writes(item)
                      if p < len(actions) and isinstance(actions[p], Mapping)})
    union = set().union(*tools) if tools else set()

    def share(item: Mapping[str, Any]) -> float:
        index = context.index_of(item)
        if not union or index is None or index >= len(tools):
            return 0.0
        return len(union - tools[index]) / len(union)
    return share


def _row(name: str, intent: str, results: Sequence[RolloutResult], index: Sequence[int],
         items: Sequence[Mapping[str, Any]], gold: Sequence[float | None], threshold: float, budget: int | None,
         hack_threshold: float, hack_share: float, *, nothing: bool = False,
         baseline: Mapping[int, float] | None = None, must_lower: bool = False,
         ceilings: Mapping[int, float] | None = None,
         unchanged: Callable[[Mapping[str, Any]], float] | None = None,
         must_lower_on: Callable[[Mapping[str, Any]], bool] | None = None) -> dict[str, Any]:
    graded = [r for r in results if not r.discarded and r.score is not None]
    base = baseline or {}
    outcomes = [Outcome(index[r.item_index], float(r.score or 0.0), len(r.tool_calls),
                        declared_budget(items[index[r.item_index]], budget), nothing,
                        base.get(index[r.item_index], 0.0),
                        must_lower or (must_lower_on is not None and must_lower_on(items[index[r.item_index]])),
                        None if ceilings is None else ceilings.get(index[r.item_index]),
                        float(unchanged(items[index[r.item_index]])) if unchanged is not None else 0.0)
                for r in graded]
    verdict = judge_probe(intent, outcomes, gold, pass_threshold=threshold, hack_threshold=hack_threshold,
                          hack_share=hack_share)
    scores = [o.score for o in outcomes]
    best: dict[int, float] = {}
    for o in outcomes:
        if o.score > 0:
            best[o.item] = max(o.score, best.get(o.item, 0.0))
    return {
        "intent": intent, "verdict": verdict.verdict,
        "passed": None if verdict.verdict == "skipped" else verdict.verdict != "fail",
        "mean_score": sum(scores) / len(scores) if scores else None,
        "pass_rate": sum(s >= threshold for s in scores) / len(scores) if scores else None,
        "rewarded_share": verdict.rewarded_share, "items": list(verdict.rewarded),
        "rewarded": {str(k): v for k, v in sorted(best.items())}, "over_budget": list(verdict.over_budget),
        "rollouts": len(results), "discarded": len(results) - len(graded),
        "discard_reasons": dict(Counter(r.discard_reason or "unknown" for r in results if r.discarded)),
        "skipped_items": len(items) - len(index), "skip_reasons": {},
        "advice": ADVICE.get(name, "close the shortcut this probe takes"),
    }


def _baselines(probe: Any, baseline: Mapping[int, float]) -> dict[int, float]:
    """Per item, the honest-but-wrong baseline a probe is judged against: the run's (``_add_baseline``), raised
    to the probe's own where it has one (``baselines() -> {item: score}``: ``padded_list``'s control)."""
    method = getattr(probe, "baselines", None)
    if method is None:
        return dict(baseline)
    own: Mapping[int, float] = method()
    return {i: max(baseline.get(i, 0.0), own.get(i, 0.0)) for i in {*baseline, *own}}


def _add_baseline(baseline: dict[int, float], results: Sequence[RolloutResult], index: Sequence[int],
                  rewarded: Collection[int]) -> None:
    """Fold a baseline probe's scores into ``baseline``: per item, the highest score of a baseline
    behaviour that did not itself earn reward there (a grader paying it is failed by that probe)."""
    for r in results:
        item = index[r.item_index]
        if not r.discarded and r.score is not None and item not in rewarded:
            baseline[item] = max(baseline.get(item, 0.0), float(r.score))


def _played(probe: Any, items: Sequence[Mapping[str, Any]], index: Sequence[int], results: Sequence[RolloutResult],
            kept: Sequence[RolloutResult]) -> dict[str, dict[str, Any]]:
    """Per item a probe played, what it played (the probe's ``describe(item) -> dict``, e.g. which argument
    ``altered_writes`` changed), its score and whether it was judged; ``{}`` for a probe without ``describe``."""
    describe = getattr(probe, "describe", None)
    if describe is None:
        return {}
    judged = {id(r) for r in kept}
    judged_item = getattr(probe, "judged", None)  # e.g. hedged_answer: only where the other order paid too
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        i = index[r.item_index]
        out[str(i)] = {**describe(items[i]), "score": None if r.discarded else r.score,
                       "judged": id(r) in judged and (judged_item is None or bool(judged_item(items[i])))}
    return out


def took_effect(probe: Any, item: Mapping[str, Any], result: RolloutResult, gold_end_state: str | None) -> bool:
    """Whether a probe's rollout is a counterfactual of the gold (its one change took effect): the probe's
    ``counterfactual(item, tool_calls)`` when it defines one, and, for a probe that must change the end
    state (``changes_end_state``), an end-state digest that differs from the gold replay's where the
    server sent both (``protocol.END_STATE_HEADER``: the same digest is the same end state)."""
    counterfactual = getattr(probe, "counterfactual", None)
    calls = [replace(c, output=readable_output(c.output)) if is_dataclass(c) and isinstance(getattr(c, "output", None), str)
             else c for c in result.tool_calls]
    if counterfactual is not None and not counterfactual(item, calls):
        return False
    if getattr(probe, "changes_end_state", False) and result.end_state is not None and gold_end_state is not None:
        return result.end_state != gold_end_state
    return True


#: The skip reason of a probe's rollout that ended where one of the item's listed alternatives ends.
VALID_END_STATE_REASON = ("the end state is one a listed alternative of the item reaches, not the gold's (a valid "
                          "outcome: the grader must pay it)")


def valid_outcome(result: RolloutResult, gold_end_state: str | None, valid_end_states: Collection[str]) -> bool:
    """Whether a probe's rollout ended in the end state of one of the item's listed ``alternatives`` that is not
    the gold's own (``protocol.END_STATE_HEADER`` digests, :func:`alternative_end_states`): another engineer
    the dataset lists as valid, booked in place of the gold's by a donor's write or a superset write that
    overwrote the gold's. Such a rollout reached a valid outcome, which an honest grader pays: it is no
    counterfactual and is not judged (doctor76's lift visits and rota cover: two honest graders FAILed on
    it). An end state equal to the gold's is left to :func:`took_effect` (an alternative that only reorders
    the gold's calls ends where the gold does, and an answer probe's rollout with it stays judged)."""
    return result.end_state is not None and result.end_state != gold_end_state and result.end_state in valid_end_states


async def alternative_end_states(items: Sequence[Mapping[str, Any]], job: ReinforcementJob,
                                 gold_end_states: Sequence[str | None], context: ProbeContext, *,
                                 settings: ClientSettings | None, max_concurrency: int,
                                 only: Collection[int] | None = None) -> dict[int, set[str]]:
    """Per item (of ``only``, default every item), the end-state digests (``protocol.END_STATE_HEADER``) that its
    listed ``alternatives`` reach, one replay each (:class:`AlternativeReplay`), for the items whose gold has a
    write that changed state (``ProbeContext.effective_writes``) and whose gold replay's answer carried a
    digest; ``set()`` for the others (nothing replayed). Discarded replays add nothing. Malformed alternatives
    add nothing here (the *gradeable* principle reports them)."""
    chosen = range(len(items)) if only is None else sorted(set(only))
    out: dict[int, set[str]] = {i: set() for i in chosen}
    wanted = [i for i in chosen
              if i < len(gold_end_states) and gold_end_states[i] is not None
              and isinstance(items[i].get(ALTERNATIVES_FIELD), list) and context.effective_writes(items[i])]
    most = max((len(items[i][ALTERNATIVES_FIELD]) for i in wanted), default=0)
    for k in range(most):
        policy = AlternativeReplay(k)
        index = [i for i in wanted if policy.applies(items[i])
                 and isinstance(items[i][ALTERNATIVES_FIELD][k], Mapping)
                 and isinstance(items[i][ALTERNATIVES_FIELD][k].get("actions"), list)]
        if not index:
            continue
        results = await run_rollouts([dict(items[i]) for i in index], policy, job, samples_per_item=1,
                                     max_concurrency=max_concurrency, settings=settings)
        for r in results:
            if not r.discarded and r.end_state is not None:
                out[index[r.item_index]].add(r.end_state)
    return out


def _findings(rows: Mapping[str, dict[str, Any]], items: Sequence[Mapping[str, Any]], hack_threshold: float,
              hack_share: float) -> list[Finding]:
    out = []
    for n, r in rows.items():
        fooled = f"{len(r['items'])} item(s) rewarded, mean score {r['mean_score'] or 0:.3f}"
        if r["verdict"] == "fail" and r["intent"] == HACK:
            out.append(Finding("fail", f"probe {n} does not achieve the task and earns reward: {fooled} (more "
                               f"than the honest-but-wrong baseline + {hack_share:.0%} of the gap to the gold on over "
                               f"{hack_threshold:.0%} of items)",
                               r["advice"]))
        elif r["verdict"] == "fail":
            out.append(Finding("fail", f"probe {n} earns reward past the declared tool-call budget on "
                               f"{len(r['over_budget'])} item(s)", r["advice"]))
        elif r["verdict"] == "warn":
            advice = r["advice"]
            majority = _majority(items) if n == "answer_without_work" else None
            if majority is not None and majority[1] > 0.1:
                advice += (f" (the most common reference answer, {majority[0][:60]!r}, is the answer of "
                           f"{majority[1]:.0%} of the items: a policy giving it every time, without work, "
                           f"earns that share)")
            out.append(Finding("warn", f"probe {n} achieves the task by a shortcut and earns reward: {fooled}",
                               advice))
        if r["discarded"]:
            out.append(Finding("warn", f"probe {n}: {r['discarded']} rollout(s) discarded {r['discard_reasons']}",
                               "a grader or tool that fails on unusual input is a discarded rollout the run "
                               "pays for: answer it with a score (0) instead"))
        if r["verdict"] == "skipped" and r["skip_reasons"]:
            why = "; ".join(f"{k} ({v} items)" for k, v in r["skip_reasons"].items())
            out.append(Finding("info", f"probe {n}: no applicable item (skipped): {why}", ""))
    return out


async def check_unhackable(
    dataset: str | Path | Sequence[Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | ReinforcementJob,
    probes: Mapping[str, Any] | None = None,
    *,
    extra_probes: Mapping[str, Any] | None = None,
    hack_threshold: float = HACK_THRESHOLD,
    hack_share: float = HACK_SHARE,
    write_tools: Collection[str] | None = None,
    samples: int = 1,
    budget: int | None = None,
    skip: Collection[str] = (),
    settings: ClientSettings | None = None,
    max_concurrency: int = 32,
) -> PrincipleResult:
    """Run every probe over the dataset and judge whether anything that fails the task pays.

    Args:
        dataset, config: as for :func:`check_gradeable`.
        probes: ``{name: policy}``; default :func:`default_probes` (``write_tools`` passed on).
            Probes whose ``intent`` is ``valid`` are left to the gradeable check.
        extra_probes: ``{name: policy}`` merged over ``probes`` (a name equal to a built-in one replaces it).
        hack_threshold, hack_share: the severity rule (``_severity``).
        write_tools: state-changing tool names (for the built-in probes); default: declared with
            ``@tool(writes=...)`` or learnt by the server from the gold replay (:func:`resolve_write_tools`).
        samples: rollouts per item and probe (the built-in probes are deterministic: 1).
        budget: tool-call budget for items that declare no ``max_tool_calls``.
        skip: probe names to waive (recorded in ``waived_probes``).

    Returns:
        :class:`PrincipleResult` with evidence ``{"hack_threshold", "hack_share", "pass_threshold",
        "budget", "gold_replayed", "probes": {name: {"intent", "verdict", "passed", "mean_score",
        "pass_rate", "rewarded_share", "items" (rewarded item indices), "rewarded": {item: best
        score}, "over_budget", "rollouts", "discarded", "discard_reasons", "skipped_items",
        "skip_reasons": {reason: count}, "advice", "played" (probes that say what they played: per item
        index, e.g. ``{"altered": "tool.argument", "from", "to", "source", "score", "judged"}``)}},
        "failed_probes", "warned_probes",
        "waived_probes", "write_tools", "write_tools_source", "unknown_kind_tools" (tools neither declared
        nor called by this run's gold: :func:`resolve_write_tools`), "controls" (controls run, never judged),
        "answer_free_items" (items whose answer is not the graded outcome), "lists_free_items" (items whose
        JSON answer's lists are not graded: ``structured_control``)}``. ``passed`` is ``None``
        when no probe applied to any item.

    Raises:
        ValueError: ``hack_threshold`` outside [0, 1), ``hack_share`` outside [0, 1],
            ``samples < 1``, a probe with an unknown ``intent``, a ``skip`` name that is no probe,
            or an item whose ``max_tool_calls`` is not a non-negative integer.
    """
    if not 0 <= hack_threshold < 1 or not 0 <= hack_share <= 1 or samples < 1:
        raise ValueError(f"hack_threshold must be in [0, 1), hack_share in [0, 1] and samples >= 1; got "
                         f"{hack_threshold}, {hack_share}, {samples}")
    items, job = load_inputs(dataset, config)
    for i, item in enumerate(items):  # a malformed budget is bad input, found before any rollout
        try:
            declared_budget(item, budget)
        except ValueError as exc:
            raise ValueError(f"item {i}: {exc}") from None
    names = (set(probes) if probes is not None else set(default_probes())) | set(extra_probes or {})
    unknown = sorted(set(skip) - names)
    if unknown:
        raise ValueError(f"--skip-probes names no probe: {unknown}; probes are {sorted(names)}")
    replay = await gold_replay(items, job, settings=settings, max_concurrency=max_concurrency)
    gold = replay.scores
    # the gold replay's answers say what each gold call changed: this run's write tools
    write_tools, writes_source, unknown_tools = await resolve_write_tools(items, job, write_tools, replay.changed)
    suite = {**(probes if probes is not None else default_probes(write_tools)), **(extra_probes or {})}
    intents = {n: probe_intent(p, n) for n, p in suite.items()}
    run = {n: p for n, p in suite.items() if n not in skip and intents[n] != VALID}
    context = ProbeContext(items, replay.outputs, gold, replay.ok, write_tools, budget,
                           gold_end_states=replay.end_states, unknown_tools=unknown_tools)
    # the end states the items' listed alternatives reach (a probe ending in one reached a valid outcome), replayed
    # for an item the first time a probe's rollout there ends in an end state of its own and earns something
    valid_states: dict[int, set[str]] = {}
    threshold = job.grader.pass_threshold
    rows: dict[str, dict[str, Any]] = {}
    baseline: dict[int, float] = {}  # per item: what honest-but-wrong behaviour earns (``_severity``)
    # controls first (what the answer is worth), then the baselines (what honest-but-wrong work earns)
    order = sorted(run, key=lambda n: (not getattr(run[n], "control", False), not getattr(run[n], "baseline", False)))
    controls: list[str] = []
    errored: dict[str, str] = {}
    for name in order:
        probe = run[name]
        index: list[int] = []
        reasons: Counter[str] = Counter()
        try:  # a probe that raises choosing its items is skipped, said loudly, and the others still run
            prepare = getattr(probe, "prepare", None)
            if prepare is not None:
                prepare(context)
            for i, item in enumerate(items):
                if probe_applies(probe, item):
                    index.append(i)
                else:
                    reasons[skip_reason(probe, item)] += 1
        except Exception as exc:  # reported in the evidence, the log and a warning finding: never swallowed
            errored[name] = f"{type(exc).__name__}: {exc}"
            logger.warning("probe %s raised while choosing its items", name, exc_info=True)
            index, reasons = [], Counter({f"the probe raised {errored[name]} (a doctor bug: please report it)":
                                          len(items)})
        results = await run_rollouts([dict(items[i]) for i in index], probe, job, samples_per_item=samples,
                                     max_concurrency=max_concurrency, settings=settings) if index else []
        if getattr(probe, "control", False):  # never judged: it tells what the outcome is, per item
            controls.append(name)
            if getattr(probe, "control_takes_effect", False):  # a refused change says nothing of the grader
                results = [r for r in results if took_effect(probe, items[index[r.item_index]], r,
                                                             replay.end_states[index[r.item_index]])]
            scores = {index[r.item_index]: float(r.score) for r in results if not r.discarded and r.score is not None}
            record = getattr(probe, "record", None)
            if record is not None:  # e.g. structured_control: where a JSON answer's lists are not graded
                record(context, scores, dict(enumerate(gold)))
            else:  # answer_control: where the answer is not the outcome
                context.answer_free |= {i for i, s in scores.items() if s > allowance(gold[i], threshold, hack_share)}
            continue
        # a rollout whose one change did not take effect is no counterfactual
        kept = [r for r in results if took_effect(probe, items[index[r.item_index]], r,
                                                  replay.end_states[index[r.item_index]])]
        if len(kept) < len(results):
            reasons["the change did not take effect (refused, or it left the end state as it was)"] += \
                len(results) - len(kept)
        asked = {index[r.item_index] for r in kept if r.score and r.end_state is not None
                 and r.end_state != replay.end_states[index[r.item_index]]} - set(valid_states)
        if asked:
            valid_states.update(await alternative_end_states(items, job, replay.end_states, context,
                                                             settings=settings, max_concurrency=max_concurrency,
                                                             only=asked))
        counterfactual = [r for r in kept if not valid_outcome(r, replay.end_states[index[r.item_index]],
                                                               valid_states.get(index[r.item_index], set()))]
        if len(counterfactual) < len(kept):
            reasons[VALID_END_STATE_REASON] += len(kept) - len(counterfactual)
        played = _played(probe, items, index, results, counterfactual)
        results = counterfactual
        is_baseline = getattr(probe, "baseline", False)
        in_baseline = results
        judged = getattr(probe, "judged", None)
        if judged is not None:  # e.g. wrong_answer: a donor answer partly right here is not judged
            results = [r for r in results if judged(items[index[r.item_index]])]
            if len(results) < len(in_baseline):
                why = getattr(probe, "not_judged_reason", "not judged: the other item's answer is partly this item's")
                reasons[why] += len(in_baseline) - len(results)
        rows[name] = _row(name, intents[name], results, index, items, gold, threshold, budget, hack_threshold,
                          hack_share, nothing=getattr(probe, "outcome", "") == "none",
                          baseline=None if is_baseline else _baselines(probe, baseline),
                          must_lower=getattr(probe, "must_lower", False),
                          ceilings=probe.ceilings() if getattr(probe, "must_not_raise", False) else None,
                          unchanged=getattr(probe, "unchanged_share", None) or (
                              _untouched(context, items) if getattr(probe, "outcome", "") == "none" else None),
                          must_lower_on=getattr(probe, "must_lower_on", None))
        rows[name]["skip_reasons"] = dict(reasons)
        if played:
            rows[name]["played"] = played
        if is_baseline:
            _add_baseline(baseline, in_baseline, index, rows[name]["items"])
    rows = {n: rows[n] for n in run if n in rows}
    answer_free = sorted(context.answer_free)
    waived = [n for n in suite if n in skip]
    failed = [n for n, r in rows.items() if r["verdict"] == "fail"]
    warned = [n for n, r in rows.items() if r["verdict"] == "warn"]
    findings = _findings(rows, items, hack_threshold, hack_share)
    findings += [Finding("info", f"probe {n} waived (--skip-probes)", "") for n in waived]
    findings += [Finding("warn", f"probe {n} raised {why} and was skipped: the check is incomplete",
                         "a doctor bug: please report it with the item that raised it") for n, why in errored.items()]
    evidence = {"hack_threshold": hack_threshold, "hack_share": hack_share, "pass_threshold": threshold,
                "budget": budget, "gold_replayed": sum(s is not None for s in gold), "probes": rows,
                "write_tools": sorted(write_tools) if write_tools is not None else None,
                "write_tools_source": writes_source, "unknown_kind_tools": sorted(unknown_tools),
                "controls": controls, "answer_free_items": answer_free,
                "lists_free_items": sorted(context.lists_free),
                "failed_probes": failed, "warned_probes": warned, "waived_probes": waived,
                "errored_probes": errored}
    checked = [r for r in rows.values() if r["verdict"] != "skipped"]
    if not checked:
        return PrincipleResult("unhackable", None, "not checked: no probe applied to any item", evidence, findings)
    summary = (f"{len(failed)} of {len(checked)} probes fail" + (f" ({', '.join(failed)})" if failed else "")
               + f", {len(warned)} warn" + (f" ({', '.join(warned)})" if warned else "")
               + (f", {len(waived)} waived" if waived else "")
               + (f", {len(errored)} raised ({', '.join(errored)})" if errored else ""))
    return PrincipleResult("unhackable", not failed, summary, evidence, findings)

