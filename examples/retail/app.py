"""The retail tool server: ``rft serve examples.retail.app:server --port P``.

Built only with the public ``rft_sdk`` API. Serves the 15 τ²-bench retail
tools plus ``get_order_status`` at ``POST /tools/{name}``, and two graders:

* ``retail`` (default, ``POST /grade``): the holistic end-state grader of
  ``_grading.grade_retail`` — database gate, then ``communicate_info``.
* ``order_status`` (``POST /grade/order_status``): the trainer's learnable task
  (docs/ARCHITECTURE.md, "Retail example ↔ trainer seam"): 1.0 when the
  normalised final answer equals the normalised ``item["answer"]``, else 0.0;
  sub-score ``called_lookup``.

Per-rollout state: ``rollout.state["db"]`` is the rollout's overlay of changed
records; the base database is loaded once per process and shared.
"""

from __future__ import annotations

from rft_sdk import Grade, GradingContext, ToolServer, grader

from ._grading import grade_retail
from ._server_tools import SERVED_TOOLS, STATE_KEY, get_order_status

__all__ = ["normalize_answer", "order_status", "retail", "server"]

LOOKUP_TOOLS = frozenset({"get_order_status", "get_order_details"})


@grader(name="retail", default=True)
async def retail(ctx: GradingContext) -> Grade:
    """Grade a retail rollout by its final database and final answer (see ``_grading``).

    Raises:
        ValueError: the item lacks gold ``actions`` (answered as a grader failure).
    """
    result = grade_retail(ctx.item, ctx.state.get(STATE_KEY, {}), ctx.output_text, calls=ctx.trajectory)
    return Grade(score=result.score, subscores=result.subscores, reasons=result.reasons)


def normalize_answer(text: str) -> str:
    """Lower-case, strip surrounding whitespace and trailing ``.``/``!`` (the seam's rule)."""
    return text.strip().lower().rstrip(".!").strip()


@grader(name="order_status")
async def order_status(ctx: GradingContext) -> Grade:
    """1.0 when the final answer is the order's status (normalised), else 0.0.

    Raises:
        ValueError: the item has no string ``answer``.
    """
    answer = ctx.item.get("answer")
    if not isinstance(answer, str):
        raise ValueError("order_status items need a string 'answer' (the expected status)")
    correct = normalize_answer(ctx.output_text) == normalize_answer(answer)
    looked_up = any(call.name in LOOKUP_TOOLS for call in ctx.trajectory)
    reasons = [] if correct else [f"expected {answer!r}, got {ctx.output_text[:80]!r}"]
    return Grade(score=1.0 if correct else 0.0,
                 subscores={"correct": float(correct), "called_lookup": float(looked_up)},
                 reasons=reasons)


server = ToolServer(tools=[*SERVED_TOOLS, get_order_status], graders=[retail, order_status])
