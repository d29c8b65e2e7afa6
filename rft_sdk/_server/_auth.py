"""Authentication: one ASGI middleware in front of every route, with a policy per route.

Tokens: several may be valid at once (rotation); they come from the
``auth_tokens`` argument and the ``RFT_AUTH_TOKENS`` environment variable
(comma-separated). A request may present one as ``Authorization: Bearer <t>``
(OpenAI's job config), ``X-Functions-Key: <t>`` (Azure Functions, used by the
Azure AI Foundry samples) or ``api-key: <t>`` (Azure OpenAI style).

Policy per route:
    * ``GET /healthz``, ``GET /readyz``: open (load-balancer probes). ``/healthz``, ``/readyz`` and
      ``/metrics`` answer GET and HEAD only: any other method is 405 ``method_not_allowed`` before
      authentication and routing (:data:`PROBE_PATHS`).
    * ``POST /grade/s/<secret>[/<name>]``: the grader for a service that cannot
      send headers (Azure's endpoint grader, stated in its samples): served only
      when the path segment equals ``grader_secret``; no token needed.
    * everything else: a valid token when any is configured — WebSocket
      connections too (a surface's sessions, e.g. OpenEnv's ``/ws``): refused
      before the handshake is accepted, which the server answers with HTTP 403.

Secrets are compared in constant time (``hmac.compare_digest`` over every
candidate, no early exit) and never logged or echoed: a request on the secret
path has its path rewritten to ``/grade/s/-`` before anything (uvicorn's
access log included) sees it. A refusal answers 401 ``unauthorized`` with
``WWW-Authenticate: Bearer`` and nothing else.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from .._wire._endpoint import EndpointError, json_response
from .._wire._json import encode_json
from .._wire._principal import PRINCIPAL_SCOPE_KEY, TOKEN_HEADERS, request_principal
from ._metrics import Metrics

__all__ = ["AUTH_ENV_VAR", "GRADER_SECRET_ENV_VAR", "GRADER_SECRET_PREFIX", "OPEN_PATHS", "PRINCIPAL_SCOPE_KEY",
           "PROBE_METHODS", "PROBE_PATHS", "TOKEN_HEADERS", "AuthMiddleware", "BearerAuth", "check_grader_secret",
           "is_loopback", "request_principal"]

logger = logging.getLogger("rft_sdk")
AUTH_ENV_VAR = "RFT_AUTH_TOKENS"
GRADER_SECRET_ENV_VAR = "RFT_GRADER_SECRET"
#: Routes served without credentials (paths relative to where the server is mounted), for GET/HEAD only.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
#: Probe routes: they answer only their own method (GET, and HEAD); any other is 405 before routing, so a
#: ``POST /readyz`` never reaches a surface's catch-all route (NeMo Gym's ``POST /{tool}``).
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
PROBE_METHODS = frozenset({"GET", "HEAD"})
#: Path prefix of the grader served behind a secret path segment (no headers needed).
GRADER_SECRET_PREFIX = "/grade/s/"
_REDACTED = "-"
_MIN_SECRET_CHARS = 16




def check_grader_secret(secret: str | None) -> str | None:
    """Validate a grader path secret (``None`` or empty: no secret path).

    Raises:
        ValueError: shorter than 16 characters, or not URL-safe
            (``A-Z a-z 0-9 - _``); make one with
            ``python -c "import secrets; print(secrets.token_urlsafe(32))"``.
    """
    if not secret:
        return None
    if len(secret) < _MIN_SECRET_CHARS or not all(c.isascii() and (c.isalnum() or c in "-_") for c in secret):
        raise ValueError("grader_secret must be at least 16 URL-safe characters (A-Z a-z 0-9 - _); make one with "
                         "python -c \"import secrets; print(secrets.token_urlsafe(32))\"")
    return secret


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
        """Whether an ``Authorization`` header value is accepted (``Bearer <token>``)."""
        return self.check_headers(Headers({"authorization": authorization or ""}))

    def check_headers(self, headers: Headers) -> bool:
        """Whether any of :data:`TOKEN_HEADERS` carries an accepted token (always, without tokens)."""
        return not self._tokens or self.match_headers(headers) is not None

    def match_headers(self, headers: Headers) -> bytes | None:
        """The configured token one of :data:`TOKEN_HEADERS` carries, else ``None`` (also without tokens).

        Every configured token is compared with every presented value by
        ``hmac.compare_digest`` (no early exit), so timing does not reveal
        which token nearly matched or which header carried it.
        """
        matched: bytes | None = None
        for name, scheme in TOKEN_HEADERS:
            value = headers.get(name)
            if value is None:
                continue
            if scheme:
                if value[:len(scheme)].lower() != scheme:
                    continue
                value = value[len(scheme):]
            candidate = value.strip().encode("utf-8", "surrogateescape")
            for token in self._tokens:
                if hmac.compare_digest(candidate, token) and matched is None:
                    matched = token
        return matched

    def principal(self, headers: Headers) -> str | None:
        """Who is calling, for binding state to a credential: the SHA-256 hex digest of the accepted
        token, ``""`` when no tokens are configured (everyone is the same anonymous caller), ``None``
        when tokens are configured and none is presented."""
        if not self._tokens:
            return ""
        token = self.match_headers(headers)
        return hashlib.sha256(token).hexdigest() if token is not None else None


def _route_path(scope: Scope) -> str:
    """The request path relative to the mount point (``root_path`` stripped)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


class AuthMiddleware:
    """ASGI middleware applying the per-route policy of the module docstring.

    Args:
        app: the wrapped ASGI app.
        auth: the accepted tokens (a disabled ``BearerAuth`` lets token routes through).
        metrics: counts refusals as ``auth_failures``.
        grader_secret: the secret path segment of ``/grade/s/<secret>`` (``None``: that route refuses).
    """

    def __init__(self, app: ASGIApp, auth: BearerAuth, metrics: Metrics, grader_secret: str | None = None) -> None:
        self.app = app
        self.auth = auth
        self.metrics = metrics
        self._secret = grader_secret.encode() if grader_secret else None
        refusal = EndpointError(401, "unauthorized", "unauthorized")
        self._refusal = encode_json(refusal.body())

    def _secret_path_ok(self, scope: Scope, path: str) -> bool:
        """Check the secret segment (constant time) and redact it from the scope in place."""
        rest = path[len(GRADER_SECRET_PREFIX):]
        presented, slash, tail = rest.partition("/")
        root = scope["path"][:len(scope["path"]) - len(path)]
        redacted = f"{root}{GRADER_SECRET_PREFIX}{_REDACTED}{slash}{tail}"
        scope["path"], scope["raw_path"] = redacted, redacted.encode("utf-8", "surrogateescape")
        if self._secret is None:
            return False
        return hmac.compare_digest(presented.encode("utf-8", "surrogateescape"), self._secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # same tokens and headers; refused before accept (the server answers 403)
            principal = "" if _route_path(scope) in OPEN_PATHS else self.auth.principal(Headers(scope=scope))
            if principal is not None:
                scope[PRINCIPAL_SCOPE_KEY] = principal
                await self.app(scope, receive, send)
                return
            self.metrics.incr("auth_failures")
            await send({"type": "websocket.close", "code": 1008, "reason": "unauthorized"})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = _route_path(scope)
        probe = path in PROBE_PATHS
        if probe and scope.get("method") not in PROBE_METHODS:
            refusal = EndpointError(405, "method_not_allowed", f"{str(scope.get('method'))[:16]} {path}: Method Not "
                                    "Allowed (allowed: GET, HEAD): probe routes answer their own method only")
            response = json_response(encode_json(refusal.body()), 405, {"Allow": "GET, HEAD"})
            await response(scope, receive, send)
            return
        if path.startswith(GRADER_SECRET_PREFIX):
            allowed = self._secret_path_ok(scope, path)
        elif path in OPEN_PATHS:
            allowed = True
        else:
            principal = self.auth.principal(Headers(scope=scope))
            allowed = principal is not None
            if allowed:
                scope[PRINCIPAL_SCOPE_KEY] = principal
        if allowed:
            await self.app(scope, receive, send)
            return
        self.metrics.incr("auth_failures")
        response = json_response(self._refusal, 401, {"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)
