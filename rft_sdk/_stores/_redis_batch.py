"""``ScriptBatcher``: the Lua scripts of concurrent calls sent to Redis together.

One call at a time, a script goes as its own command (redis-py's ``Script``).
While one is in flight, the scripts that other calls of this process start
wait, and go together as the next batch when it returns: one redis-py
pipeline (``transaction=False``), so one write and one read on one pooled
connection, and for Redis one read and one reply write for all of them,
where each would have cost its own (about 30 µs of this process's CPU and
10 µs of Redis's per command with 16 calls in flight, measured by
``benchmarks/bench_stores.py``). Redis runs the batch's scripts one after the
other, each atomically, exactly as if they had come on separate connections:
nothing about what a script sees or writes changes, only how the bytes
travel. Redis itself runs one command at a time (and with ``appendfsync
always`` fsyncs once for all the commands it read together), so holding the
next batch back while one is in flight costs no throughput.

A batch whose connection breaks is resent by redis-py (every script is safe
to run twice: ``_redis_scripts``); a script Redis no longer holds (a restart
empties its script cache) is run again on its own by ``Script``, which loads
it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

__all__ = ["ScriptBatcher"]


class ScriptBatcher:
    """Runs registered scripts of one ``redis.asyncio.Redis`` client over one connection of its own,
    batching those started while one is in flight (module docstring). One per store object; bound to the
    event loop it was last used on.

    Args:
        client: the store's ``redis.asyncio.Redis`` (its pool makes the connection, with the pool's
            settings: address, credentials, TLS, database, ``retry``).
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._busy = False  # a script or a batch is in flight
        self._queue: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None  # the batch in flight (held: the loop keeps tasks weakly)
        self._conn: Any = None

    async def aclose(self) -> None:
        """Close the connection (a later script opens a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.disconnect()

    async def run(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """``script(keys=keys, args=args)``'s reply; sent at once, or with the next batch when another is in
        flight.

        Raises:
            redis.RedisError: as the script's own command would (Redis unreachable, the script failed).
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (e.g. a test's): nothing of the last one is in flight
            self._loop, self._busy, self._queue, self._conn = loop, False, [], None
        if not self._busy:
            self._busy = True
            try:
                reply = (await self._send([(script, keys, args)]))[0]
            finally:
                self._next()
        else:
            future: asyncio.Future[Any] = loop.create_future()
            entry = (script, keys, args, future)
            self._queue.append(entry)
            try:
                reply = await future
            except asyncio.CancelledError:  # (a timeout) not sent yet: it never will be
                with contextlib.suppress(ValueError):
                    self._queue.remove(entry)
                raise
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _next(self) -> None:
        """The command in flight returned: send what waited, as one batch, or go idle."""
        if not self._queue:
            self._busy = False
            return
        batch, self._queue = self._queue, []
        self._task = asyncio.get_running_loop().create_task(self._send_batch(batch))

    async def _send_batch(self, batch: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any]]]) -> None:
        """Send ``batch`` and hand each caller its reply (or the error that ended the batch)."""
        try:
            replies = await self._send([entry[:3] for entry in batch])
        except asyncio.CancelledError:  # the loop is shutting down: so are its callers
            for *_, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # each caller raises it (Redis unreachable, ...)
            replies = [exc] * len(batch)
        finally:
            self._next()
        for (*_, future), reply in zip(batch, replies):
            if not future.done():  # (done: its caller gave up, a timeout; the reply is dropped)
                future.set_result(reply)

    async def _send(self, scripts: list[tuple[Any, list[Any], list[Any]]]) -> list[Any]:
        """``EVALSHA`` each script in one write, read their replies (a script's error is its reply); a script
        Redis lacks (``NOSCRIPT``: its script cache was emptied by a restart) is loaded and run again.

        Raises:
            redis.RedisError: Redis unreachable (after the connection's ``retry``).
        """
        import redis

        replies = await self._round_trip([("EVALSHA", s.sha, len(keys), *keys, *args) for s, keys, args in scripts])
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)]
        if missing:
            for script in {id(scripts[i][0]): scripts[i][0] for i in missing}.values():
                await self.client.script_load(script.script)
            again = await self._round_trip([("EVALSHA", scripts[i][0].sha, len(scripts[i][1]), *scripts[i][1],
                                             *scripts[i][2]) for i in missing])
            for i, reply in zip(missing, again):
                replies[i] = reply
        return replies

    async def _round_trip(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Write ``commands`` at once on this batcher's connection and read one reply each (a
        ``ResponseError`` is a reply); a broken connection is reopened and all of them sent again, as the
        connection's ``retry`` says (every script is safe to run twice)."""
        import redis

        if self._conn is None:
            self._conn = self.client.connection_pool.make_connection()
        conn = self._conn

        async def attempt() -> list[Any]:
            await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
            replies: list[Any] = []
            for _ in commands:
                try:
                    replies.append(await conn.read_response())
                except redis.exceptions.ResponseError as exc:
                    replies.append(exc)
            return replies

        async def broken(error: Exception) -> None:
            await conn.disconnect()

        return cast("list[Any]", await conn.retry.call_with_retry(attempt, broken))
