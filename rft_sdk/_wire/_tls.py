"""One TLS context per process for the package's HTTP clients."""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["ssl_context"]


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's CAs; ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as read at first use),
    made once per process and shared by every client the package opens (``verify=ssl_context()``).

    httpx builds a new context for each client it is not given one, and loading the CA bundle costs 30-140 ms
    each time (measured with cProfile on one ``rft doctor`` run: 21 clients, 2.9 s of 19 s, all of it in
    ``load_verify_locations``); short-lived clients (one per emulator run, per regrade, per verl tool call)
    paid it again and again. An ``SSLContext`` may be shared by many connections and threads.
    """
    return httpx.create_ssl_context()
