"""The SDK's log filter keeps every record on its line and encodable: control characters and lone UTF-16
surrogates a model sent are escaped in the arguments, the message and the traceback (a lone surrogate in a
grader's traceback used to crash pytest-xdist's report channel, and breaks any UTF-8 log handler)."""

from __future__ import annotations

import io
import logging

from rft_sdk._wire._redact import ControlCharFilter


def _emit(logger_name: str, fn) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger(logger_name)
    logger.addFilter(ControlCharFilter())
    logger.addHandler(handler)
    logger.propagate = False
    try:
        fn(logger)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_forged_line_and_surrogate_in_arguments_are_escaped() -> None:
    out = _emit("rft_sdk.test_log_args", lambda log: log.warning("tool %s said %s", "t", "ok\nFORGED \ud800"))
    assert out.count("\n") == 1 and "FORGED" in out and "\\ud800" in out
    out.encode("utf-8")  # raises on a lone surrogate


def test_surrogate_in_a_traceback_is_escaped_and_the_traceback_keeps_its_lines() -> None:
    def boom(log: logging.Logger) -> None:
        try:
            raise ValueError("bad \ud800 value")
        except ValueError:
            log.exception("grader raised")

    out = _emit("rft_sdk.test_log_exc", boom)
    assert "Traceback (most recent call last):" in out and "ValueError: bad \\ud800 value" in out
    assert out.count("\n") > 3  # the traceback's own lines are kept
    out.encode("utf-8")
