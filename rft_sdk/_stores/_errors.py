"""Store-specific errors (subclasses of the SDK's ``StoreError``)."""

from __future__ import annotations

from ..exceptions import StoreError

__all__ = ["RolloutTooLargeError"]


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
