"""``ScriptBatcher``: the Lua scripts of concurrent calls sent to Redis together.

A store object keeps two connections of its own for its scripts ("lanes").
A script started while a lane is idle goes at once, as its own command; one
started while both have a script or a batch in flight waits, and those that
waited go together as the next batch on the first lane that returns (up to
``BATCH_BYTES``; more lanes open, up to ``MAX_LANES``, while more than that
waits, e.g. a burst of first calls, each carrying its item): one
write and one read of this process, and for Redis one read and one reply
write for all of them, where each would have cost its own (16 callers of a
bare script: ~10 µs of this process's CPU and ~3 µs of Redis's per script,
against ~33 µs and ~13 µs sent apart through redis-py's pool; the tool path:
``benchmarks/bench_stores.py --concurrency 16``, docs/performance.md).
Redis runs a batch's scripts one after the other, each atomically, exactly as
if they had come on separate connections: nothing about what a script sees or
writes changes, only how the bytes travel. Two lanes, not one: while Redis
runs (or, with ``appendfsync always``, fsyncs) one batch, the next is already
in its socket buffer, so Redis does not sit idle waiting for this process.

A batch whose connection breaks is resent on a new one as the pool's
``retry`` says (every script is safe to run twice: ``_redis_scripts``); a
script Redis no longer holds (a restart empties its script cache) is loaded
and run again.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, cast

__all__ = ["BATCH_BYTES", "MAX_LANES", "ScriptBatcher"]

#: Bytes of scripts one batch carries at most (one script at least): Redis reads each connection 16 KiB at a
#: time per turn of its event loop (``PROTO_IOBUF_LEN``) and, with ``appendfsync always``, fsyncs at the end of
#: every turn that wrote; a larger batch on one connection would take several turns, and fsyncs, to read.
BATCH_BYTES = 16 * 1024
#: Lanes (connections) one batcher opens at most (fewer when its client's pool's ``max_connections`` is): past its
#: two, one more each time the scripts waiting exceed ``BATCH_BYTES`` (a burst of first calls, each carrying its
#: dataset item), so Redis reads them in parallel, as many at a turn as the pool's connections used to carry.
MAX_LANES = 64


class _Lane:
    """One connection of the batcher and whether a script or a batch is in flight on it."""

    __slots__ = ("conn", "packer", "task")

    def __init__(self) -> None:
        self.conn: Any = None  # made on first use by the client's pool
        self.packer: Any = None  # ``ScriptBatcher._packer`` of ``conn`` (looked up once per connection)
        self.task: asyncio.Task[None] | None = None  # its batch in flight (held: the loop keeps tasks weakly)


class ScriptBatcher:
    """Runs registered scripts of one ``redis.asyncio.Redis`` client over ``lanes`` connections of its own,
    batching those started while every lane has one in flight (module docstring). One per store object;
    bound to the event loop it was last used on.

    Args:
        client: the store's ``redis.asyncio.Redis`` (its pool makes the connections, with the pool's
            settings: address, credentials, TLS, database, ``retry``).
        lanes: connections in flight for scripts as they come (default 2: while Redis runs or fsyncs one
            batch, the next is already in its socket buffer, so it is never idle waiting for this process; one
            lane would make it so); more, up to ``max_lanes`` (default: the client's pool's
            ``max_connections``, at most ``MAX_LANES``), carry the batches beyond ``BATCH_BYTES`` while the
            scripts waiting exceed it.
    """

    def __init__(self, client: Any, lanes: int = 2, max_lanes: int | None = None) -> None:
        self.client = client
        if max_lanes is None:  # (redis-py's plain pool allows 2**31: bounded here)
            max_lanes = min(int(getattr(client.connection_pool, "max_connections", None) or MAX_LANES), MAX_LANES)
        self._first_lanes, self._max_lanes = lanes, max(lanes, max_lanes)
        self._lanes = [_Lane() for _ in range(lanes)]
        self._idle = list(self._lanes)  # lanes with nothing in flight
        self._queue: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any], int]] = []
        self._queued_bytes = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hiredis_packer: Any = None  # (None: not looked up yet; False: not installed)

    async def aclose(self) -> None:
        """Close the connections (a later script opens new ones)."""
        for lane in self._lanes:
            conn, lane.conn = lane.conn, None
            if conn is not None:
                await conn.disconnect()

    async def run(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """``script(keys=keys, args=args)``'s reply; sent at once on an idle lane, or with the next batch when
        every lane has one in flight.

        Raises:
            redis.RedisError: as the script's own command would (Redis unreachable, the script failed).
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (e.g. a test's): nothing of the last one is in flight
            self._loop, self._queue, self._queued_bytes = loop, [], 0
            self._lanes = [_Lane() for _ in range(self._first_lanes)]
            self._idle = list(self._lanes)
        if self._idle and len(self._lanes) - len(self._idle) < self._first_lanes:
            lane = self._idle.pop()
            try:
                reply = (await self._send(lane, [(script, keys, args)]))[0]
            finally:
                self._next(lane)
        else:
            future: asyncio.Future[Any] = loop.create_future()
            size = sum(len(a) if isinstance(a, (bytes, str)) else 8 for a in (*keys, *args))
            entry = (script, keys, args, future, size)
            self._queue.append(entry)
            self._queued_bytes += size
            if self._queued_bytes > BATCH_BYTES:  # more waits than one batch carries: on one more connection
                if self._idle:
                    self._start(self._idle.pop())
                elif len(self._lanes) < self._max_lanes:
                    self._lanes.append(_Lane())
                    self._start(self._lanes[-1])
            try:
                reply = await future
            except asyncio.CancelledError:  # (a timeout) not sent yet: it never will be
                if entry in self._queue:
                    self._queue.remove(entry)
                    self._queued_bytes -= size
                raise
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _next(self, lane: _Lane) -> None:
        """``lane``'s command returned: it sends what waited, as one batch, or goes idle (when others keep the
        first lanes' worth in flight and less than a batch waits: one of them sends it, as a larger batch)."""
        if lane not in self._lanes:  # a lane of an event loop this batcher has left
            return
        others_busy = len(self._lanes) - len(self._idle) - 1
        if self._queue and (others_busy < self._first_lanes or self._queued_bytes > BATCH_BYTES):
            self._start(lane)
            return
        lane.task = None
        self._idle.append(lane)

    def _start(self, lane: _Lane) -> None:
        """Send the oldest waiting scripts, up to ``BATCH_BYTES`` (one at least), as one batch on ``lane``."""
        taken, size = 0, 0
        while taken < len(self._queue) and (taken == 0 or size + self._queue[taken][4] <= BATCH_BYTES):
            size += self._queue[taken][4]
            taken += 1
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        self._queued_bytes -= size
        lane.task = asyncio.get_running_loop().create_task(self._send_batch(lane, batch))

    async def _send_batch(self, lane: _Lane,
                          batch: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any], int]]) -> None:
        """Send ``batch`` on ``lane`` and hand each caller its reply (or the error that ended the batch)."""
        try:
            replies = await self._send(lane, [entry[:3] for entry in batch])
        except asyncio.CancelledError:  # the loop is shutting down: so are its callers
            for entry in batch:
                entry[3].cancel()
            raise
        except Exception as exc:  # each caller raises it (Redis unreachable, ...)
            replies = [exc] * len(batch)
        finally:
            self._next(lane)
        for entry, reply in zip(batch, replies):
            future = entry[3]
            if not future.done():  # (done: its caller gave up, a timeout; the reply is dropped)
                future.set_result(reply)

    async def _send(self, lane: _Lane, scripts: list[tuple[Any, list[Any], list[Any]]]) -> list[Any]:
        """``EVALSHA`` each script in one write on ``lane``, read their replies (a script's error is its
        reply); a script Redis lacks (``NOSCRIPT``: its script cache was emptied by a restart) is loaded and
        run again.

        Raises:
            redis.RedisError: Redis unreachable (after the connection's ``retry``).
        """
        replies = await self._round_trip(lane, [("EVALSHA", s.sha, len(keys), *keys, *args)
                                                for s, keys, args in scripts])
        if any(isinstance(reply, Exception) for reply in replies):
            await self._load_missing(lane, scripts, replies)
        return replies

    async def _load_missing(self, lane: _Lane, scripts: list[tuple[Any, list[Any], list[Any]]],
                            replies: list[Any]) -> None:
        """Load the scripts whose reply is ``NOSCRIPT`` and put their second run's replies in ``replies``."""
        import redis

        missing = [i for i, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)]
        if missing:
            lacking = {id(scripts[i][0]): scripts[i][0] for i in missing}.values()
            for loaded in await self._round_trip(lane, [("SCRIPT", "LOAD", s.script) for s in lacking]):
                if isinstance(loaded, Exception):
                    raise loaded
            again = await self._round_trip(lane, [("EVALSHA", scripts[i][0].sha, len(scripts[i][1]),
                                                   *scripts[i][1], *scripts[i][2]) for i in missing])
            for i, reply in zip(missing, again):
                replies[i] = reply

    def _packer(self, conn: Any) -> Any:
        """hiredis's ``pack_command`` (C: one call per command, what redis-py's sync client's
        ``HiredisRespSerializer`` calls after its per-argument checks in Python) when hiredis is installed and
        the connection encodes text as UTF-8 (what it packs text as), else ``None``: the asyncio connection's
        own packer, in Python, costs ~20 µs of CPU per script of the tool path. The commands given to it are
        this module's own (a one-word name, then ``str``/``bytes``/``int``/``float`` arguments: nothing that
        ``HiredisRespSerializer`` would convert or split first)."""
        if self._hiredis_packer is None:
            from redis.utils import HIREDIS_AVAILABLE

            self._hiredis_packer = False
            if HIREDIS_AVAILABLE:
                import hiredis

                self._hiredis_packer = hiredis.pack_command
        utf8 = str(getattr(conn.encoder, "encoding", "")).lower().replace("_", "-") in ("utf-8", "utf8")
        return self._hiredis_packer if self._hiredis_packer and utf8 else None

    async def _round_trip(self, lane: _Lane, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Write ``commands`` at once on ``lane``'s connection and read one reply each (a ``ResponseError`` is
        a reply); a broken connection is reopened and all of them sent again, as the connection's ``retry``
        says (every script is safe to run twice)."""
        if lane.conn is None:
            lane.conn = self.client.connection_pool.make_connection()
            lane.packer = self._packer(lane.conn)
        conn = lane.conn

        async def broken(error: Exception) -> None:
            await conn.disconnect()

        return cast("list[Any]", await conn.retry.call_with_retry(
            functools.partial(self._attempt, conn, lane.packer, commands), broken))

    @staticmethod
    async def _attempt(conn: Any, packer: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
        """One try of ``_round_trip``: ``commands`` written at once on ``conn``, one reply read each."""
        from redis.exceptions import ResponseError

        packed = [packer(command) for command in commands] if packer is not None else conn.pack_commands(commands)
        await conn.send_packed_command(packed, check_health=False)
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(await conn.read_response())
            except ResponseError as exc:
                replies.append(exc)
        return replies
