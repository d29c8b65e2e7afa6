"""The connection deadlines in force for ``rft serve``, read from the environment (no uvicorn import).

``rft serve --header-timeout-s`` and ``--first-byte-timeout-s`` set these variables before the app is
imported, so worker processes (``--workers N``) and the app itself read the same values:
:mod:`rft_sdk._server._connections` for each new connection, and ``ToolServer`` for the wait for a
request body's first byte (``rft_sdk._wire._read.read_body``'s ``start_timeout_s``).
"""

from __future__ import annotations

import os

from ..protocol import FIRST_BYTE_TIMEOUT_S, HEADER_TIMEOUT_S

__all__ = ["FIRST_BYTE_TIMEOUT_ENV", "HEADER_TIMEOUT_ENV", "first_byte_timeout_s", "header_timeout_s"]

#: Environment variable with the header-read deadline, seconds (``0``: none).
HEADER_TIMEOUT_ENV = "RFT_HEADER_TIMEOUT_S"
#: Environment variable with the first-byte deadline of a new connection, seconds (``0``: none).
FIRST_BYTE_TIMEOUT_ENV = "RFT_FIRST_BYTE_TIMEOUT_S"


def _seconds_from_env(name: str, default: float) -> float:
    """``$name`` as seconds >= 0, or ``default`` when unset or blank.

    Raises:
        ValueError: the variable is not a number >= 0.
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    value = float(text)
    if not value >= 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, got {text!r}")
    return value


def header_timeout_s() -> float:
    """The header-read deadline in force: ``$RFT_HEADER_TIMEOUT_S`` or ``HEADER_TIMEOUT_S`` (seconds).

    Raises:
        ValueError: the variable is not a number >= 0.
    """
    return _seconds_from_env(HEADER_TIMEOUT_ENV, HEADER_TIMEOUT_S)


def first_byte_timeout_s() -> float:
    """The first-byte deadline in force: ``$RFT_FIRST_BYTE_TIMEOUT_S`` or ``FIRST_BYTE_TIMEOUT_S`` (seconds).

    Raises:
        ValueError: the variable is not a number >= 0.
    """
    return _seconds_from_env(FIRST_BYTE_TIMEOUT_ENV, FIRST_BYTE_TIMEOUT_S)
