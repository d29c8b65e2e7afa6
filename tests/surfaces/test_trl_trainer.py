"""TRL's own ``GRPOTrainer`` environment loop against a real ``rft serve``: 10 retail items x 4 rollouts in one
``trainer.train()`` step (``rft_sdk.portability._trl_loop``). TRL renders the prompts, parses the tool calls from
the model's text, calls ``ToolServerEnvironment``'s methods and computes the rewards with ``grader_reward``; only
the model is scripted (it writes the item's gold calls, or all but the last, then the reference answer).

Every reward TRL recorded equals the server's recorded grade and the hosted wire's score of the same trajectory
(the calls TRL parsed re-sent under a fresh trace_id, graded with the last turn TRL parsed); the calls TRL parsed are the ones the server recorded under the
rollout's own trace_id, and the tool results TRL showed the model are what the server answered that rollout; the 4
rollouts of an item have distinct trace_ids and saw the same answers (no shared state: 6 of the 10 items return,
exchange or cancel, which a second rollout sharing the first one's state would see refused). The checker is shown to
flag a leaking environment and a wrong reward (:func:`test_the_checker_flags_shared_state_and_a_wrong_reward`).
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

pytest.importorskip("trl")

from rft_sdk.portability import with_variant
from rft_sdk.portability._target import replay_actions
from rft_sdk.portability._trl_loop import trl_trainer_rollouts
from rft_sdk.surfaces import HostedClient, new_trace_id

from .conftest import ITEMS, TOKEN, stored

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")]

GRADER, N_ITEMS, ROLLOUTS = "retail", 10, 4


def mixed_items() -> list[dict[str, Any]]:
    """The first 10 test items: 5 with their gold calls, 5 with all but the last (``gold-minus-last``)."""
    return [*ITEMS[:5], *with_variant(ITEMS[5:N_ITEMS], "gold-minus-last")]


def hosted_score(base_url: str, item: dict[str, Any], calls: list[tuple[str, Any]], answer: str) -> float:
    """The hosted wire's score of a trajectory: ``calls`` sent under a fresh trace_id, then graded with ``answer``."""
    async def replay() -> float:
        async with HostedClient.over_http(base_url, token=TOKEN) as client:
            trace_id = new_trace_id()
            for name, arguments in calls:
                await client.call_tool(trace_id, name, arguments, item)
            return (await client.grade(trace_id, answer, item, GRADER)).score
    return anyio.run(replay)


def problems(base_url: str, store: Any, items: list[dict[str, Any]], rollouts: list[dict[str, Any]]) -> list[str]:
    """What is wrong with TRL's rollouts of ``items`` (empty: nothing), comparing TRL's record of each rollout with
    what the server recorded under its trace_id and with the hosted wire's score of the same trajectory."""
    found: list[str] = []
    trace_ids = [r["trace_id"] for r in rollouts]
    if len(set(trace_ids)) != len(trace_ids):
        found.append(f"{len(trace_ids) - len(set(trace_ids))} rollouts share a trace_id with another")
    records = stored(store, sorted(set(trace_ids)))
    seen_by_item: dict[int, list[list[str]]] = {}
    for r in rollouts:
        item, (recorded, grades) = items[r["index"]], records[r["trace_id"]]
        where = f"item {item['task_id']} rollout {r['trace_id']}"
        assistant = [m for m in r["completion"] if m["role"] == "assistant"]
        parsed = [(c["function"]["name"], c["function"]["arguments"]) for m in assistant for c in m.get("tool_calls") or []]
        if parsed != [(a["name"], a.get("arguments") or {}) for a in replay_actions(item)]:
            found.append(f"{where}: TRL parsed calls {[p[0] for p in parsed]}, not the policy's")
        if recorded is None or [(c.name, c.arguments) for c in recorded.trajectory] != parsed:
            found.append(f"{where}: the server recorded other calls under this trace_id than TRL made")
        seen = [m["content"] for m in r["completion"] if m["role"] == "tool"]
        if recorded is not None and seen != [c.output for c in recorded.trajectory]:
            found.append(f"{where}: TRL showed the model other tool results than the server answered this rollout")
        seen_by_item.setdefault(r["index"], []).append(seen)
        if assistant[-1]["content"] != item["reference_answer"]:
            found.append(f"{where}: the last turn is not the reference answer")
        if GRADER not in grades or r["reward"] != grades[GRADER].score:
            found.append(f"{where}: TRL's reward {r['reward']} is not the server's recorded grade")
        if r["reward"] != hosted_score(base_url, item, parsed, assistant[-1]["content"]):
            found.append(f"{where}: TRL's reward {r['reward']} is not the hosted wire's score of the trajectory")
        if GRADER in grades and r["metrics"] != grades[GRADER].details["subscores"]:
            found.append(f"{where}: sub-scores differ from the grader's")
    for index, seen in seen_by_item.items():
        if any(s != seen[0] for s in seen):
            found.append(f"item {items[index]['task_id']}: its parallel rollouts saw different tool results")
    return found


@pytest.fixture(scope="module")
def trained(recorded_server):
    base_url, store = recorded_server
    items = mixed_items()
    return base_url, store, items, trl_trainer_rollouts(base_url, TOKEN, GRADER, items, generations=ROLLOUTS)


def test_grpo_trainer_rewards_are_the_hosted_wires_and_parallel_rollouts_never_share_state(trained):
    base_url, store, items, out = trained
    assert out["global_step"] == 1 and math.isfinite(out["log"]["loss"])  # one optimizer step ran
    rollouts = out["rollouts"]
    assert len(rollouts) == N_ITEMS * ROLLOUTS
    assert sorted(r["index"] for r in rollouts) == sorted(list(range(N_ITEMS)) * ROLLOUTS)
    assert all(r["trace_id"].startswith("trace_") for r in rollouts)
    assert problems(base_url, store, items, rollouts) == []
    # the rollouts played the calls the item says: the tool methods TRL called, one per call
    assert [r["tool_calls"] for r in rollouts] == [len(replay_actions(items[r["index"]])) for r in rollouts]
    assert out["log"]["tools/call_frequency"] == pytest.approx(
        sum(len(replay_actions(i)) for i in items) / N_ITEMS)
    by_item = {r["index"]: r["reward"] for r in rollouts}
    assert [by_item[i] for i in range(5)] == [1.0] * 5  # gold
    assert [by_item[i] for i in range(5, N_ITEMS)] == [0.0] * 5  # the last call matters to the grader here


def test_the_checker_flags_shared_state_and_a_wrong_reward(trained, recorded_server):
    """False alarms and detection side by side: the run above has no problem; an environment whose parallel
    rollouts of an item share one trace_id (shared state) is flagged, and so is one reward off by 0.5."""
    from rft_sdk.integrations.trl import ToolServerEnvironment

    base_url, store, items, out = trained
    wrong = [dict(r) for r in out["rollouts"]]
    wrong[0]["reward"] += 0.5
    flagged = problems(base_url, store, items, wrong)
    assert len(flagged) == 2 and all(wrong[0]["trace_id"] in p for p in flagged)
    assert "not the server's recorded grade" in flagged[0] and "not the hosted wire's score" in flagged[1]

    environment = ToolServerEnvironment(base_url, token=TOKEN, grader=GRADER)
    shared: dict[str, str] = {}
    fresh = environment.environment_class.reset

    def leaky_reset(self: Any, **row: Any) -> Any:  # every rollout of an item on the first one's trace_id
        observation = fresh(self, **row)
        self.trace_id = shared.setdefault(self.item["task_id"], self.trace_id)
        return observation

    environment.environment_class.reset = leaky_reset
    leaky_items = ITEMS[:2]  # a return and an exchange of delivered items: done twice, the second fails
    leaked = trl_trainer_rollouts(base_url, TOKEN, GRADER, leaky_items, generations=2, environment=environment)
    environment.close()
    found = problems(base_url, store, leaky_items, leaked["rollouts"])
    assert found[0] == "2 rollouts share a trace_id with another"
    assert any("saw different tool results" in p for p in found)


def test_items_a_prompt_cannot_tell_apart_are_refused_before_any_request():
    """The policy sees only the prompt: two items with one user message are refused, naming why (the URL is never
    called: port 9 has no server)."""
    twin = {**ITEMS[0], "task_id": "twin", "actions": ITEMS[0]["actions"][:1]}
    with pytest.raises(ValueError, match="same user message cannot be told apart"):
        trl_trainer_rollouts("http://127.0.0.1:9", TOKEN, GRADER, [ITEMS[0], twin], generations=2)


def test_rft_portability_trl_column_is_the_trainer_loop_and_keeps_stdout_a_table(recorded_server, monkeypatch,
                                                                                   capsys):
    """``rft portability --surfaces hosted,trl`` in this process: TRL's trainer prints nothing into the table."""
    from rft_sdk.cli import main

    from .conftest import DATASET

    base_url, _ = recorded_server
    monkeypatch.setenv("RFT_T", TOKEN)
    assert main(["portability", "--dataset", str(DATASET), "--url", base_url, "--token-env", "RFT_T", "--grader",
                 GRADER, "--limit", "2", "--surfaces", "hosted,trl", "--variant", "gold-minus-last"]) == 0
    header, *rows, summary, clients = capsys.readouterr().out.strip().splitlines()
    assert header.split() == ["item", "hosted", "trl", "identical"] and len(rows) == 2
    assert summary == "2/2 items scored identically on 2 surfaces (gold-minus-last)"
    assert "trl=trl 1." in clients
