"""Rollout handles of the stateless MCP revision (2026-07-28): server-minted, unguessable, bound to a credential.

MCP 2026-07-28 has no sessions (SEP-2567, "Sessionless MCP via Explicit State
Handles"): state that spans tool calls is named by a handle the server mints
(``create_*() -> handle``) and the client passes back as an ordinary tool
argument; the server checks the handle against the request's authorization on
every call. Here the state is a rollout, so a handle names one ``trace_id``::

    handle   = "rh1." + <32 hex: a random part r> + "." + base64url(tag)
    trace_id = "trace_" + hex(HMAC-SHA256(key, "rft-sdk/mcp-trace/1" NUL r)[:16])
    tag      = HMAC-SHA256(key, "rft-sdk/mcp-rollout/1" NUL trace_id NUL principal)[:16]

``principal`` is the SHA-256 of the token the server's ``AuthMiddleware``
accepted (``""`` on a server without tokens: ``rft_sdk._wire._principal``),
so a handle opens only for the credential that started the rollout: another
token, a forged trace id or an altered tag all fail the same constant-time
check, and nothing is stored server side (any worker with the same key opens
any handle). ``r`` is ``uuid4`` (122 random bits) and the tag 128 bits: neither
can be guessed. The trace id is not readable from the handle (the handle travels
in model-visible tool arguments; the trace id is what the hosted routes take), so
a leaked handle does not open the rollout on ``/tools/{name}`` for another token.

The key: ``key=`` or the ``RFT_MCP_HANDLE_KEY`` environment variable (any text,
hashed to 32 bytes); without either, 32 random bytes per process, so handles
then do not survive a restart and are not shared by several workers or
replicas: set the variable to the same secret on each.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import uuid

__all__ = ["HANDLE_KEY_ENV_VAR", "InvalidHandle", "RolloutHandles"]

#: Environment variable holding the secret rollout handles are signed with (shared by every worker/replica).
HANDLE_KEY_ENV_VAR = "RFT_MCP_HANDLE_KEY"
_PREFIX = "rh1."
_DOMAIN = b"rft-sdk/mcp-rollout/1"
_TRACE_DOMAIN = b"rft-sdk/mcp-trace/1"
_TAG_BYTES = 16
_HANDLE = re.compile(r"rh1\.([0-9a-f]{32})\.([A-Za-z0-9_-]{22})")


class InvalidHandle(ValueError):
    """A rollout handle this server did not mint for this caller (malformed, altered, or another credential's)."""


class RolloutHandles:
    """Mints and opens rollout handles (module docstring).

    Args:
        key: the signing secret (``str`` or ``bytes``, any length: hashed with SHA-256); ``None`` reads
            ``RFT_MCP_HANDLE_KEY``, and without it a random per-process key is used.
    """

    def __init__(self, key: str | bytes | None = None) -> None:
        if key is None:
            key = os.environ.get(HANDLE_KEY_ENV_VAR) or None
        if key is None:
            self._key = secrets.token_bytes(32)
            self.shared = False
        else:
            raw = key.encode("utf-8") if isinstance(key, str) else key
            if not raw:
                raise ValueError("an empty rollout-handle key would sign nothing: give a secret or None")
            self._key = hashlib.sha256(raw).digest()
            self.shared = True

    def __repr__(self) -> str:  # never show the key
        return f"RolloutHandles(shared={self.shared})"

    def _tag(self, trace_id: str, principal: str) -> str:
        mac = hmac.new(self._key, b"\0".join((_DOMAIN, trace_id.encode(), principal.encode())), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()[:_TAG_BYTES]).rstrip(b"=").decode()

    def _trace_id(self, random_part: str) -> str:
        mac = hmac.new(self._key, b"\0".join((_TRACE_DOMAIN, random_part.encode())), hashlib.sha256)
        return "trace_" + mac.digest()[:16].hex()

    def mint(self, principal: str) -> tuple[str, str]:
        """A new rollout for ``principal``: ``(handle, trace_id)``, ``trace_id = "trace_" + 32 hex``."""
        random_part = uuid.uuid4().hex
        trace_id = self._trace_id(random_part)
        return f"{_PREFIX}{random_part}.{self._tag(trace_id, principal)}", trace_id

    def open(self, handle: object, principal: str) -> str:
        """The ``trace_id`` of ``handle`` when this server minted it for ``principal``.

        Raises:
            InvalidHandle: not a string of the handle's shape, or its tag does not match (another
                credential, another key, or altered); the message never says which.
        """
        match = _HANDLE.fullmatch(handle) if isinstance(handle, str) else None
        if match is None:
            raise InvalidHandle("not a rollout handle: pass the rollout_id start_rollout returned, unchanged")
        trace_id = self._trace_id(match.group(1))
        if not hmac.compare_digest(match.group(2), self._tag(trace_id, principal)):
            raise InvalidHandle("this rollout handle was not issued to this credential by this server")
        return trace_id
