"""One task, many protocols: the surfaces a ``ToolServer`` can serve (``docs/surfaces.md``).

``ToolServer(surfaces=["hosted", "mcp", "openenv"])`` or
``rft serve app:server --surfaces hosted,openenv``. Each surface maps its
protocol's session to a rollout ``trace_id``, its calls to the one hosted
tool-call pipeline and its end of episode to the grader
(:mod:`rft_sdk.surfaces._seam`). Built in: ``hosted`` (the hosted RFT routes),
``mcp`` (``rft-sdk[mcp]``), ``openenv`` and ``nemo_gym`` (no extra on the server side). More are
declared by packages in the ``rft_sdk.surfaces`` entry-point group.

Importing this package imports no surface and no extra.
"""

from typing import TYPE_CHECKING

from ._registry import (
    ENTRY_POINT_GROUP,
    HOSTED,
    SURFACES_ENV_VAR,
    SurfaceSpec,
    available_surfaces,
    load_surface,
)
from ._seam import Surface, SurfaceContext, SurfaceMount, compose

if TYPE_CHECKING:  # imported on first use at run time (below): httpx only when a surface runs
    from ._hosted import ATTEMPTS, GradeAnswer, HostedClient, RolloutDiscardedError, ToolAnswer, new_trace_id
    from ._mcp import MCPSurface
    from ._nemo_gym import NeMoGymSurface
    from ._openenv import OpenEnvSurface

_HOSTED_CLIENT = "rft_sdk.surfaces._hosted"
_LAZY = {"MCPSurface": "rft_sdk.surfaces._mcp", "OpenEnvSurface": "rft_sdk.surfaces._openenv",
         "NeMoGymSurface": "rft_sdk.surfaces._nemo_gym",
         **{name: _HOSTED_CLIENT for name in ("ATTEMPTS", "GradeAnswer", "HostedClient", "RolloutDiscardedError",
                                              "ToolAnswer", "new_trace_id")}}


def __getattr__(name: str) -> object:
    """``MCPSurface``, ``OpenEnvSurface``, ``NeMoGymSurface`` and the hosted-wire client (``HostedClient`` and its
    answers, which import httpx), imported on first use: the core imports none of them."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ATTEMPTS",
    "ENTRY_POINT_GROUP",
    "HOSTED",
    "SURFACES_ENV_VAR",
    "GradeAnswer",
    "HostedClient",
    "MCPSurface",
    "NeMoGymSurface",
    "OpenEnvSurface",
    "RolloutDiscardedError",
    "Surface",
    "SurfaceContext",
    "SurfaceMount",
    "SurfaceSpec",
    "ToolAnswer",
    "available_surfaces",
    "compose",
    "load_surface",
    "new_trace_id",
]
