"""rft-sdk: customer-side endpoints for hosted agent reinforcement fine-tuning.

Decorate plain Python functions as tools (``@server.tool``) and graders
(``@server.grader``); a ``ToolServer`` serves them over the hosted protocol
(``/tools/{name}``, ``/grade``) with per-rollout state keyed by ``trace_id``.
See ``docs/ARCHITECTURE.md`` for the public API contract.
"""

from ._db import (
    DatabaseDiff,
    DatabaseLimitError,
    GradingDatabase,
    PostgresDatabase,
    PostgresSchemaDatabase,
    RolloutDatabase,
    RowChange,
    SQLiteDatabase,
    sqlalchemy_engine,
    sqlalchemy_session,
)
from ._definitions._answer_line import answer_line
from ._definitions._grading import Grade, GraderDefinition, GradingContext, grader
from ._definitions._rollout import Rollout, ToolCallRecord
from ._definitions._tool import ToolDefinition, tool
from ._server._admission import Admission
from ._server._app import ToolServer
from ._stores import (
    FakeClock,
    GradeRecord,
    MemoryStore,
    RedisStore,
    RolloutEvictedError,
    RolloutStore,
    RolloutTooLargeError,
    SQLiteStore,
    StoredRollout,
    default_store,
    store_from_url,
)
from ._version import __version__ as __version__  # re-exported (rft --version)
from .exceptions import (
    GraderDefinitionError,
    GraderError,
    RetryableToolError,
    RFTError,
    StoreError,
    StoreLockTimeoutError,
    ToolDefinitionError,
    ToolError,
)
from .sandbox._sandbox import Sandbox, SandboxLimits, SandboxPool

__all__ = [
    "Admission",
    "DatabaseDiff",
    "DatabaseLimitError",
    "FakeClock",
    "Grade",
    "GradeRecord",
    "GraderDefinition",
    "GraderDefinitionError",
    "GraderError",
    "GradingContext",
    "GradingDatabase",
    "MemoryStore",
    "PostgresDatabase",
    "PostgresSchemaDatabase",
    "RFTError",
    "RedisStore",
    "RetryableToolError",
    "Rollout",
    "RolloutDatabase",
    "RolloutEvictedError",
    "RolloutStore",
    "RolloutTooLargeError",
    "RowChange",
    "SQLiteDatabase",
    "SQLiteStore",
    "Sandbox",
    "SandboxLimits",
    "SandboxPool",
    "StoreError",
    "StoreLockTimeoutError",
    "StoredRollout",
    "ToolCallRecord",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolServer",
    "answer_line",
    "default_store",
    "grader",
    "sqlalchemy_engine",
    "sqlalchemy_session",
    "store_from_url",
    "tool",
]
