"""The retail tool server: ``rft serve examples.retail.app:server --port P``.

Built only with the public ``rft_sdk`` API. Serves the 15 τ²-bench retail
tools plus ``get_order_status`` at ``POST /tools/{name}``, and two graders:

* ``retail`` (default, ``POST /grade``): the holistic end-state grader of
  ``_grading.grade_retail`` — database gate, ``communicate_info``, and the
  evidence of work (what the answer states was returned by the rollout's calls).
* ``order_status`` (``POST /grade/order_status``): the trainer's learnable task
  (docs/ARCHITECTURE.md, "Retail example ↔ trainer seam"): 1.0 when the
  normalised final answer equals the normalised ``item["answer"]`` *and* a
  lookup of this rollout returned it (:func:`order_status_evidence`), else 0.0;
  sub-scores ``correct`` and ``called_lookup``.

Per-rollout state: ``rollout.state["db"]`` is the rollout's overlay of changed
records; the base database is loaded once per process and shared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rft_sdk import Grade, GradingContext, ToolServer, grader

from ._evidence import as_call
from ._grading import grade_retail
from ._server_tools import SERVED_TOOLS, STATE_KEY, get_order_status

__all__ = ["grade_order_status", "normalize_answer", "order_status", "order_status_evidence", "retail", "server"]

LOOKUP_TOOLS = frozenset({"get_order_status", "get_order_details"})


@grader(name="retail", default=True)
async def retail(ctx: GradingContext) -> Grade:
    """Grade a retail rollout by its final database, final answer and evidence of work (see ``_grading``).

    Raises:
        ValueError: the item lacks gold ``actions`` (answered as a grader failure).
    """
    result = grade_retail(ctx.item, ctx.state.get(STATE_KEY, {}), ctx.output_text, calls=ctx.trajectory)
    return Grade(score=result.score, subscores=result.subscores, reasons=result.reasons)


def normalize_answer(text: str) -> str:
    """Lower-case, strip surrounding whitespace and trailing ``.``/``!`` (the seam's rule)."""
    return text.strip().lower().rstrip(".!").strip()


def _returned_status(name: str, output: str) -> str | None:
    if name == "get_order_status":
        return output
    try:
        order = json.loads(output)
    except ValueError:
        return None
    status = order.get("status") if isinstance(order, dict) else None
    return status if isinstance(status, str) else None


def order_status_evidence(item: Mapping[str, Any], answer: str, calls: Iterable[Any]) -> bool:
    """Whether a successful lookup of this rollout returned the answer's status.

    A lookup is ``get_order_status`` (its output is the status) or ``get_order_details``
    (its JSON ``status``), called for ``item["order_id"]`` when the item names one.
    """
    order_id = item.get("order_id")
    for call in map(as_call, calls):
        if call.name not in LOOKUP_TOOLS or call.output is None:
            continue
        if isinstance(order_id, str) and call.arguments.get("order_id") != order_id:
            continue
        status = _returned_status(call.name, call.output)
        if status is not None and normalize_answer(status) == normalize_answer(answer):
            return True
    return False


def grade_order_status(item: Mapping[str, Any], answer: str, calls: Iterable[Any]) -> Grade:
    """The ``order_status`` grade as a pure function of the item, the final answer and the calls.

    1.0 when the normalised answer equals ``item["answer"]`` and
    :func:`order_status_evidence` holds; a right answer with no lookup that returned
    it is a guess (answering "pending" to every question would otherwise earn the
    share of pending orders) and scores 0.0.

    Raises:
        ValueError: the item has no string ``answer``.
    """
    expected = item.get("answer")
    if not isinstance(expected, str):
        raise ValueError("order_status items need a string 'answer' (the expected status)")
    calls = list(calls)
    correct = normalize_answer(answer) == normalize_answer(expected)
    looked_up = order_status_evidence(item, answer, calls)
    reasons = []
    if not correct:
        reasons.append(f"expected {expected!r}, got {answer[:80]!r}")
    elif not looked_up:
        reasons.append("no lookup of this order in this rollout returned that status: a guess")
    return Grade(score=1.0 if correct and looked_up else 0.0,
                 subscores={"correct": float(correct),
                            "called_lookup": float(any(as_call(c).name in LOOKUP_TOOLS for c in calls))},
                 reasons=reasons)


@grader(name="order_status")
async def order_status(ctx: GradingContext) -> Grade:
    """Grade the order-status task (:func:`grade_order_status`).

    Raises:
        ValueError: the item has no string ``answer``.
    """
    return grade_order_status(ctx.item, ctx.output_text, ctx.trajectory)


server = ToolServer(tools=[*SERVED_TOOLS, get_order_status], graders=[retail, order_status])
