"""verl (``verl>=0.9``) against a tool server: ``HostedTool`` (a ``BaseTool``), its tool-config YAML, the dataset
rows and the grader as a reward function (:mod:`rft_sdk.integrations._verl`, ``docs/verl.md``).

::

    python -m rft_sdk.integrations.verl http://127.0.0.1:8000 > tool_config.yaml   # from GET /tools

Only :class:`HostedTool` imports verl (on first use: ``from rft_sdk.integrations.verl import HostedTool``, or
verl's tool registry loading ``rft_sdk.integrations.verl.HostedTool``); the generator, :func:`verl_row` and
:func:`compute_score` need ``httpx`` and ``pyyaml`` only.

Raises (on ``HostedTool``'s first use):
    ImportError: verl (or a module its tool classes import) is missing; the message names the module.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ._verl_config import CLASS_NAME, ITEM_KEY, TRACE_KEY, compute_score, tool_config, tool_config_yaml, verl_row

if TYPE_CHECKING:
    from ._verl import HostedTool

__all__ = ["CLASS_NAME", "ITEM_KEY", "TRACE_KEY", "HostedTool", "compute_score", "tool_config", "tool_config_yaml",
           "verl_row"]


def __getattr__(name: str) -> Any:
    if name != "HostedTool":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from ._verl import HostedTool
    except ModuleNotFoundError as exc:
        raise ImportError(f"rft_sdk.integrations.verl.HostedTool cannot import the module {exc.name!r} ({exc}); it "
                          "needs verl>=0.9 and the modules its tool classes import (docs/verl.md: the light install)",
                          name=exc.name) from exc
    return HostedTool


def main(argv: list[str] | None = None) -> int:
    """``python -m rft_sdk.integrations.verl URL [TOKEN_ENV]``: print verl's tool config for the server at URL
    (its ``GET /tools``, authenticated with ``$RFT_AUTH_TOKEN`` or ``$TOKEN_ENV``). Exit 2 on bad arguments,
    1 when the server refuses."""
    import os

    import httpx

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m rft_sdk.integrations.verl URL [TOKEN_ENV]", file=sys.stderr)
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
