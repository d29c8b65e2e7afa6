"""TRL ``GRPOTrainer`` environment for a tool server: ``pip install "rft-sdk[trl]"``.

::

    env = ToolServerEnvironment("http://127.0.0.1:8000", token=..., grader="order_status")
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(...),
                          train_dataset=hosted_dataset(lines), environment_factory=env,
                          reward_funcs=[env.grader_reward])

Each generation is one rollout with its own ``trace_id``; tool calls and the
grade go over the hosted wire format to the same server a hosted job calls.
See ``docs/trl.md``.
"""

from __future__ import annotations

from ._trl import ITEM_COLUMN, RolloutEnvironment, RolloutRecord, ToolServerEnvironment, hosted_dataset

__all__ = ["ITEM_COLUMN", "RolloutEnvironment", "RolloutRecord", "ToolServerEnvironment", "hosted_dataset"]
