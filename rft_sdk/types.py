"""Public types for annotations and custom stores (re-exported from ``rft_sdk``)."""

from __future__ import annotations

from ._grading import Grade, GraderDefinition, GradingContext
from ._rollout import Rollout, ToolCallRecord
from ._stores import GradeRecord, RolloutStore, StoredRollout
from ._tool import ToolDefinition

__all__ = [
    "Grade",
    "GradeRecord",
    "GraderDefinition",
    "GradingContext",
    "Rollout",
    "RolloutStore",
    "StoredRollout",
    "ToolCallRecord",
    "ToolDefinition",
]
