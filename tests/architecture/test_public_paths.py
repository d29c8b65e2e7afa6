"""Every public import path of release 0.2.0 still works after the regroup: each public module (no
``_`` in its path) is found, each name in its ``__all__`` resolves, and the ``rft`` commands declared in
``pyproject.toml`` load."""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import entry_points

import pytest

# The public modules of rft-sdk 0.2.0 (git ls-tree of a9c16a8, paths without a leading underscore).
PUBLIC_MODULES = [
    "rft_sdk", "rft_sdk.cli", "rft_sdk.doctor", "rft_sdk.doctor.cli", "rft_sdk.doctor.packs", "rft_sdk.emulator",
    "rft_sdk.emulator.cli", "rft_sdk.exceptions", "rft_sdk.integrations", "rft_sdk.integrations.eval_protocol",
    "rft_sdk.integrations.trl", "rft_sdk.integrations.verifiers", "rft_sdk.kernels", "rft_sdk.kernels.reference",
    "rft_sdk.mcp", "rft_sdk.portability", "rft_sdk.protocol", "rft_sdk.rewards", "rft_sdk.sandbox",
    "rft_sdk.surfaces", "rft_sdk.testing", "rft_sdk.top", "rft_sdk.top.cli", "rft_sdk.train",
    "rft_sdk.train.cli", "rft_sdk.types",
]


def _import(name: str):
    """Import ``name``; skip (saying so) only when an ecosystem package it wraps is not installed here."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        cause: BaseException | None = exc
        while cause is not None and not getattr(cause, "name", None):
            cause = cause.__cause__
        missing = getattr(cause, "name", None) or ""
        if missing and not missing.startswith("rft_sdk"):
            pytest.skip(f"{name} needs {missing!r}, not installed in this venv")
        raise


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_module_and_its_names_import(name: str) -> None:
    assert importlib.util.find_spec(name) is not None, f"{name} moved: a public path of 0.2.0 is gone"
    module = _import(name)
    for attr in getattr(module, "__all__", []):
        assert hasattr(module, attr), f"{name}.__all__ names {attr!r}, which does not resolve"


def test_declared_commands_load() -> None:
    commands = entry_points(group="rft_sdk.commands")
    assert {"check", "job", "validate", "emulate", "doctor", "train"} <= {ep.name for ep in commands}
    for ep in commands:
        if ep.module.startswith("rft_sdk."):
            assert importlib.util.find_spec(ep.module) is not None, f"rft {ep.name}: {ep.value} does not exist"
