"""The SDK's exception tree.

``RFTError`` is the base of every error the SDK raises on purpose::

    RFTError
    ├── DefinitionError (also TypeError)   -- raised at decoration/registration time
    │   ├── ToolDefinitionError            -- a tool signature/schema cannot be served
    │   └── GraderDefinitionError          -- a grader signature cannot be served
    ├── ToolError                          -- raised BY a tool: model-visible error (HTTP 400)
    │   └── RetryableToolError             -- raised BY a tool: transient, HTTP 503 so the
    │                                         hosted side retries (protocol: 5xx retried 3x)
    ├── GraderError                        -- raised by/for a grader: HTTP 500, counted in metrics
    └── StoreError                         -- the rollout store failed (database error, lost lock lease)
        └── StoreLockTimeoutError (also TimeoutError) -- a rollout's lock was not acquired in time

Tool authors raise ``ToolError("message for the model")`` for an expected
failure the model can correct (e.g. "Order not found"), and
``RetryableToolError`` for a transient failure of a dependency. Any other
exception inside a tool is treated like ``ToolError`` (model-visible) and
logged with its traceback.
"""

from __future__ import annotations

__all__ = [
    "DefinitionError",
    "GraderDefinitionError",
    "GraderError",
    "RFTError",
    "RetryableToolError",
    "StoreError",
    "StoreLockTimeoutError",
    "ToolDefinitionError",
    "ToolError",
]


class RFTError(Exception):
    """Base class of every error the SDK raises deliberately."""


class DefinitionError(RFTError, TypeError):
    """A decorated function cannot be served; raised at decoration time."""


class ToolDefinitionError(DefinitionError):
    """A tool's signature or types cannot be expressed as a strict JSON Schema.

    The message names the function and the offending parameter.
    """


class GraderDefinitionError(DefinitionError):
    """A grader function or its options are invalid; raised at decoration time."""


class ToolError(RFTError):
    """Raised inside a tool: an error the model sees and can learn from.

    The endpoint answers HTTP 400 with a JSON error body (no ``output``); per
    the hosted protocol the service serializes that body into the model's
    context and the rollout continues.
    """


class RetryableToolError(ToolError):
    """Raised inside a tool: a transient failure; the endpoint answers HTTP 503.

    The hosted service retries 5xx up to 3 times with the same ``call_id``,
    then discards the rollout. The failed attempt is not written to the
    trajectory and the rollout's state changes are rolled back.
    """


class GraderError(RFTError):
    """A grader failed or returned an invalid score (non-finite, out of range,
    wrong type). The grade endpoint answers HTTP 500 with a readable body."""


class StoreError(RFTError):
    """A rollout store could not do its job: the database failed or is
    unreadable (message names the path and the SQLite error), a stored record
    is corrupt, or a rollout lock's lease was lost while held (another worker
    may have run a call of that rollout concurrently)."""


class StoreLockTimeoutError(StoreError, TimeoutError):
    """A rollout's lock was not acquired within the store's ``lock_timeout_s``
    (another worker holds it for a long tool call, or is stuck)."""
