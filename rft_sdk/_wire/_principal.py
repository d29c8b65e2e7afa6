"""Who sent a request, as the server's authentication left it in the ASGI scope.

``rft_sdk._server._auth.AuthMiddleware`` records, for every request it lets through on a
token route, the SHA-256 hex digest of the token it accepted (``""`` when the server has
no tokens) under :data:`PRINCIPAL_SCOPE_KEY`; never the token itself. State bound to a
credential (the stateless MCP rollout handles, ``rft_sdk.surfaces._mcp_handles``) reads
it with :func:`request_principal`.
"""

from __future__ import annotations

from starlette.types import Scope

__all__ = ["PRINCIPAL_SCOPE_KEY", "request_principal"]

#: ASGI scope key of the caller's principal (an ASGI extension key of this package).
PRINCIPAL_SCOPE_KEY = "rft_sdk.principal"


def request_principal(scope: Scope) -> str | None:
    """The principal recorded for this request; ``None`` when it did not pass the server's ``AuthMiddleware``."""
    value = scope.get(PRINCIPAL_SCOPE_KEY)
    return value if isinstance(value, str) else None
