"""Views a store hands out over what it keeps as atoms (``LazyTrajectory``, ``ResponsesView``).

CPython's cyclic garbage collector walks every tracked container at each
full collection; a server holding 10,000 live rollouts of dataclass records
and dicts makes each such pause tens of ms (docs/performance.md). A store
that keeps each recorded call as one UTF-8 JSON ``bytes`` (an atom the
collector never tracks) and each replayable answer as a ``(status, text)``
tuple of atoms (untracked after its first collection) hands out these views
instead of decoded copies:

* :class:`LazyTrajectory` -- a read-only ``Sequence[ToolCallRecord]`` over the
  first ``n`` encoded calls (decoded on read) plus the records appended to it
  since it was loaded (kept as objects until the store encodes them on save);
* :class:`ResponsesView` -- a ``MutableMapping`` ``call_id -> [status, text]``
  over the stored answers plus the ones added since.

Loading is O(1) in the rollout's length (nothing is copied or decoded), and a
save by the store that handed out the view encodes only what was added.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any, overload

from .._rollout import ToolCallRecord
from ._records import decode_record

__all__ = ["LazyTrajectory", "ResponsesView"]


class LazyTrajectory(Sequence[ToolCallRecord]):
    """The first ``n`` of ``encoded`` (JSON bytes of records, an append-only list the store owns),
    decoded on read, followed by :attr:`added` (records appended with :meth:`append`).

    Equal to any sequence of the same records (``==`` with a list or tuple compares the records).
    """

    __slots__ = ("added", "encoded", "n")

    def __init__(self, encoded: list[bytes], n: int) -> None:
        self.encoded, self.n = encoded, n
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
            return decode_record(self.encoded[index])
        return self.added[index - self.n]

    def __iter__(self) -> Iterator[ToolCallRecord]:
        for i in range(self.n):
            yield decode_record(self.encoded[i])
        yield from self.added

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
    """``call_id -> [status, body_text]``: the store's ``base`` dict (values ``(status, text)``
    tuples, append-only, owned by the store) overlaid with :attr:`added` (answers set since loading).

    Deleting an answer that is in ``base`` is refused (the store's answers are append-only).
    """

    __slots__ = ("added", "base", "n")

    def __init__(self, base: dict[str, tuple[Any, ...]]) -> None:
        self.base, self.n = base, len(base)
        self.added: dict[str, list[Any]] = {}

    def __getitem__(self, call_id: str) -> list[Any]:
        value = self.added.get(call_id)
        if value is not None:
            return value
        return list(self.base[call_id])

    def get(self, call_id: str, default: Any = None) -> Any:  # the hot path: one lookup per dict
        """The answer of ``call_id``, else ``default``."""
        value = self.added.get(call_id)
        if value is not None:
            return value
        stored = self.base.get(call_id)
        return default if stored is None else list(stored)

    def __setitem__(self, call_id: str, value: list[Any]) -> None:
        self.added[call_id] = value

    def __delitem__(self, call_id: str) -> None:
        if call_id in self.base:
            raise TypeError("stored answers are append-only: build a new dict to replace them")
        del self.added[call_id]

    def __contains__(self, call_id: object) -> bool:
        return call_id in self.added or call_id in self.base

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from (k for k in self.added if k not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(1 for k in self.added if k not in self.base)

    def __repr__(self) -> str:
        return f"ResponsesView({dict(self)!r})"
