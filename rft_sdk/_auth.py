"""Optional bearer-token authentication, compared in constant time.

Several tokens may be valid at once (rotation). Tokens come from the
``auth_tokens`` argument and from the ``RFT_AUTH_TOKENS`` environment variable
(comma-separated). They are never logged or echoed; a failure answers 401
with no detail beyond ``WWW-Authenticate: Bearer``.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

__all__ = ["AUTH_ENV_VAR", "BearerAuth"]

AUTH_ENV_VAR = "RFT_AUTH_TOKENS"


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
        candidate = presented.strip().encode()
        ok = False
        for token in self._tokens:
            ok |= hmac.compare_digest(candidate, token)
        return ok and scheme.lower() == "bearer"
