"""Per-rollout objects: ``ToolCallRecord`` (one entry of a trajectory) and
``Rollout`` (what a tool sees of its rollout)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..exceptions import RFTError

__all__ = ["Rollout", "ToolCallRecord"]


@dataclasses.dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of a rollout, as recorded by the tool server.

    Attributes:
        call_id: the hosted ``call_id`` (unique per call within a rollout).
        id: the hosted item ``id`` (``"fc_..."``), or ``None`` if not sent.
        name: tool name.
        arguments: decoded arguments as sent by the model (JSON object), or
            ``{"_raw": <what was sent>}`` when the arguments were not valid
            JSON or not a JSON object.
        output: the string returned to the model (HTTP 200), else ``None``.
        error: the error message shown to the model (HTTP 4xx), else ``None``.
        status: HTTP status of the answer (200, 400, 404 or 422).
        started_at: wall-clock start time, unix seconds.
        latency_s: time spent executing (validation + function), seconds.

    ``ok`` (a property): ``True`` for a 2xx answer with an output; a refused call changed nothing.
    """

    call_id: str
    id: str | None
    name: str
    arguments: dict[str, Any]
    output: str | None
    error: str | None
    status: int
    started_at: float
    latency_s: float

    @property
    def ok(self) -> bool:
        """``True`` when the call succeeded (2xx with an output)."""
        return 200 <= self.status < 300

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with exactly the dataclass fields."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallRecord:
        """Inverse of :meth:`to_dict` (used by serialising stores)."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})


class Rollout:
    """The rollout a tool call belongs to; injected into a parameter annotated ``Rollout``.

    Attributes:
        trace_id: the hosted ``trace_id`` shared by every call of the rollout.
        item: the dataset line (JSON object) the rollout was sampled from.
        state: mutable JSON-serialisable dict; changes persist across this
            rollout's calls when the tool returns normally and are rolled
            back when it raises. It is stored as JSON after each call and decoded
            for the next: a tuple comes back as a list, an ``int`` key as a string,
            and a value JSON cannot hold (a ``set``, a ``datetime``) makes the call
            answer 400 ``tool_error``.
        trajectory: the calls recorded so far, oldest first (read-only).
        call_id: ``call_id`` of the call being executed.
        db: the rollout's own database (see :attr:`db`).
    """

    __slots__ = ("_db", "_trajectory", "call_id", "item", "state", "trace_id")

    def __init__(
        self,
        trace_id: str,
        item: dict[str, Any],
        state: dict[str, Any],
        trajectory: Sequence[ToolCallRecord] = (),
        call_id: str | None = None,
        db: Any = None,
    ) -> None:
        self.trace_id = trace_id
        self.item = item
        self.state = state
        self._trajectory = trajectory  # copied into a tuple on first read: most tools never look
        self.call_id = call_id
        self._db = db

    @property
    def db(self) -> Any:
        """This rollout's own database: a DB-API connection (``sqlite3.Connection``, or a
        ``psycopg.Connection`` — a ``psycopg.AsyncConnection`` in an ``async def`` tool)
        to a clone of the server's template, in a transaction the SDK commits when the
        tool returns and rolls back when it raises (``commit()`` inside the tool keeps
        work within the call; docs/database.md).

        Raises:
            RFTError: the server has no database (``ToolServer(db=SQLiteDatabase(...))``).
        """
        if self._db is None:
            raise RFTError("this tool server has no rollout database: pass ToolServer(db=SQLiteDatabase(...)) "
                           "or ToolServer(db=PostgresDatabase(...)) (docs/database.md)")
        return self._db

    @property
    def trajectory(self) -> tuple[ToolCallRecord, ...]:
        """The calls recorded before this one, oldest first (a tuple: read-only)."""
        if not isinstance(self._trajectory, tuple):
            self._trajectory = tuple(self._trajectory)
        return self._trajectory

    def __repr__(self) -> str:
        return (
            f"Rollout(trace_id={self.trace_id!r}, calls={len(self._trajectory)}, "
            f"state_keys={sorted(self.state)!r})"
        )
