"""Public types for annotations and custom stores (re-exported from ``rft_sdk``)."""

from __future__ import annotations

from ._definitions._grading import Grade, GraderDefinition, GradingContext
from ._definitions._rollout import Rollout, ToolCallRecord
from ._definitions._tool import ToolDefinition
from ._stores import GradeRecord, RolloutStore, StoredRollout

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
