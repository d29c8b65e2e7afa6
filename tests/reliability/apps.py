"""Apps served by ``rft serve`` in the reliability tests (imported by the child process)."""

from __future__ import annotations

import time

from rft_sdk import ToolServer

slow_app = ToolServer(auth_env_var=None)


@slow_app.tool
def echo() -> str:
    """Answer at once."""
    return "echo"


@slow_app.tool
def sleep(seconds: float) -> str:
    """Sleep, then answer.

    Args:
        seconds: how long.
    """
    time.sleep(seconds)
    return "slept"


short_body_timeout_app = ToolServer(tools=[echo], auth_env_var=None, body_timeout_s=1.0)
