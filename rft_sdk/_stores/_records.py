"""What a store keeps: ``StoredRollout`` and ``GradeRecord``, their JSON codec,
and the append-only diff (``Delta``) that lets a store persist only what a
call added.

A store that wrote a rollout remembers, on the ``StoredRollout`` object, how
much of it is persisted (a private ``_Persisted`` mark: records and responses
written so far, their bytes, the generation of the stored copy). The next
``save`` of that object then writes only the records and responses appended
since, plus the (small) state and item: a call costs O(its own size), not
O(the rollout's size). An object whose persisted prefix was replaced (not
appended to) is rewritten in full.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from .._definitions._rollout import ToolCallRecord
from .._wire._json import json_object, orjson

__all__ = ["Delta", "GradeRecord", "StoredRollout", "decode_record", "decode_response", "encode_record",
           "encode_record_bytes",
           "encode_response", "encode_response_bytes", "json_object", "new_generation"]


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(ToolCallRecord))


def _record_dict(record: ToolCallRecord) -> dict[str, Any]:
    # record.to_dict() without dataclasses.asdict's deep copy (the dict is encoded at once)
    return {name: getattr(record, name) for name in _RECORD_FIELDS}


def encode_record(record: ToolCallRecord) -> str:
    """JSON text of ``record.to_dict()``."""
    return _dumps(_record_dict(record))


def encode_record_bytes(record: ToolCallRecord) -> bytes:
    """UTF-8 JSON of ``record.to_dict()`` (orjson when installed and it can, else :func:`encode_record`);
    read back by :func:`decode_record`. (orjson would write a ``NaN`` as ``null``: a recorded call holds
    none, its arguments were decoded strictly and its times are finite.)"""
    if orjson is not None:
        try:  # orjson writes a dataclass's fields in order itself (no dict built in Python): the same bytes
            return bytes(orjson.dumps(record if type(record) is ToolCallRecord else _record_dict(record)))
        except TypeError:  # an integer beyond 64 bits, a lone surrogate in a raw argument: the stdlib's text
            pass
    return encode_record(record).encode("utf-8")


def decode_record(text: str | bytes) -> ToolCallRecord:
    """Inverse of :func:`encode_record`.

    Raises:
        ValueError: not a serialised ``ToolCallRecord``.
    """
    data = json_object("ToolCallRecord", text)
    try:  # ToolCallRecord.from_dict, with the field names looked up once
        return ToolCallRecord(*map(data.__getitem__, _RECORD_FIELDS))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"stored ToolCallRecord lacks or mistypes a field: {exc!r}") from exc


def encode_response(call_id: str, response: list[Any]) -> str:
    """JSON text ``[call_id, status, body_text]`` of one idempotency entry."""
    return _dumps([call_id, *response])


def encode_response_bytes(call_id: str, response: list[Any]) -> bytes:
    """UTF-8 JSON ``[call_id, status, body_text]`` (orjson when installed and it can, else
    :func:`encode_response`); read back by :func:`decode_response`."""
    if orjson is not None:
        try:
            return bytes(orjson.dumps([call_id, *response]))
        except TypeError:  # a lone surrogate in a call_id: the stdlib's text
            pass
    return encode_response(call_id, response).encode("utf-8")


def decode_response(text: str | bytes) -> tuple[str, list[Any]]:
    """Inverse of :func:`encode_response`: ``(call_id, [status, body_text])``.

    Raises:
        ValueError: not that shape.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stored response is not valid JSON: {exc}") from exc
    if not (isinstance(data, list) and len(data) == 3 and isinstance(data[0], str)):
        raise ValueError("stored response must be a JSON array [call_id, status, body]")
    return data[0], [data[1], data[2]]


def _last_keys(mapping: Mapping[str, Any], count: int) -> list[str]:
    """The last ``count`` keys of ``mapping``, oldest first: read from the end of a ``dict`` (O(count), not
    O(len(mapping)): a save of one call does not grow with the rollout's length)."""
    if count <= 0:
        return []
    if isinstance(mapping, dict):
        return list(itertools.islice(reversed(mapping), count))[::-1]
    return list(mapping)[-count:]


def new_generation() -> str:
    """A fresh id for a newly created stored copy of a rollout (32 hex digits)."""
    return uuid.uuid4().hex


@dataclasses.dataclass
class _Persisted:
    """How much of a ``StoredRollout`` object its store has written."""

    generation: str
    calls: int
    last_record: ToolCallRecord | None
    responses: int
    last_response: str | None
    calls_bytes: int
    item: object  # StoredRollout.item_token() when written or loaded: its identity says "unchanged since"
    item_json: bytes


class StoredRollout:
    """Everything the server keeps for one rollout.

    Attributes:
        trace_id: the rollout's ``trace_id``.
        item: the dataset line from the first call (JSON object). A store or
            the tool path may hold it as JSON bytes instead (:meth:`set_item_json`):
            it is then decoded on first read, so a call that never reads it
            never decodes it.
        state_json: the rollout state as JSON text (``"{}"`` initially).
        trajectory: recorded calls, oldest first. Stores persist it
            append-only: extend it (``[*old, new]`` or ``append``), do not
            edit persisted records in place.
        responses: ``call_id -> [status, body_text]`` of completed calls, for
            idempotent replay of retried requests (append-only like
            ``trajectory``).
        created_at: unix seconds of the first call.

    ``MemoryStore.load`` fills ``trajectory`` and ``responses`` with
    read-through views (``LazyTrajectory``: a sequence with ``append``;
    ``ResponsesView``: a mutable mapping) that equal and serialise like the
    list and dict; build a new list or dict to replace them. Two rollouts are
    equal when every attribute above is.
    """

    __slots__ = ("_item", "_item_json", "_persisted", "created_at", "responses", "state_json", "trace_id",
                 "trajectory")

    def __init__(self, trace_id: str, item: dict[str, Any] | None = None, state_json: str = "{}",
                 trajectory: list[ToolCallRecord] | None = None, responses: dict[str, list[Any]] | None = None,
                 created_at: float | None = None) -> None:
        self.trace_id = trace_id
        self._item: dict[str, Any] | None = {} if item is None else item
        self._item_json: bytes | None = None
        self.state_json = state_json
        self.trajectory: list[ToolCallRecord] = [] if trajectory is None else trajectory
        self.responses: dict[str, list[Any]] = {} if responses is None else responses
        self.created_at = time.time() if created_at is None else created_at
        self._persisted: _Persisted | None = None

    @property
    def item(self) -> dict[str, Any]:
        """The dataset line (decoded from the held JSON bytes on first read)."""
        if self._item is None:
            self._item = json_object("item", self._item_json or b"{}")
        return self._item

    @item.setter
    def item(self, value: dict[str, Any]) -> None:
        self._item, self._item_json = value, None

    def set_item_json(self, raw: bytes, value: dict[str, Any] | None = None) -> None:
        """Hold the item as the JSON object ``raw`` (UTF-8 bytes a store wrote, or the bytes of an item a
        request carried and the one decoding rule accepted), decoded only when :attr:`item` is read
        (``value``: what ``raw`` decodes to, when the caller has it already)."""
        self._item, self._item_json = value, raw

    @property
    def held_item_json(self) -> bytes | None:
        """The item's JSON bytes as held by :meth:`set_item_json` (``None`` when it is held as a dict)."""
        return self._item_json

    def item_token(self) -> object:
        """What identifies the item this object holds, by identity: the held bytes, else the dict (a store
        compares it with the token it saw at its last write or load: the same object, the same item)."""
        return self._item_json if self._item_json is not None else self._item

    @property
    def item_json(self) -> bytes:
        """The item's JSON: the held bytes, else the stdlib's compact encoding of :attr:`item` (it keeps a NaN)."""
        if self._item_json is not None:
            return self._item_json
        return _dumps(self._item).encode("utf-8") if self._item else b"{}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoredRollout):
            return NotImplemented
        return ((self.trace_id, self.item, self.state_json, self.trajectory, self.responses, self.created_at)
                == (other.trace_id, other.item, other.state_json, other.trajectory, other.responses,
                    other.created_at))

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (f"StoredRollout(trace_id={self.trace_id!r}, item={self.item!r}, state_json={self.state_json!r}, "
                f"trajectory={self.trajectory!r}, responses={self.responses!r}, created_at={self.created_at!r})")

    def to_json(self) -> str:
        """JSON text ``{"trace_id", "item", "state_json", "trajectory": [record...],
        "responses", "created_at"}`` (records as ``ToolCallRecord.to_dict``)."""
        return _dumps({
            "trace_id": self.trace_id, "item": self.item, "state_json": self.state_json,
            "trajectory": [r.to_dict() for r in self.trajectory], "responses": dict(self.responses),
            "created_at": self.created_at,
        })

    @classmethod
    def from_json(cls, text: str | bytes) -> StoredRollout:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not a serialised ``StoredRollout``.
        """
        data = json_object("StoredRollout", text)
        try:
            return cls(trace_id=data["trace_id"], item=data["item"], state_json=data["state_json"],
                       trajectory=[ToolCallRecord.from_dict(r) for r in data["trajectory"]],
                       responses=data["responses"], created_at=float(data["created_at"]))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"stored StoredRollout lacks or mistypes a field: {exc!r}") from exc

    @property
    def generation(self) -> str | None:
        """Id of the stored copy this object was loaded from or saved to (``None``: never persisted)."""
        return None if self._persisted is None else self._persisted.generation


@dataclasses.dataclass
class Delta:
    """What ``save`` must write for one ``StoredRollout`` (computed by :meth:`of`).

    Attributes:
        rewrite: the persisted copy cannot be extended (new object, or its
            persisted prefix changed): write everything under a new generation.
        generation: generation the write goes to.
        records: JSON texts of the records to append, oldest first (UTF-8 bytes with ``binary``).
        responses: ``(call_id, JSON text)`` of the responses to add (UTF-8 bytes with ``binary``).
        item_json: the item's JSON (UTF-8; written on rewrite or when changed).
        item_changed: ``item_json`` differs from the persisted one.
        nbytes: size of the rollout after the write: bytes of every record
            and response JSON plus the state and item JSON.
    """

    rewrite: bool
    generation: str
    records: list[Any]  # str, or bytes (binary)
    responses: list[tuple[str, Any]]
    item_json: bytes
    item_changed: bool
    nbytes: int
    calls_bytes: int = 0

    @classmethod
    def of(cls, rollout: StoredRollout, full: bool = False, *, binary: bool = False) -> Delta:
        """The writes that bring the persisted copy of ``rollout`` up to date. O(new data).

        ``full=True``: everything, under a new generation (the persisted copy is gone or another one).
        ``binary=True``: records and responses as UTF-8 JSON bytes, encoded by orjson where it can
        (:func:`encode_record_bytes`; a store that keeps bytes, e.g. Redis), else as ``str``.
        """
        record_json, response_json = (encode_record_bytes, encode_response_bytes) if binary else (
            encode_record, encode_response)
        mark, trajectory, answers = rollout._persisted, rollout.trajectory, rollout.responses
        extendable = (not full and mark is not None and mark.calls <= len(trajectory)
                      and mark.responses <= len(answers)
                      and (mark.calls == 0 or trajectory[mark.calls - 1] is mark.last_record))
        if mark is not None and extendable:  # the keys from the last persisted one on, read from the end
            keys = _last_keys(answers, len(answers) - mark.responses + (mark.responses > 0))
            if mark.responses > 0:
                extendable, keys = keys[0] == mark.last_response, keys[1:]
        if mark is not None and extendable:
            records: list[Any] = [record_json(r) for r in trajectory[mark.calls:]]
            responses: list[tuple[str, Any]] = [(k, response_json(k, answers[k])) for k in keys]
            calls_bytes, generation = mark.calls_bytes, mark.generation
            same_item = rollout.item_token() is mark.item
            item_json = mark.item_json if same_item else rollout.item_json
            item_changed = not same_item and item_json != mark.item_json
        else:
            records = [record_json(r) for r in trajectory]
            responses = [(k, response_json(k, v)) for k, v in answers.items()]
            calls_bytes, generation = 0, new_generation()
            item_json, item_changed = rollout.item_json, True
        if binary:
            calls_bytes += sum(map(len, records)) + sum(len(t) for _, t in responses)
        else:
            calls_bytes += sum(len(t.encode()) for t in records) + sum(len(t.encode()) for _, t in responses)
        nbytes = calls_bytes + len(rollout.state_json.encode()) + len(item_json)
        return cls(not extendable, generation, records, responses, item_json, item_changed, nbytes, calls_bytes)

    def committed(self, rollout: StoredRollout) -> None:
        """Record on ``rollout`` that this delta is persisted (call after the write succeeded)."""
        last = _last_keys(rollout.responses, 1)
        rollout._persisted = _Persisted(
            generation=self.generation, calls=len(rollout.trajectory),
            last_record=rollout.trajectory[-1] if rollout.trajectory else None,
            responses=len(rollout.responses), last_response=last[0] if last else None,
            calls_bytes=self.calls_bytes, item=rollout.item_token(), item_json=self.item_json)

    @staticmethod
    def loaded(rollout: StoredRollout, generation: str, calls_bytes: int, item_json: bytes) -> None:
        """Mark a freshly loaded ``rollout`` as fully persisted under ``generation``; its item is held as
        ``item_json`` (decoded only when read)."""
        if rollout.held_item_json is not item_json:
            rollout.set_item_json(item_json)
        last = _last_keys(rollout.responses, 1)
        rollout._persisted = _Persisted(
            generation=generation, calls=len(rollout.trajectory),
            last_record=rollout.trajectory[-1] if rollout.trajectory else None,
            responses=len(rollout.responses), last_response=last[0] if last else None,
            calls_bytes=calls_bytes, item=item_json, item_json=item_json)


@dataclasses.dataclass(frozen=True)
class GradeRecord:
    """The result of one successful grade, kept after the rollout is released
    so that a retried identical grade request gets the same answer.

    Attributes:
        trace_id: graded rollout.
        grader: grader name.
        fingerprint: SHA-256 hex of the canonical JSON grading request.
        score: the score answered.
        details: ``{"subscores": {...}, "reasons": [...]}``.
    """

    trace_id: str
    grader: str
    fingerprint: str
    score: float
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable ``{"trace_id", "grader", "fingerprint", "score", "details"}``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeRecord:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: a field is missing.
        """
        try:
            return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})
        except (KeyError, TypeError) as exc:
            raise ValueError(f"stored GradeRecord lacks field {exc}") from exc

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict`."""
        return _dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str | bytes) -> GradeRecord:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not a serialised ``GradeRecord``.
        """
        return cls.from_dict(json_object("GradeRecord", text))
