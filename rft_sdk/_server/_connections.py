"""Connection limits of ``rft serve``: a header-read deadline for uvicorn, and its options.

uvicorn bounds the time between requests of a keep-alive connection
(``timeout_keep_alive``) and, with ``limit_concurrency``, the connections and
requests in flight (over it: 503, ``Connection: close``), but it has no limit on
how long a client may take to send a request's *headers*: a client that opens
a connection, sends ``POST /tools/x HTTP/1.1\\r\\nHost: a`` and stops holds the
connection (a file descriptor, a protocol object) for ever, and a few thousand
such clients exhaust the process (slowloris).

:class:`H11Protocol` and :class:`HttpToolsProtocol` are uvicorn's own protocol
classes (``uvicorn.Config(http=<class>)``, its documented way to choose one)
with one addition: a timer, armed when a connection opens and when bytes of a
new request arrive, cancelled when that request's headers are complete (uvicorn
then starts the request's cycle). When it fires with no request in progress
the connection is closed, the way uvicorn closes an idle keep-alive
connection. A request in progress is bounded by the body timeout
(``ToolServer(body_timeout_s=...)``, 408) and the tool's own limits, never by
this timer.

The deadline is ``$RFT_HEADER_TIMEOUT_S`` (read when each connection opens;
``rft serve --header-timeout-s`` sets it, also for ``--workers`` processes),
default :data:`rft_sdk.protocol.HEADER_TIMEOUT_S`; ``0`` turns it off.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol as _H11Protocol

from ..protocol import HEADER_TIMEOUT_S

__all__ = ["HEADER_TIMEOUT_ENV", "H11Protocol", "HeaderDeadline", "HttpToolsProtocol", "header_timeout_s",
           "http_protocol"]

#: Environment variable with the header-read deadline, seconds (``0``: none).
HEADER_TIMEOUT_ENV = "RFT_HEADER_TIMEOUT_S"


def header_timeout_s() -> float:
    """The header-read deadline in force: ``$RFT_HEADER_TIMEOUT_S`` or ``HEADER_TIMEOUT_S`` (seconds).

    Raises:
        ValueError: the variable is not a number >= 0.
    """
    text = os.environ.get(HEADER_TIMEOUT_ENV, "").strip()
    if not text:
        return HEADER_TIMEOUT_S
    value = float(text)
    if not value >= 0:
        raise ValueError(f"{HEADER_TIMEOUT_ENV} must be a number of seconds >= 0, got {text!r}")
    return value


class HeaderDeadline:
    """Mixin for a uvicorn HTTP protocol class: close a connection whose request headers do not
    arrive within :func:`header_timeout_s` seconds (see the module docstring)."""

    # provided by the uvicorn protocol class this is mixed into
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    _header_timer: asyncio.TimerHandle | None = None
    _header_timeout_s: float = HEADER_TIMEOUT_S

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._header_timeout_s = header_timeout_s()
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)  # type: ignore[misc]
        if self.cycle is not cycle:  # a request's headers are complete: its cycle started
            self._cancel_header_timer()
        elif self._header_timer is None and (cycle is None or cycle.response_complete):
            self._arm_header_timer()  # the first bytes of a request whose headers are not complete yet

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm_header_timer(self) -> None:
        if self._header_timeout_s > 0 and self._header_timer is None:
            self._header_timer = self.loop.call_later(self._header_timeout_s, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a request in progress: bounded by the body timeout and the tool's limits
        self.timeout_keep_alive_handler()  # type: ignore[attr-defined]  # uvicorn's close of an idle connection


class H11Protocol(HeaderDeadline, _H11Protocol):
    """uvicorn's h11 protocol with the header-read deadline."""


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools not installed (uvicorn without [standard])
    HttpToolsProtocol: Any = None
else:
    class HttpToolsProtocol(HeaderDeadline, _HttpToolsProtocol):  # type: ignore[no-redef]
        """uvicorn's httptools protocol with the header-read deadline."""


def http_protocol(name: str) -> type[asyncio.Protocol]:
    """The protocol class for ``rft serve --http NAME`` (``auto``: httptools when installed, as uvicorn picks).

    Raises:
        ValueError: ``httptools`` asked for but not installed, or an unknown name.
    """
    if name == "auto":
        name = "httptools" if HttpToolsProtocol is not None else "h11"
    if name == "h11":
        return H11Protocol
    if name == "httptools":
        if HttpToolsProtocol is None:
            raise ValueError('--http httptools needs httptools (pip install "uvicorn[standard]")')
        return HttpToolsProtocol  # type: ignore[no-any-return]
    raise ValueError(f"unknown HTTP protocol {name!r}; choose auto, h11 or httptools")
