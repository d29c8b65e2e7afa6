"""The HTTP front door of a surface whose protocol library reads bodies itself (MCP's streamable HTTP).

:class:`BodyDoor` wraps such an ASGI endpoint: a ``POST`` body is read by the hosted pipeline's reader
(``rft_sdk._wire._read.read_body``: at most ``limit`` bytes, 413 ``body_too_large``; within the body timeout,
408 ``body_timeout``) and checked by the one decoding rule (``loads_strict``: strict JSON, depth 64, no
integer over 4,300 digits, no ``1e999``, no lone surrogate; 400 ``malformed_json``) before the endpoint
sees it; each refusal is the JSON ``ErrorBody``. Bodies it accepts are handed on unchanged.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._wire._endpoint import EndpointError, json_response
from .._wire._json import SurrogateError, encode_json, loads_strict
from .._wire._read import read_body
from ..protocol import BODY_TIMEOUT_S, MAX_BODY_BYTES

__all__ = ["BodyDoor"]


class BodyDoor:
    """ASGI middleware: the front door's body rules in front of ``app`` (see the module docstring).

    Args:
        app: the endpoint.
        limit: largest body, bytes (default ``protocol.MAX_BODY_BYTES``).
        timeout_s: seconds to receive a whole body (default ``protocol.BODY_TIMEOUT_S``).
    """

    def __init__(self, app: ASGIApp, *, limit: int = MAX_BODY_BYTES, timeout_s: float | None = BODY_TIMEOUT_S) -> None:
        self.app, self.limit, self.timeout_s = app, limit, timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(Request(scope, receive), self.limit, self.timeout_s)
            if body.strip():
                loads_strict(body)
        except EndpointError as exc:
            await json_response(encode_json(exc.body()), exc.status, exc.headers)(scope, receive, send)
            return
        except SurrogateError as exc:
            await self._refuse(scope, receive, send, f"request body holds a {exc}")
            return
        except ValueError as exc:
            await self._refuse(scope, receive, send, f"request body is not valid JSON: {exc}")
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, as the server reports it

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, message: str) -> None:
        error = EndpointError(400, "malformed_json", message[:500])
        await json_response(encode_json(error.body()), 400)(scope, receive, send)
