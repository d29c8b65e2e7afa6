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

One connection lifecycle per protocol: an HTTP connection lives under this deadline, uvicorn's
keep-alive timeout and the body timeout; when a request upgrades it to a WebSocket the deadline is
cancelled and the WebSocket's own limits apply instead (idle and lifetime limits of the surface that
serves it, ``rft_sdk.surfaces._wsdoor``, and uvicorn's ping timeout), docs/reliability.md.

The deadline is ``$RFT_HEADER_TIMEOUT_S`` (read when each connection opens;
``rft serve --header-timeout-s`` sets it, also for ``--workers`` processes),
default :data:`rft_sdk.protocol.HEADER_TIMEOUT_S`; ``0`` turns it off. It runs
from a request's first byte. A new connection that has sent no byte at all has
a separate, longer deadline, ``$RFT_FIRST_BYTE_TIMEOUT_S`` (``rft serve
--first-byte-timeout-s``, default :data:`rft_sdk.protocol.FIRST_BYTE_TIMEOUT_S`,
120 s; ``0``: none): a client starting thousands of rollouts at once opens its
connections first and may write to them tens of seconds later on a busy
machine (issue #40: with the 10 s deadline from connecting, 1,237 calls of a
2,048-rollout burst met a closed socket; with the first-byte deadline, 0).
A silent connection costs one file descriptor, and the connection limit is
derived from the open-file limit. A request whose headers are complete waits
as long for its body's first byte (``ToolServer`` passes the first-byte
deadline in force to ``read_body``), then the body deadline measures progress.
The variables are read by :mod:`rft_sdk._server._deadlines` (no uvicorn import).
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.h11_impl import H11Protocol as _H11Protocol

from ..protocol import HEADER_TIMEOUT_S
from ._deadlines import FIRST_BYTE_TIMEOUT_ENV, HEADER_TIMEOUT_ENV, first_byte_timeout_s, header_timeout_s

__all__ = ["FD_RESERVE", "FIRST_BYTE_TIMEOUT_ENV", "HEADER_TIMEOUT_ENV", "H11Protocol", "HeaderDeadline", "HttpToolsProtocol", "connection_limit",
           "first_byte_timeout_s", "header_timeout_s", "raise_open_file_limit",
           "http_protocol"]


class HeaderDeadline:
    """Mixin for a uvicorn HTTP protocol class: close a connection that sends no byte within
    :func:`first_byte_timeout_s` seconds of connecting, or whose request headers do not arrive
    within :func:`header_timeout_s` seconds of the request's first byte (see the module docstring)."""

    # provided by the uvicorn protocol class this is mixed into
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    _header_timer: asyncio.TimerHandle | None = None
    _header_timeout_s: float = HEADER_TIMEOUT_S
    _silent: bool = False  # connected, and no byte received yet (the first-byte deadline runs)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._header_timeout_s = header_timeout_s()
        self._silent = True
        self._arm_header_timer(first_byte_timeout_s())

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)  # type: ignore[misc]
        if self._silent:  # the first bytes: the header deadline replaces the first-byte one
            self._silent = False
            self._cancel_header_timer()
        if self.cycle is not cycle:  # a request's headers are complete: its cycle started
            self._cancel_header_timer()
        elif self._header_timer is None and (cycle is None or cycle.response_complete):
            self._arm_header_timer()  # the first bytes of a request whose headers are not complete yet

    def handle_websocket_upgrade(self, *args: Any) -> None:
        """The connection becomes a WebSocket (uvicorn hands the transport to its WebSocket protocol):
        the header deadline ends here; the WebSocket's own limits apply (idle, lifetime: ``rft_sdk.surfaces``
        ``_wsdoor``; ping timeout: uvicorn's ``ws_ping_timeout``)."""
        self._cancel_header_timer()
        super().handle_websocket_upgrade(*args)  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm_header_timer(self, seconds: float | None = None) -> None:
        seconds = self._header_timeout_s if seconds is None else seconds
        if seconds > 0 and self._header_timer is None:
            self._header_timer = self.loop.call_later(seconds, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.get_protocol() is not cast(Any, self):  # upgraded (WebSocket): not an HTTP connection any more
            return
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


#: File descriptors ``rft serve`` keeps free beside its connections (store, database, logs, the listening
#: socket, a sandbox's pipes) when it derives the connection limit from the open-file limit.
FD_RESERVE = 256


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft open-file limit (``RLIMIT_NOFILE``) to its hard limit; return
    ``(soft, hard)`` as they are afterwards (``-1``: unlimited). Worker processes started later inherit it.

    A platform without ``resource`` (Windows) or a refusal by the kernel leaves the limit as it was
    (``(-1, -1)`` when it cannot be read)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return -1, -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # e.g. macOS refuses RLIM_INFINITY: keep what there is
            return soft, hard
        soft = hard
    infinite = resource.RLIM_INFINITY
    return (-1 if soft == infinite else soft), (-1 if hard == infinite else hard)


def connection_limit(soft: int, floor: int) -> int:
    """Connections one worker accepts by default: the open-file limit ``soft`` less :data:`FD_RESERVE`,
    at least ``floor`` (``soft`` -1, unlimited: 65,536)."""
    if soft < 0:
        return 65536
    return max(floor, soft - FD_RESERVE)
