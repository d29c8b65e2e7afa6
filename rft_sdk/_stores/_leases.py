"""Lock leases shared by processes: owner ids, dead-owner detection, and the
polling wait for a lock held elsewhere (used by ``SQLiteStore`` and ``RedisStore``)."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Awaitable, Callable

import anyio
import tenacity

from ..exceptions import StoreLockTimeoutError

__all__ = ["new_owner", "owner_dead", "wait_for_lock"]

_HOST = socket.gethostname()


def new_owner() -> str:
    """A fresh lock owner id ``host|pid|token``."""
    return f"{_HOST}|{os.getpid()}|{uuid.uuid4().hex}"


def owner_dead(owner: str) -> bool:
    """True when ``owner`` (``host|pid|token``) is a process of this host that no longer runs."""
    host, _, rest = owner.partition("|")
    pid_text = rest.partition("|")[0]
    if host != _HOST or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # exists, owned by another user
        return False
    return False


async def wait_for_lock(attempt: Callable[[], Awaitable[bool]], timeout_s: float, what: str) -> None:
    """Call ``attempt`` until it returns True, with jittered exponential backoff (2 ms to 50 ms).

    Raises:
        StoreLockTimeoutError: still not acquired after ``timeout_s`` seconds (message names ``what``).
    """
    def timed_out(state: tenacity.RetryCallState) -> None:
        raise StoreLockTimeoutError(f"{what} stayed locked by another worker for {timeout_s:g} s "
                                    "(lock_timeout_s); a tool call may be stuck")

    retrying = tenacity.AsyncRetrying(
        retry=tenacity.retry_if_result(lambda acquired: not acquired),
        wait=tenacity.wait_random_exponential(multiplier=0.002, max=0.05),
        stop=tenacity.stop_after_delay(timeout_s), sleep=anyio.sleep, retry_error_callback=timed_out)
    async def call() -> bool:  # a coroutine function, so tenacity awaits each attempt
        return await attempt()

    await retrying(call)
