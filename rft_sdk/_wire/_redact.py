"""Keep secrets and forged lines out of what the server says and logs.

* :func:`redact_url`: a connection string with its password (and any query
  value named like a secret) replaced by ``***``; used for every store URL
  shown in an error, a log line, ``repr`` or ``/metrics``.
* :func:`escape_controls` and :class:`ControlCharFilter`: control characters
  (C0, DEL, C1, U+2028/U+2029) in logged values written as escapes (``\\n``,
  ``\\x1b``), so a ``trace_id`` holding a newline cannot forge a log line. The
  filter is installed once on the package's ``rft_sdk`` logger
  (:func:`install_log_filter`) and rewrites each record's arguments.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

__all__ = ["ControlCharFilter", "escape_controls", "get_logger", "install_log_filter", "redact_text", "redact_url", "url_secrets"]

MASK = "***"
_SECRET_QUERY_KEY = re.compile(r"pass|secret|token|key|auth|credential", re.IGNORECASE)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# Lone UTF-16 surrogates: no handler can encode them as UTF-8 (a log file, a pipe, pytest-xdist's channel).
_SURROGATE = re.compile("[\ud800-\udfff]")


def redact_url(url: str) -> str:
    """``url`` with the password of its user-info and the values of secret-looking query keys
    (``password``, ``token``, ``access_key``, ...) replaced by ``***``; the scheme, user name,
    host, port, path and other options stay readable. A string that does not parse is
    returned masked whole."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            user, has_password, _ = userinfo.partition(":")
            # redis://SECRET@host: a lone user-info is the password (redis-py reads it so)
            netloc = f"{user}:{MASK}@{hostport}" if has_password else f"{MASK}@{hostport}"
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if netloc == parts.netloc and not any(_SECRET_QUERY_KEY.search(k) for k, _ in pairs):
            return url
        query = "&".join(f"{quote(k)}={MASK if _SECRET_QUERY_KEY.search(k) else quote(v)}" for k, v in pairs)
        return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
                + (f"#{parts.fragment}" if parts.fragment else ""))
    except ValueError:
        return MASK


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (password, secret-looking query values), to scrub from other text."""
    try:
        parts = urlsplit(url)
        found = [parts.password or "", *(v for k, v in parse_qsl(parts.query) if _SECRET_QUERY_KEY.search(k))]
        if parts.username and parts.password is None:
            found.append(parts.username)
    except ValueError:
        return []
    return [s for s in found if len(s) >= 3]


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def escape_controls(text: str) -> str:
    """``text`` with control characters written as Python escapes (``"a\\nb"`` -> ``"a\\\\nb"``)."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else str(value)
    if _CONTROL.search(text) is None:
        return value  # unchanged: %r and %d keep working
    return escape_controls(text)


class ControlCharFilter(logging.Filter):
    """A logging filter that escapes control characters and lone surrogates in a record's arguments (or,
    without arguments, in its message), so every logged value stays on its line and encodes as UTF-8, and
    lone surrogates in its traceback. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and args:
            record.args = tuple(_safe(a) for a in args)
        elif isinstance(args, Mapping) and args:
            record.args = {k: _safe(v) for k, v in args.items()}
        elif not args and isinstance(record.msg, str):
            record.msg = escape_controls(record.msg)
        if record.exc_info and not record.exc_text:
            # the traceback keeps its lines; only lone surrogates (from a value the model sent) are escaped
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = _SURROGATE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
        return True


def install_log_filter(name: str = "rft_sdk") -> None:
    """Add one :class:`ControlCharFilter` to logger ``name`` and to every logger below it that exists now
    (idempotent). A logger's filters see only records logged *on it*, not those its children propagate,
    so each ``rft_sdk.*`` logger needs its own: the package's modules get theirs by :func:`get_logger`."""
    names = [name, *(n for n in list(logging.Logger.manager.loggerDict) if n.startswith(name + "."))]
    for each in names:
        logger = logging.getLogger(each)
        if not any(isinstance(f, ControlCharFilter) for f in logger.filters):
            logger.addFilter(ControlCharFilter())


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with a :class:`ControlCharFilter` (idempotent): how every module of the
    package gets a logger other than ``"rft_sdk"`` (``tests/reliability/test_attack_logs.py`` checks them all)."""
    install_log_filter(name)
    return logging.getLogger(name)
