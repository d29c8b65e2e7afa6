"""Optional bearer-token authentication: one ASGI middleware in front of every route.

Several tokens may be valid at once (rotation). Tokens come from the
``auth_tokens`` argument and from the ``RFT_AUTH_TOKENS`` environment variable
(comma-separated). They are compared in constant time and never logged or
echoed; a failure answers 401 ``unauthorized`` with ``WWW-Authenticate:
Bearer`` and nothing else. ``GET /healthz`` (load-balancer probes) stays open.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from ._endpoint import EndpointError, encode_json, json_response
from ._metrics import Metrics

__all__ = ["AUTH_ENV_VAR", "OPEN_PATHS", "AuthMiddleware", "BearerAuth"]

AUTH_ENV_VAR = "RFT_AUTH_TOKENS"
#: Routes served without credentials (paths relative to where the server is mounted).
OPEN_PATHS = frozenset({"/healthz"})


class BearerAuth:
    """Holds the accepted tokens; ``enabled`` is ``False`` when there are none.

    Args:
        tokens: accepted tokens (empty strings ignored).
        env_var: environment variable with more comma-separated tokens, read
            once here; ``None`` to ignore the environment.
    """

    def __init__(self, tokens: Iterable[str] | None = None, env_var: str | None = AUTH_ENV_VAR) -> None:
        collected = [t.strip() for t in (tokens or ())]
        if env_var:
            collected += [t.strip() for t in os.environ.get(env_var, "").split(",")]
        self._tokens = tuple(t.encode() for t in collected if t)

    @property
    def enabled(self) -> bool:
        """Whether requests must carry a valid token."""
        return bool(self._tokens)

    def __repr__(self) -> str:  # never show the tokens
        return f"BearerAuth(tokens={len(self._tokens)})"

    def check(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value is accepted.

        Every configured token is compared with ``hmac.compare_digest`` (no
        early exit), so timing does not reveal which token nearly matched.
        """
        if not self._tokens:
            return True
        scheme, _, presented = (authorization or "").partition(" ")
        candidate = presented.strip().encode("utf-8", "surrogateescape")
        ok = False
        for token in self._tokens:
            ok |= hmac.compare_digest(candidate, token)
        return ok and scheme.lower() == "bearer"


def _route_path(scope: Scope) -> str:
    """The request path relative to the mount point (``root_path`` stripped)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


class AuthMiddleware:
    """ASGI middleware: requests other than :data:`OPEN_PATHS` need an accepted token.

    Args:
        app: the wrapped ASGI app.
        auth: the accepted tokens (a disabled ``BearerAuth`` lets every request through).
        metrics: counts refusals as ``auth_failures``.
    """

    def __init__(self, app: ASGIApp, auth: BearerAuth, metrics: Metrics) -> None:
        self.app = app
        self.auth = auth
        self.metrics = metrics
        refusal = EndpointError(401, "unauthorized", "unauthorized")
        self._refusal = encode_json(refusal.body())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or not self.auth.enabled or _route_path(scope) in OPEN_PATHS
                or self.auth.check(Headers(scope=scope).get("authorization"))):
            await self.app(scope, receive, send)
            return
        self.metrics.incr("auth_failures")
        response = json_response(self._refusal, 401, {"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)
