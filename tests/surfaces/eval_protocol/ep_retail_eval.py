"""The retail task as an Eval Protocol evaluation: EP's own ``@evaluation_test`` loop, the tool server's rollout
processor, the endpoint grader as the evaluator.

Run by ``tests/surfaces/test_eval_protocol.py`` in ``.venv-eco2`` as ``pytest --noconftest`` on this file (what
``ep local-test`` runs), with ``RFT_EP_URL`` (tool server), ``RFT_EP_LLM`` (the gold-replay chat-completions
server), ``RFT_EP_DATASET``, ``RFT_EP_ROWS``, ``RFT_EP_RUNS``, ``RFT_EP_STEPS`` and ``RFT_EP_OUT`` (one JSON line per
evaluated row is appended there), ``RFT_EP_TOKEN`` (the tool server's bearer token).
No ``from __future__ import annotations`` here: EP checks that ``row`` is annotated with ``EvaluationRow`` itself.
"""


import json
import os

from eval_protocol.models import EvaluationRow
from eval_protocol.pytest import evaluation_test

from rft_sdk.integrations.eval_protocol import ToolServerRolloutProcessor, dataset_adapter, evaluate_row, item_of

URL = os.environ["RFT_EP_URL"]
TOKEN = os.environ.get("RFT_EP_TOKEN") or None


@evaluation_test(
    input_dataset=[os.environ["RFT_EP_DATASET"]],
    dataset_adapter=dataset_adapter,
    max_dataset_rows=int(os.environ.get("RFT_EP_ROWS", "10")),
    completion_params=[{"model": "openai/scripted-gold", "base_url": os.environ["RFT_EP_LLM"] + "/v1",
                        "api_key": "gold"}],
    rollout_processor=ToolServerRolloutProcessor(URL, token=TOKEN),
    num_runs=int(os.environ.get("RFT_EP_RUNS", "4")),
    steps=int(os.environ.get("RFT_EP_STEPS", "30")),
    mode="pointwise",
)
async def test_retail_gold_replay(row: EvaluationRow) -> EvaluationRow:
    """The endpoint grader's score of each rollout's trajectory."""
    row = await evaluate_row(row, URL, token=TOKEN)
    result = row.evaluation_result
    with open(os.environ["RFT_EP_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps({
            "task_id": item_of(row).get("task_id"), "row_id": row.input_metadata.row_id,
            "rollout_id": row.execution_metadata.rollout_id, "run_id": row.execution_metadata.run_id,
            "trace_id": (row.execution_metadata.extra or {}).get("trace_id"),
            "score": result.score if result else None, "valid": result.is_score_valid if result else None,
            "metrics": {k: v.score for k, v in (result.metrics or {}).items()} if result else {},
            "tool_calls": [c.function.name for m in row.messages for c in (m.tool_calls or [])]}) + "\n")
    return row
