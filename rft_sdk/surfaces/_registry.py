"""Surfaces by name: built in, or declared by any package, loaded only when asked for.

``ToolServer(surfaces=[...])`` and ``rft serve --surfaces`` take names. A name
is resolved here to ``"module:Class"``: the built-ins below, then the
``rft_sdk.surfaces`` entry-point group (``pyproject.toml``), where a package
declares ``name = "pkg.module:Class [extra]"`` — the ``[extra]`` names the
``pip install "rft-sdk[extra]"`` that enables it. Nothing is imported until a
surface is used, so the core imports no surface and no surface's extra.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from ..exceptions import RFTError
from ._seam import Surface

__all__ = ["ENTRY_POINT_GROUP", "HOSTED", "SURFACES_ENV_VAR", "SurfaceSpec", "available_surfaces", "load_surface"]

#: Environment variable naming the surfaces a ``ToolServer`` exposes when none are passed in code.
SURFACES_ENV_VAR = "RFT_SURFACES"
#: Entry-point group through which packages declare surfaces.
ENTRY_POINT_GROUP = "rft_sdk.surfaces"
#: The hosted RFT routes themselves (always served in process; exposed when named).
HOSTED = "hosted"


@dataclass(frozen=True)
class SurfaceSpec:
    """Where a surface lives: ``target`` ``"module:Class"`` and the ``extra`` it needs (``None``: core)."""

    name: str
    target: str
    extra: str | None = None


_BUILTIN = {
    "mcp": SurfaceSpec("mcp", "rft_sdk.surfaces._mcp:MCPSurface", "mcp"),
    "openenv": SurfaceSpec("openenv", "rft_sdk.surfaces._openenv:OpenEnvSurface", None),
    "nemo_gym": SurfaceSpec("nemo_gym", "rft_sdk.surfaces._nemo_gym:NeMoGymSurface", None),
}


def available_surfaces() -> dict[str, SurfaceSpec]:
    """Every surface name that can be asked for (``"hosted"`` included), built-ins first."""
    found: dict[str, SurfaceSpec] = {HOSTED: SurfaceSpec(HOSTED, "", None), **_BUILTIN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in found:
            found[ep.name] = SurfaceSpec(ep.name, ep.value.split("[")[0].strip(),
                                         ep.extras[0] if ep.extras else None)
    return found


def load_surface(name: str, **options: Any) -> Surface:
    """Import and build the surface ``name`` (``options`` go to its constructor).

    Raises:
        ValueError: no surface of that name (the message lists the choices).
        RFTError: its extra is not installed (the message names the ``pip install``).
    """
    spec = available_surfaces().get(name)
    if spec is None or name == HOSTED:
        raise ValueError(f"unknown surface {name!r}; choices: {sorted(available_surfaces())}")
    module_name, _, attr = spec.target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        hint = f'pip install "rft-sdk[{spec.extra}]"' if spec.extra else "a complete rft-sdk install"
        raise RFTError(f"surface {name!r} cannot be loaded ({exc}); it needs: {hint}") from exc
    surface: Surface = cls(**options)
    return surface
