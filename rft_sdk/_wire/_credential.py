"""The credential a request presents: the headers a token may ride in, and a fingerprint of them.

``TOKEN_HEADERS`` is the tool server's rule (``rft_sdk._server._auth``: ``Authorization: Bearer``,
``X-Functions-Key``, ``api-key``); surfaces bind their sessions to :func:`credential_of` (issue 39: a
session is a capability of the credential that opened it).
"""

from __future__ import annotations

import hashlib

from starlette.datastructures import Headers

__all__ = ["TOKEN_HEADERS", "credential_of"]

#: Headers that may carry a token: ``(lower-case name, scheme prefix or "")``.
TOKEN_HEADERS = (("authorization", "bearer "), ("x-functions-key", ""), ("api-key", ""))


def credential_of(headers: Headers) -> str:
    """A fingerprint of the credentials a request presents (SHA-256 of every :data:`TOKEN_HEADERS` value,
    in order; ``""`` without any): what a session is bound to, so only the credential that opened a session
    can use it. Without tokens configured every client presents the same (empty) credential, and the
    session id alone (unguessable, 256 bits) is the capability."""
    values = [headers.get(name) for name, _ in TOKEN_HEADERS]
    if not any(values):
        return ""
    digest = hashlib.sha256()
    for value in values:
        digest.update((value or "").encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()
