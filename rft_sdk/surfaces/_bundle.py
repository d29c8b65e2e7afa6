"""Ship ``rft-sdk`` with a generated environment folder, for machines whose package index has no ``rft-sdk``.

``rft nemo-gym`` and ``rft export openenv`` write folders that another tool installs
(NeMo Gym: ``uv pip install -r requirements.txt`` in the server's folder; OpenEnv: the
container build's ``uv sync``/``pip install``). A bare ``rft-sdk`` requirement only
installs where an index serves it, so by default the command builds a wheel of the
``rft-sdk`` it runs from into ``OUT/wheels/`` at run time and names it by a path
relative to the folder (``./wheels/rft_sdk-<version>-py3-none-any.whl``), which pip and
uv resolve from the folder the requirements file is in (NeMo Gym installs from there).

``--rft-sdk`` chooses otherwise: the path of a wheel (copied into ``OUT/wheels/``), or
a requirement string used verbatim (``"rft-sdk==0.2.0"`` where an index has it,
``"rft-sdk @ git+https://..."``).
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..exceptions import RFTError

__all__ = ["WHEELS_DIR", "bundle_rft_sdk", "checkout_root"]

#: Where the wheel goes, relative to the folder that names it.
WHEELS_DIR = "wheels"


def checkout_root() -> Path | None:
    """The source checkout this ``rft_sdk`` is imported from (the folder whose ``pyproject.toml`` names
    ``rft-sdk``), or ``None`` when it is an installed distribution without its source."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "rft-sdk"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


#: What the wheel is built from (``pyproject.toml``: ``readme``, ``license-files``, the ``rft_sdk*`` packages).
_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "rft_sdk")


def _local_backend() -> bool:
    """Whether this environment has the build backend ``pyproject.toml`` asks for (setuptools >= 77)."""
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77


def _build_wheel(root: Path, wheels: Path) -> None:
    """``pip wheel --no-deps`` into ``wheels``: with ``--no-build-isolation`` when this environment has the
    build backend (setuptools >= 77: no index needed), else in pip's isolated build environment (which
    fetches setuptools from the index; a fresh Python 3.12+ venv has none). From a copy of the checkout's
    sources: setuptools writes ``build/`` and
    ``rft_sdk.egg-info/`` beside what it builds, and an ``egg-info`` left in the checkout would shadow the
    installed package's metadata (its entry points) whenever the checkout is on ``sys.path``."""
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "rft-sdk"
        source.mkdir()
        for name in _SOURCES:
            if (root / name).is_dir():
                shutil.copytree(root / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif (root / name).is_file():
                shutil.copyfile(root / name, source / name)
        isolation = ["--no-build-isolation"] if _local_backend() else []
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "--quiet",
                               "--wheel-dir", str(wheels), str(source)], capture_output=True, text=True)
    if done.returncode != 0 or len(list(wheels.glob("rft_sdk-*.whl"))) != 1:
        raise RFTError(f"building the rft-sdk wheel from {root} failed (pip wheel exit {done.returncode}): "
                       f"{(done.stderr or done.stdout).strip()[-1500:]}\nbuild one yourself (python -m build "
                       "--wheel) and pass --rft-sdk PATH_TO_WHEEL")


def bundle_rft_sdk(folder: Path, choice: str | None = None) -> str:
    """Make ``rft-sdk`` installable from ``folder``; return the requirement line naming it.

    Args:
        folder: the folder whose requirements file gets the line (the wheel goes to ``folder/wheels/``).
        choice: ``None`` (build a wheel of this checkout), a ``.whl`` path (copied), or a requirement
            string (returned as is).

    Raises:
        RFTError: no checkout to build from (installed without source: pass a wheel or a requirement),
            the build failed, or ``choice`` names a ``.whl`` that does not exist. Nothing is written then.
    """
    if choice is not None and not choice.endswith(".whl"):
        return choice
    root = None
    if choice is not None and not Path(choice).is_file():
        raise RFTError(f"--rft-sdk {choice!r}: no such wheel file")
    if choice is None and (root := checkout_root()) is None:
        raise RFTError("rft-sdk is installed without its source, so no wheel can be built from it: pass "
                       "--rft-sdk PATH_TO_WHEEL (e.g. the wheel you installed) or --rft-sdk 'rft-sdk==VERSION' "
                       "when your package index has it")
    with tempfile.TemporaryDirectory() as scratch:
        staged = Path(scratch)
        if choice is not None:
            shutil.copyfile(choice, staged / Path(choice).name)
        else:
            assert root is not None
            _build_wheel(root, staged)
        (wheel,) = staged.glob("*.whl")
        wheels = folder / WHEELS_DIR
        wheels.mkdir(parents=True, exist_ok=True)
        for old in wheels.glob("rft_sdk-*.whl"):
            old.unlink()
        shutil.move(str(wheel), wheels / wheel.name)
    return f"./{WHEELS_DIR}/{wheel.name}"
