"""A ``verifiers`` environment for a tool server: ``pip install "rft-sdk[verifiers]"``.

::

    import verifiers as vf
    from rft_sdk.integrations.verifiers import load_environment

    env = load_environment("http://127.0.0.1:8000", token=TOKEN, eval_dataset="retail_test.jsonl")
    results = env.evaluate_sync(client=AsyncOpenAI(...), model="...", rollouts_per_example=4)

Each rollout gets its own ``trace_id``; tool calls and the grade go over the
hosted wire format to the same server a hosted job calls. See ``docs/verifiers.md``.
"""

from __future__ import annotations

try:
    from ._verifiers import ITEM_KEY, GraderRubric, ToolServerEnv, hosted_rows, load_environment
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name is None or not exc.name.startswith(("verifiers", "datasets")):
        raise
    raise ImportError('rft_sdk.integrations.verifiers needs verifiers: pip install "rft-sdk[verifiers]" '
                      "(docs/verifiers.md: it cannot share a virtual environment with rft-sdk[mcp] or [trl])") from exc

__all__ = ["ITEM_KEY", "GraderRubric", "ToolServerEnv", "hosted_rows", "load_environment"]
