"""Fireworks RFT / Eval Protocol for a tool server: ``pip install "rft-sdk[eval-protocol]"``.

::

    from eval_protocol.pytest import evaluation_test
    from rft_sdk.integrations.eval_protocol import ToolServerRolloutProcessor, dataset_adapter, evaluate_row

    @evaluation_test(input_dataset=["retail_test.jsonl"], dataset_adapter=dataset_adapter,
                     completion_params=[{"model": "fireworks_ai/accounts/fireworks/models/qwen3-8b"}],
                     rollout_processor=ToolServerRolloutProcessor(TOOLS_URL), num_runs=4)
    async def test_retail(row):
        return await evaluate_row(row, TOOLS_URL)

``ep local-test`` (or ``pytest``) runs that loop here; for Fireworks RFT the same evaluator scores
rollouts that Fireworks runs through ``python -m rft_sdk.integrations.eval_protocol`` (the remote
rollout server, ``RemoteRolloutProcessor``'s ``/init``). See ``docs/eval_protocol.md``.
"""

from __future__ import annotations

import sys

try:
    from ._eval_protocol import (
        ITEM_KEY,
        ToolServerRolloutProcessor,
        dataset_adapter,
        evaluate_row,
        final_text,
        hosted_rows,
        item_of,
        row_id_of,
        run_rollout,
    )
    from ._eval_protocol_remote import main, remote_rollout_app
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name is None or not exc.name.startswith(("eval_protocol", "litellm", "openai")):
        raise
    raise ImportError('rft_sdk.integrations.eval_protocol needs eval-protocol: pip install "rft-sdk[eval-protocol]" '
                      "(docs/eval_protocol.md: it cannot share a virtual environment with rft-sdk[mcp] or "
                      "verifiers)") from exc

__all__ = ["ITEM_KEY", "ToolServerRolloutProcessor", "dataset_adapter", "evaluate_row", "final_text", "hosted_rows",
           "item_of", "main", "remote_rollout_app", "row_id_of", "run_rollout"]

if __name__ == "__main__":
    sys.exit(main())
