"""TRL ``GRPOTrainer`` on a tiny local model against a real ``rft serve`` of the retail tools.

The served app (``tests.integrations.apps:retail_recorded``) keeps every rollout in a
``SQLiteStore`` file, so the test reads back what the server itself recorded per
``trace_id``. No tool call is seeded: the model writes every call itself. A random
model gets signal only from the partial-credit test grader (``answer_similarity``);
with the exact ``order_status`` grader it gets none, and the example says so; after a
warm start (SFT on the gold demonstrations) it gets signal from ``order_status`` too.
"""

from __future__ import annotations

import asyncio
import json
import math

import pytest

pytest.importorskip("trl")

from examples.retail.train_trl import main, train
from rft_sdk import SQLiteStore
from rft_sdk.testing import serve_process

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]

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
        assert record.score is not None
        assert grades["answer_similarity"].score == pytest.approx(record.score)
        looked_up = grades["answer_similarity"].details["subscores"]["called_lookup"]
        if record.tool_calls:  # whatever calls the model wrote reached the server under this trace_id
            assert stored is not None and len(stored.trajectory) == record.tool_calls
        assert looked_up == float(bool(stored and any(c.name == "get_order_status" for c in stored.trajectory)))


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
        calls = [r.tool_calls for r in records[step * per_step:(step + 1) * per_step]]
        assert float(entry["grader/tool_calls_per_rollout"]) == pytest.approx(sum(calls) / per_step, abs=1e-4)
    assert result["trainer"].state.global_step == STEPS
    # Partial-credit rewards differ within a group, so the updates are real (non-zero gradients).
    assert any(math.isfinite(float(e["grad_norm"])) and float(e["grad_norm"]) > 0 for e in logs)


def test_a_random_model_with_the_exact_grader_says_it_has_no_signal(capsys):
    with serve_process("examples.retail.app:server") as url:
        assert main(["--base-url", url, "--steps", "1", "--generations", "2", "--prompts-per-step", "2",
                     "--warm-start-steps", "0"]) == 0
    out = capsys.readouterr().out
    assert "NO LEARNING SIGNAL" in out and "frac_reward_zero_std: 1.00" in out and "grad norm: 0.0000" in out
    assert "unseeded" in out and "warm start" not in out


def test_warm_start_demonstrations_come_from_the_server_and_match_trl_rendering(tmp_path):
    from transformers.utils import get_json_schema

    from examples.retail.order_status_task import build_items
    from examples.retail.train_trl import demonstrations
    from rft_sdk.integrations.trl import ToolServerEnvironment

    items = build_items(seed=0)[0][:3]
    with serve_process("examples.retail.app:server") as url:
        env = ToolServerEnvironment(url, tools=["get_order_status"], grader="order_status")
        rows = demonstrations(env, items)
        env.close()
    from examples.retail.train_trl import build_tiny_model, build_tokenizer, warm_start

    tokenizer = build_tokenizer([json.dumps(r) for r in rows] * 4)
    loss = warm_start(build_tiny_model(tokenizer), tokenizer, rows, steps=2, output_dir=str(tmp_path))
    assert math.isfinite(loss) and loss > 0  # trl.SFTTrainer ran on the rows as they are
    for item, row in zip(items, rows):
        call, tool, answer = row["messages"][-3:]
        assert call["tool_calls"][0]["function"]["arguments"] == item["actions"][0]["arguments"]
        assert tool["content"] == item["answer"]  # the real tool output, fetched from the server
        assert answer["content"] == item["reference_answer"]
        rollout = env()
        assert row["tools"] == [get_json_schema(rollout.get_order_status)]
