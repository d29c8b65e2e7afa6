"""Who sent a request, as the server's authentication left it in the ASGI scope.

``rft_sdk._server._auth.AuthMiddleware`` records, for every HTTP request and WebSocket it lets
through on a token route, the SHA-256 hex digest of the token it accepted (``""`` when the server
has no tokens) under :data:`PRINCIPAL_SCOPE_KEY`; never the token itself. State bound to a
credential (issue 39: a session is a capability of the credential that opened it) reads it with
:func:`request_principal`: the stateless MCP rollout handles (``rft_sdk.surfaces._mcp_handles``),
the MCP handshake sessions and the OpenEnv sessions.
"""

from __future__ import annotations

from starlette.types import Scope

__all__ = ["PRINCIPAL_SCOPE_KEY", "TOKEN_HEADERS", "request_principal"]

#: Headers that may carry a token: ``(lower-case name, scheme prefix or "")``.
TOKEN_HEADERS = (("authorization", "bearer "), ("x-functions-key", ""), ("api-key", ""))

#: ASGI scope key of the caller's principal (an ASGI extension key of this package).
PRINCIPAL_SCOPE_KEY = "rft_sdk.principal"


def request_principal(scope: Scope) -> str | None:
    """The principal recorded for this request or WebSocket; ``None`` when it did not pass the server's
    ``AuthMiddleware``."""
    value = scope.get(PRINCIPAL_SCOPE_KEY)
    return value if isinstance(value, str) else None
