"""Store-specific errors (subclasses of the SDK's ``StoreError``)."""

from __future__ import annotations

from ..exceptions import StoreError

__all__ = ["RolloutEvictedError", "RolloutTooLargeError"]


class RolloutTooLargeError(StoreError):
    """A rollout would exceed its store's per-rollout byte budget (``max_rollout_bytes``).

    Raised by ``save`` before anything is written, so the stored rollout keeps
    its previous content. The tool server answers it as a model-visible error
    (the model can stop calling tools that return large outputs).

    Attributes:
        trace_id: the rollout.
        size_bytes: the size the rollout would have had (bytes of its JSON).
        limit_bytes: the store's ``max_rollout_bytes``.
    """

    def __init__(self, trace_id: str, size_bytes: int, limit_bytes: int) -> None:
        super().__init__(f"rollout {trace_id!r} would hold {size_bytes:,} bytes, over the store's per-rollout "
                         f"budget of {limit_bytes:,} bytes (max_rollout_bytes); the call was not recorded")
        self.trace_id, self.size_bytes, self.limit_bytes = trace_id, size_bytes, limit_bytes


class RolloutEvictedError(StoreError):
    """The rollout's state was evicted by the store's capacity or byte budget while it was in progress.

    Raised by ``load`` / ``load_for_call`` for ``ttl_s`` seconds after the
    eviction (unless the rollout was graded), instead of silently starting it
    afresh on empty state. The tool server answers it 503 ``rollout_evicted``:
    the hosted side retries, gets the same answer and discards the rollout,
    so neither the model nor the grader continues on a trajectory with calls
    missing.

    Attributes:
        trace_id: the rollout.
        status, code, counter: how the server answers and counts it.
    """

    status = 503
    code = "rollout_evicted"
    counter = "rollouts_evicted"

    def __init__(self, trace_id: str, store: str) -> None:
        super().__init__(f"rollout {trace_id!r} was evicted by {store}'s capacity or byte budget "
                         "(max_rollouts / max_total_bytes) while in progress: its calls are lost, so it cannot go on "
                         "or be graded faithfully; raise the budget or add capacity")
        self.trace_id = trace_id
