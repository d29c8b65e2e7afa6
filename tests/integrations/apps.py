"""ASGI apps the integration tests serve with ``rft serve`` (``serve_process``).

- ``retail_with_mcp``: the retail example's server with its hosted routes and
  ``/mcp`` (auth tokens from ``$RFT_AUTH_TOKENS``, read when this module is imported).
- ``retail_recorded``: the retail tools and graders on a ``SQLiteStore`` at
  ``$RFT_TEST_STORE`` that keeps graded rollouts for an hour, so a test can read
  back every trajectory and grade the server recorded; it adds the test grader
  ``answer_similarity`` (partial credit, so a random tiny policy gets rewards that vary).
"""

from __future__ import annotations

import difflib
import os

from examples.retail._server_tools import SERVED_TOOLS, get_order_status
from examples.retail.app import order_status, retail, server
from rft_sdk import Grade, GradingContext, SQLiteStore, ToolServer, grader
from rft_sdk.mcp import with_mcp

retail_with_mcp = with_mcp(server)


@grader(name="answer_similarity")
def answer_similarity(ctx: GradingContext) -> Grade:
    """Partial credit for tiny untrained policies: ``difflib`` ratio of the final answer to ``item["answer"]``.

    Rewards then differ inside a group, so GRPO's advantages (and gradients) are non-zero.
    """
    ratio = difflib.SequenceMatcher(None, ctx.output_text.strip().lower(), str(ctx.item["answer"])).ratio()
    looked_up = any(call.name == "get_order_status" for call in ctx.trajectory)
    return Grade(score=ratio, subscores={"similarity": ratio, "called_lookup": float(looked_up)})


def _recorded() -> ToolServer:
    path = os.environ.get("RFT_TEST_STORE")
    store = SQLiteStore(path) if path else None
    return ToolServer(tools=[*SERVED_TOOLS, get_order_status], graders=[retail, order_status, answer_similarity], store=store,
                      grade_retention_s=3600.0)


retail_recorded = _recorded()
