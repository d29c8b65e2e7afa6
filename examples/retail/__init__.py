"""τ²-bench retail example: tool server, end-state grader, dataset builder, main job.

Importing this package loads nothing: the database is read on first use
(:func:`load_base_db`), and the SDK-backed server lives in
``examples.retail.app`` (``server``).
"""

from ._db import BaseDB, RetailView, load_base_db, overlay_size_bytes
from ._grading import RetailGrade, apply_actions, gold_view, grade_retail, mentions, normalize_text
from ._render import SYSTEM_PROMPT, reference_answer, render_user_message, to_first_person
from ._tools import READ_TOOLS, TOOLS, WRITE_TOOLS, RetailError, call_tool

__all__ = [
    "BaseDB",
    "READ_TOOLS",
    "RetailError",
    "RetailGrade",
    "RetailView",
    "SYSTEM_PROMPT",
    "TOOLS",
    "WRITE_TOOLS",
    "apply_actions",
    "call_tool",
    "gold_view",
    "grade_retail",
    "load_base_db",
    "mentions",
    "normalize_text",
    "overlay_size_bytes",
    "reference_answer",
    "render_user_message",
    "to_first_person",
]
