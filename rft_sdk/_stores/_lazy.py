"""Views a store hands out over what it keeps as atoms (``LazyTrajectory``, ``ResponsesView``).

CPython's cyclic garbage collector walks every tracked container at each
full collection; a server holding 10,000 live rollouts of dataclass records
and dicts makes each such pause tens of ms (docs/performance.md). A store
that keeps each recorded call as one UTF-8 JSON ``bytes`` (an atom the
collector never tracks; a rollout's calls are one ``bytearray`` with an
``bytearray`` of packed end offsets, neither of them ever tracked), and each
replayable answer the same way (plus a ``dict`` call_id -> position, of atoms
only, so never tracked either) hands out these views instead of decoded
copies:

* :class:`LazyTrajectory` -- a read-only ``Sequence[ToolCallRecord]`` over the
  first ``n`` encoded calls (decoded on read) plus the records appended to it
  since it was loaded (kept as objects until the store encodes them on save);
* :class:`ResponsesView` -- a ``MutableMapping`` ``call_id -> [status, text]``
  over the stored answers plus the ones added since.

Loading is O(1) in the rollout's length (nothing is copied or decoded), and a
save by the store that handed out the view encodes only what was added.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any, overload

from .._definitions._rollout import ToolCallRecord
from .._wire._json import orjson
from ._records import decode_record

__all__ = ["LazyTrajectory", "ResponsesView", "encode_answer", "packed_append", "packed_get", "packed_len"]


class LazyTrajectory(Sequence[ToolCallRecord]):
    """The first ``n`` records of ``blob`` (their UTF-8 JSON one after another; record ``i`` ends at
    ``ends``' 8-byte entry ``i``; both append-only and owned by the store), decoded on read, followed by :attr:`added`
    (records appended with :meth:`append`).

    Equal to any sequence of the same records (``==`` with a list or tuple compares the records).
    """

    __slots__ = ("added", "blob", "ends", "n")

    def __init__(self, blob: bytearray, ends: bytearray, n: int) -> None:
        self.blob, self.ends, self.n = blob, ends, n
        self.added: list[ToolCallRecord] = []

    def __len__(self) -> int:
        return self.n + len(self.added)

    @overload
    def __getitem__(self, index: int) -> ToolCallRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[ToolCallRecord]: ...

    def __getitem__(self, index: int | slice) -> ToolCallRecord | list[ToolCallRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("trajectory index out of range")
        if index < self.n:
            return decode_record(self.encoded(index))
        return self.added[index - self.n]

    def __iter__(self) -> Iterator[ToolCallRecord]:
        for i in range(self.n):
            yield decode_record(self.encoded(i))
        yield from self.added

    def encoded(self, index: int) -> bytes:
        """The stored JSON of record ``index`` (``0 <= index < n``)."""
        return packed_get(self.blob, self.ends, index)

    def append(self, record: ToolCallRecord) -> None:
        """Append ``record`` (O(1); the store encodes it when the rollout is saved)."""
        self.added.append(record)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"LazyTrajectory({list(self)!r})"


class ResponsesView(MutableMapping[str, list[Any]]):
    """``call_id -> [status, body_text]``: the store's answers (``index``: call_id -> position in the
    packed ``blob``/``ends`` of their JSON ``[status, text]``; all append-only, owned by the store)
    overlaid with :attr:`added` (answers set since loading).

    Deleting an answer the store holds is refused (the store's answers are append-only).
    """

    __slots__ = ("added", "blob", "ends", "index")

    def __init__(self, index: dict[str, int], blob: bytearray, ends: bytearray) -> None:
        self.index, self.blob, self.ends = index, blob, ends
        self.added: dict[str, list[Any]] = {}

    def _stored(self, call_id: str) -> list[Any] | None:
        position = self.index.get(call_id)
        if position is None:
            return None
        value: list[Any] = json.loads(packed_get(self.blob, self.ends, position))
        return value

    def __getitem__(self, call_id: str) -> list[Any]:
        value = self.get(call_id)
        if value is None:
            raise KeyError(call_id)
        return value  # type: ignore[no-any-return]

    def get(self, call_id: str, default: Any = None) -> Any:  # the hot path: two dict lookups
        """The answer of ``call_id``, else ``default``."""
        value = self.added.get(call_id)
        if value is None:
            value = self._stored(call_id)
        return default if value is None else value

    def __setitem__(self, call_id: str, value: list[Any]) -> None:
        self.added[call_id] = value

    def __delitem__(self, call_id: str) -> None:
        if call_id in self.index:
            raise TypeError("stored answers are append-only: build a new dict to replace them")
        del self.added[call_id]

    def __contains__(self, call_id: object) -> bool:
        return call_id in self.added or call_id in self.index

    def __iter__(self) -> Iterator[str]:
        yield from self.index
        yield from (k for k in self.added if k not in self.index)

    def __len__(self) -> int:
        return len(self.index) + sum(1 for k in self.added if k not in self.index)

    def __repr__(self) -> str:
        return f"ResponsesView({dict(self)!r})"


def packed_append(blob: bytearray, ends: bytearray, data: bytes) -> None:
    """Append ``data`` as the next entry of ``blob`` (its end offset packed into ``ends``, 8 bytes each)."""
    blob += data
    ends += len(blob).to_bytes(8, "little")


def packed_len(ends: bytearray) -> int:
    """How many entries ``ends`` delimits."""
    return len(ends) >> 3


def packed_get(blob: bytearray, ends: bytearray, index: int) -> bytes:
    """Entry ``index`` (``0 <= index < packed_len(ends)``) of ``blob``."""
    at = index << 3
    start = int.from_bytes(ends[at - 8:at], "little") if index else 0
    return bytes(blob[start:int.from_bytes(ends[at:at + 8], "little")])


def encode_answer(value: Sequence[Any]) -> bytes:
    """UTF-8 JSON of an answer ``[status, body_text]`` (orjson when it can, else the stdlib)."""
    if orjson is not None:
        try:
            return bytes(orjson.dumps(list(value)))
        except TypeError:
            pass
    return json.dumps(list(value), separators=(",", ":")).encode("utf-8")
