"""verl (``verl>=0.9``) against a tool server: ``HostedTool`` (a ``BaseTool``), its tool-config YAML, the dataset
rows and the grader as a reward function (:mod:`rft_sdk.integrations._verl`, ``docs/verl.md``).

::

    python -m rft_sdk.integrations.verl http://127.0.0.1:8000 > tool_config.yaml   # from GET /tools
    python -m rft_sdk.integrations.verl --agent-loop-config > agent_loops.yaml     # HostedToolAgentLoop

Only :class:`HostedTool` and :class:`HostedToolAgentLoop` import verl (on first use, or when verl's tool registry /
agent-loop config loads them by name); the generators, :func:`verl_row` and :func:`compute_score` need ``httpx``
and ``pyyaml`` only.

Raises (on ``HostedTool``'s first use):
    ImportError: verl (or a module its tool classes import) is missing; the message names the module.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ._verl_config import (
    AGENT_NAME,
    CLASS_NAME,
    ITEM_KEY,
    LOOP_CLASS_NAME,
    OUTPUT_KEY,
    TRACE_KEY,
    agent_loop_config_yaml,
    compute_score,
    tool_config,
    tool_config_yaml,
    verl_row,
)

if TYPE_CHECKING:
    from ._verl import HostedTool
    from ._verl_loop import HostedToolAgentLoop

__all__ = ["AGENT_NAME", "CLASS_NAME", "ITEM_KEY", "LOOP_CLASS_NAME", "OUTPUT_KEY", "TRACE_KEY", "HostedTool",
           "HostedToolAgentLoop", "agent_loop_config_yaml", "compute_score", "tool_config", "tool_config_yaml",
           "verl_row"]

_LAZY = {"HostedTool": "_verl", "HostedToolAgentLoop": "_verl_loop"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(f"{__package__}.{_LAZY[name]}")
    except ModuleNotFoundError as exc:
        raise ImportError(f"rft_sdk.integrations.verl.{name} cannot import the module {exc.name!r} ({exc}); it "
                          "needs verl>=0.9 and the modules its tool classes and agent loop import (docs/verl.md: "
                          "the light install)", name=exc.name) from exc
    return getattr(module, name)


def main(argv: list[str] | None = None) -> int:
    """``python -m rft_sdk.integrations.verl URL [TOKEN_ENV]``: print verl's tool config for the server at URL
    (its ``GET /tools``, authenticated with ``$RFT_AUTH_TOKEN`` or ``$TOKEN_ENV``); ``--agent-loop-config``: print
    verl's agent-loop config registering ``HostedToolAgentLoop``. Exit 2 on bad arguments, 1 when the server
    refuses."""
    import os

    import httpx

    args = sys.argv[1:] if argv is None else argv
    if args == ["--agent-loop-config"]:
        print(agent_loop_config_yaml(), end="")
        return 0
    if len(args) not in (1, 2) or args[0].startswith("-"):
        print("usage: python -m rft_sdk.integrations.verl URL [TOKEN_ENV] | --agent-loop-config", file=sys.stderr)
        return 2
    token_env = args[1] if len(args) == 2 else "RFT_AUTH_TOKEN"
    try:
        print(tool_config_yaml(args[0], token=os.environ.get(token_env), token_env=token_env), end="")
    except httpx.HTTPError as exc:
        print(f"rft_sdk.integrations.verl: GET {args[0]}/tools failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
