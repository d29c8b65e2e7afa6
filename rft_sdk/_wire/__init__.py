"""The wire: bytes in, bytes out.

Owns reading and decoding request bodies (the one decoding rule, ``loads_strict``), the
hosted body's fast path that keeps a rollout's ``item`` as bytes (``_hosted_body``,
``_item_cache``), the one error type of the endpoints with its JSON encoding
(``_endpoint``), what keeps secrets and forged lines out of answers and logs
(``_redact``) and the one TLS context of the package's HTTP clients (``_tls``).

May import: the standard library, third-party packages, ``rft_sdk.exceptions`` and
``rft_sdk.protocol``. Nothing here knows about tools, rollouts, stores or the server.
"""
