"""TRL ``GRPOTrainer`` on a tiny local model against a real ``rft serve`` of the retail tools.

The served app (``tests.integrations.apps:retail_recorded``) keeps every rollout in a
``SQLiteStore`` file, so the test reads back what the server itself recorded per
``trace_id``. Rollouts are seeded with the item's gold ``get_order_status`` call
(``seed_first_call``, see examples/retail/train_trl.py): a random model rarely writes
a valid tool call; its completions are still generated and graded.
"""

from __future__ import annotations

import asyncio
import math

import pytest

pytest.importorskip("trl")

from examples.retail.train_trl import train
from rft_sdk import SQLiteStore
from rft_sdk.testing import serve_process

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

TOKEN = "trl-test-token"
STEPS, PROMPTS, GENERATIONS = 2, 2, 2


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store_path = tmp_path_factory.mktemp("trl") / "rollouts.db"
    env = {"RFT_AUTH_TOKENS": TOKEN, "RFT_TEST_STORE": str(store_path)}
    with serve_process("tests.integrations.apps:retail_recorded", env=env) as url:
        result = train(url, token=TOKEN, steps=STEPS, prompts_per_step=PROMPTS, generations=GENERATIONS,
                       grader="answer_similarity", output_dir=str(tmp_path_factory.mktemp("out")))
        result["environment"].close()
        yield result, SQLiteStore(store_path)


def test_every_generation_is_a_recorded_graded_rollout(run):
    result, store = run
    records = list(result["environment"].records)
    assert len(records) == STEPS * PROMPTS * GENERATIONS
    assert len({r.trace_id for r in records}) == len(records)

    async def read():
        return [(await store.load(r.trace_id), await store.load_grades(r.trace_id)) for r in records]

    for record, (stored, grades) in zip(records, asyncio.run(read())):
        assert record.trace_id.startswith("trace_")
        assert stored is not None, f"server kept no state for {record.trace_id}"
        assert len(stored.trajectory) == record.tool_calls >= 1
        assert stored.trajectory[0].name == "get_order_status"
        assert stored.item["order_id"] == stored.trajectory[0].arguments["order_id"]
        assert record.score is not None
        assert grades["answer_similarity"].score == pytest.approx(record.score)
        assert grades["answer_similarity"].details["subscores"]["called_lookup"] == 1.0


def test_trainer_logged_the_graders_rewards_and_optimised(run):
    result, _ = run
    records = list(result["environment"].records)
    per_step = PROMPTS * GENERATIONS
    logs = [entry for entry in result["trainer"].state.log_history if "rewards/grader_reward/mean" in entry]
    assert len(logs) == STEPS
    for step, entry in enumerate(logs):
        scores = [r.score for r in records[step * per_step:(step + 1) * per_step]]
        assert float(entry["rewards/grader_reward/mean"]) == pytest.approx(sum(scores) / per_step, abs=1e-4)
        sims = [r.subscores["similarity"] for r in records[step * per_step:(step + 1) * per_step]]
        assert float(entry["grader/similarity"]) == pytest.approx(sum(sims) / per_step, abs=1e-4)
        assert float(entry["grader/tool_calls_per_rollout"]) >= 1.0
    assert result["trainer"].state.global_step == STEPS
    # Partial-credit rewards differ within a group, so the updates are real (non-zero gradients).
    assert any(math.isfinite(float(e["grad_norm"])) and float(e["grad_norm"]) > 0 for e in logs)
