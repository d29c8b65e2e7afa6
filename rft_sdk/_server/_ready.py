"""Readiness (``GET /readyz``) and the exposure warning, decided when the server starts.

``/healthz`` is liveness: the process answers. ``/readyz`` is readiness: the
rollout store answers (a real round trip: ``RolloutStore.astats``, bounded by
:data:`CHECK_TIMEOUT_S`) and so does every check the user registered with
``@server.readiness_check``; otherwise it answers 503 and a load balancer stops
sending calls that would all answer 503 ``store_unavailable``. The body says
which check failed, never why (the reason may hold a host name, and the route
is open like ``/healthz``); the reason is logged (WARNING, once per change of
state), with any password in a URL masked.

The exposure warning (no token configured while the server is reachable from
other machines) is decided from the address the server **binds**, read at ASGI
lifespan startup from the server's configuration (uvicorn passes its lifespan
``receive`` as a method of an object holding ``config``). A server that gives no
such configuration (gunicorn workers, an app mounted inside another) falls
back to the local address of each request, until one arrives on an address
that is not loopback: a first request from 127.0.0.1 (a local proxy or health
check) no longer silences it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Receive, Scope

from .._stores import RolloutStore
from ._auth import is_loopback

__all__ = ["CHECK_TIMEOUT_S", "ExposureWatch", "Readiness", "ReadinessCheck", "bind_host"]

logger = logging.getLogger("rft_sdk")

_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]+@")  # the password of a URL in an error message
#: Seconds one readiness check may take before it counts as failed.
CHECK_TIMEOUT_S = 5.0
#: A readiness check: sync or async, no arguments; ready when it returns anything but ``False``
#: and raises nothing.
ReadinessCheck = Callable[[], Any]


class Readiness:
    """The store check, the server's own (:attr:`builtin`: ``database``, a real read of the rollout
    database, when the server has one) and the user's checks, run concurrently, each bounded by ``timeout_s``.

    Args:
        store: the rollout store (checked with ``astats()``, a real read).
        timeout_s: seconds per check.
    """

    def __init__(self, store: RolloutStore, timeout_s: float = CHECK_TIMEOUT_S) -> None:
        self.store = store
        self.timeout_s = float(timeout_s)
        self.checks: dict[str, ReadinessCheck] = {}
        self.builtin: dict[str, ReadinessCheck] = {}  # the server's own checks beside the store's (database)
        self._last_ok: bool | None = None

    def add(self, name: str, check: ReadinessCheck) -> None:
        """Register ``check`` under ``name``.

        Raises:
            ValueError: ``name`` is ``"store"``, ``"database"`` (with a rollout database) or already registered.
        """
        if name == "store" or name in self.checks or name in self.builtin:
            raise ValueError(f"a readiness check named {name!r} already exists")
        self.checks[name] = check

    async def _one(self, name: str, check: Callable[[], Any]) -> tuple[str, str | None]:
        try:
            result = check()
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(_awaited(result), self.timeout_s)
        except asyncio.TimeoutError:
            return name, f"no answer within {self.timeout_s:g} s"
        except Exception as exc:  # a failing check is the answer, not an error of the probe
            return name, _URL_PASSWORD.sub(r"\1***@", f"{type(exc).__name__}: {exc}")
        return name, "returned False" if result is False else None

    async def store_problem(self) -> str | None:
        """Why the store does not answer, or ``None`` when it does."""
        return (await self._one("store", self.store.astats))[1]

    async def run(self) -> tuple[bool, dict[str, str]]:
        """``(ready, {check: "ok" | "failed"})``; failures are logged with their reason."""
        pairs: list[tuple[str, Callable[[], Any]]] = [("store", self.store.astats), *self.builtin.items(),
                                                      *self.checks.items()]
        results = await asyncio.gather(*(self._one(name, check) for name, check in pairs))
        failed = {name: why for name, why in results if why is not None}
        ok = not failed
        if ok != self._last_ok:
            self._last_ok = ok
            if failed:
                logger.warning("rft_sdk: not ready: %s", "; ".join(f"{n}: {w}" for n, w in failed.items()))
            else:
                logger.info("rft_sdk: ready")
        return ok, {name: "failed" if name in failed else "ok" for name, _ in pairs}


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def bind_host(receive: Receive) -> str | None:
    """The host the server binds, from the ASGI server's lifespan ``receive`` (uvicorn), else ``None``
    (unknown: a socket passed in by gunicorn, a file descriptor, a Unix socket, another server)."""
    config = getattr(getattr(receive, "__self__", None), "config", None)
    host = getattr(config, "host", None)
    if not isinstance(host, str) or getattr(config, "fd", None) is not None or getattr(config, "uds", None):
        return None
    if "gunicorn" in sys.modules:  # gunicorn binds the sockets; uvicorn's config keeps its default host
        return None
    return host


class ExposureWatch:
    """Logs ``warning(host)`` once, when the server is reachable from other machines.

    Args:
        warning: ``host -> message or None`` (``ToolServer.exposure_warning``).
    """

    def __init__(self, warning: Callable[[str], str | None]) -> None:
        self._warning = warning
        self.decided = False

    def _decide(self, host: str) -> None:
        self.decided = True
        if (message := self._warning(host)) is not None:
            logger.warning("rft_sdk: %s", message)

    def on_lifespan(self, receive: Receive) -> None:
        """At startup: decide from the bind address when the server tells it."""
        if not self.decided and (host := bind_host(receive)) is not None:
            self._decide(host)

    def on_request(self, scope: Scope) -> None:
        """Fallback without a known bind address: the first request on a non-loopback local address decides."""
        server = scope.get("server")
        if server and not is_loopback(str(server[0])):
            self._decide(str(server[0]))
