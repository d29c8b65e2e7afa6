"""The front door of a surface's WebSocket: frame limits, the one decoding rule, idle and lifetime
limits, and a close frame with a code on every way a connection ends (docs/reliability.md).

An HTTP connection is bounded by the header deadline, uvicorn's keep-alive timeout and the body
timeout (``rft_sdk._server._connections``); once it upgrades to a WebSocket those no longer apply
(the header deadline is cancelled at the upgrade) and these do, per connection:

* **idle**: no frame from the client for ``idle_s`` seconds (``$RFT_WS_IDLE_TIMEOUT_S``, default
  :data:`WS_IDLE_TIMEOUT_S` = 300) closes it with code 1001 (going away);
* **lifetime**: a connection open ``lifetime_s`` seconds (``$RFT_WS_MAX_LIFETIME_S``, default
  :data:`WS_MAX_LIFETIME_S` = 3600; an episode is one rollout, the hosted side waits at most 600 s
  per call) is closed with 1001 when its next frame arrives or its idle wait ends;
* **frames**: a binary frame is closed with 1003 (unsupported data); a text frame over
  ``max_frame_bytes`` (default ``protocol.MAX_BODY_BYTES``) with 1009 (message too big); a frame
  the decoding rule refuses (``loads_strict``: not strict JSON, deeper than 64, an integer over 4,300
  digits, ``1e999``, a lone surrogate) is answered by the caller's error frame and the connection
  stays; an unexpected failure closes with 1011 (internal error), logged with its traceback.

uvicorn's own ping/pong (``ws_ping_interval``/``ws_ping_timeout``, 20 s each) closes a connection
whose peer is gone.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect

from .._wire._json import loads_strict
from ..protocol import MAX_BODY_BYTES

__all__ = ["WS_IDLE_TIMEOUT_S", "WS_MAX_LIFETIME_S", "WsClosed", "WsDecodeError", "WsLimits"]

#: Seconds a WebSocket may go without a client frame (``$RFT_WS_IDLE_TIMEOUT_S``).
WS_IDLE_TIMEOUT_S = 300.0
#: Seconds a WebSocket may stay open (``$RFT_WS_MAX_LIFETIME_S``).
WS_MAX_LIFETIME_S = 3600.0
#: RFC 6455 §7.4.1 close codes used here.
GOING_AWAY, UNSUPPORTED_DATA, TOO_BIG, INTERNAL_ERROR = 1001, 1003, 1009, 1011


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    value = float(text)
    if not value > 0:
        raise ValueError(f"{name} must be a number of seconds > 0, got {text!r}")
    return value


class WsClosed(Exception):
    """The connection is to be closed (or already was, ``code`` 1000/1001 from the client): ``code``, ``reason``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"{code} {reason}")
        self.code, self.reason = code, reason


class WsDecodeError(ValueError):
    """A text frame the decoding rule refuses; the connection stays (the caller answers an error frame)."""


@dataclass
class WsLimits:
    """Limits of one WebSocket connection (see the module docstring); ``opened`` is its start
    (``time.monotonic``). Defaults from the environment at construction.

    Raises:
        ValueError: an environment variable that is not a positive number.
    """

    idle_s: float = field(default_factory=lambda: _env_seconds("RFT_WS_IDLE_TIMEOUT_S", WS_IDLE_TIMEOUT_S))
    lifetime_s: float = field(default_factory=lambda: _env_seconds("RFT_WS_MAX_LIFETIME_S", WS_MAX_LIFETIME_S))
    max_frame_bytes: int = MAX_BODY_BYTES
    opened: float = field(default_factory=time.monotonic)

    async def receive_json(self, ws: WebSocket) -> Any:
        """The next client frame, decoded by the one rule.

        Raises:
            WsClosed: the client closed, or a limit says close (the code to send).
            WsDecodeError: a text frame that is not acceptable JSON (the connection may go on).
        """
        left = self.lifetime_s - (time.monotonic() - self.opened)
        if left <= 0:
            raise WsClosed(GOING_AWAY, f"connection open longer than {self.lifetime_s:g} s (RFT_WS_MAX_LIFETIME_S)")
        wait = min(self.idle_s, left)
        message: Any = None
        with anyio.move_on_after(wait if math.isfinite(wait) else None):
            message = await ws.receive()
        if message is None:
            why = (f"no frame for {self.idle_s:g} s (RFT_WS_IDLE_TIMEOUT_S)" if wait == self.idle_s else
                   f"connection open longer than {self.lifetime_s:g} s (RFT_WS_MAX_LIFETIME_S)")
            raise WsClosed(GOING_AWAY, why)
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
        text = message.get("text")
        if text is None:
            raise WsClosed(UNSUPPORTED_DATA, "binary frames are not accepted: send JSON text frames")
        if len(text) > self.max_frame_bytes and len(text.encode("utf-8", "surrogatepass")) > self.max_frame_bytes:
            raise WsClosed(TOO_BIG, f"frame over {self.max_frame_bytes} bytes")
        try:
            return loads_strict(text)
        except ValueError as exc:
            raise WsDecodeError(str(exc)) from None


async def close(ws: WebSocket, code: int, reason: str) -> None:
    """Send a close frame with ``code`` (reason cut to the 123 bytes RFC 6455 allows); a connection
    already gone is left as it is."""
    try:
        await ws.close(code, reason.encode("utf-8")[:123].decode("utf-8", "ignore"))
    except (RuntimeError, WebSocketDisconnect, OSError):
        pass  # already closed by the peer or the server: nothing to send a frame on
