"""``rft nemo-gym``'s folder installs where no package index has ``rft-sdk``: the command builds the wheel into
the folder at run time, and the requirement line survives NeMo Gym's own install command (read from nemo-gym's
``setup_env_command`` in ``.venv-eco2`` when it is there) and installs with no index at all."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from rft_sdk.cli import main

from ._eco2 import ECO2_PYTHON, ENV
from .conftest import DATASET, ROOT

#: NeMo Gym 0.7's install of a resources server with a requirements.txt (nemo_gym/cli/setup_command.py), run in
#: the server's folder: ``(echo 'nemo-gym==X' && grep -v -F '../..' requirements.txt) | uv pip install -r /dev/stdin``.
NEMO_GYM_FILTER = "grep -v -F '../..' requirements.txt"

_SETUP_COMMAND = """
import sys
from pathlib import Path
from omegaconf import OmegaConf
from nemo_gym import PARENT_DIR
from nemo_gym.cli.setup_command import setup_env_command
config = OmegaConf.create({"head_server_deps": [], "python_version": "3.13", "uv_venv_dir": str(PARENT_DIR),
                           "skip_venv_if_present": False})
print(setup_env_command(Path(sys.argv[1]), config, "rft_task"))
"""


def _build_leftovers() -> dict[str, float]:
    """What a setuptools build in the checkout would leave there: ``build/`` and ``*.egg-info`` (with mtimes)."""
    return {p.name: p.stat().st_mtime for p in ROOT.iterdir() if p.name == "build" or p.name.endswith(".egg-info")}


def test_the_generated_requirements_install_without_an_index_entry_for_rft_sdk(tmp_path, capsys):
    before = _build_leftovers()
    assert main(["nemo-gym", "--app", "examples.retail.app:server", "--dataset", str(DATASET), "--out",
                 str(tmp_path / "gym")]) == 0
    folder = tmp_path / "gym" / "resources_servers" / "rft_task"
    lines = (folder / "requirements.txt").read_text().splitlines()
    wheels = sorted((folder / "wheels").glob("rft_sdk-*.whl"))
    assert len(wheels) == 1 and lines[:2] == ["nemo-gym>=0.7.0,<0.8", f"./wheels/{wheels[0].name}"]
    assert "rft-sdk" not in (folder / "requirements.txt").read_text().replace(wheels[0].name, "")  # no bare name
    assert f"./wheels/{wheels[0].name}" in capsys.readouterr().out
    # the build leaves nothing in the checkout (an rft_sdk.egg-info there would shadow the installed metadata)
    assert _build_leftovers() == before

    if ECO2_PYTHON.exists():  # what NeMo Gym itself runs for this folder (it cds there and filters the file)
        command = subprocess.run([str(ECO2_PYTHON), "-c", _SETUP_COMMAND, str(folder)], capture_output=True,
                                 text=True, cwd=ROOT, env={**os.environ, **ENV}, timeout=120)
        if command.returncode == 0:
            words = shlex.split(command.stdout)
            install = words[words.index("--command") + 1]  # the shell line its _venv_setup.py runs
            assert words[:2] == ["cd", str(folder)]
            assert NEMO_GYM_FILTER in install and "-r /dev/stdin" in install

    # that install, with no index at all: nemo-gym left out (the index serves it), rft-sdk from the folder's wheel
    kept = subprocess.run(f"{NEMO_GYM_FILTER} | grep -v '^nemo-gym'", shell=True, cwd=folder, capture_output=True,
                          text=True, check=True).stdout
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
                                "--target", str(site), "-r", "/dev/stdin"], input=kept, cwd=folder,
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    probe = subprocess.run([sys.executable, "-c", "import rft_sdk, rft_sdk.surfaces._nemo_gym; print(rft_sdk.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(site)}, cwd=tmp_path, capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout.startswith(str(site)), probe.stderr


def test_a_wheel_or_a_requirement_can_be_named_and_a_missing_wheel_is_refused(tmp_path, capsys):
    common = ["nemo-gym", "--url", "http://127.0.0.1:8123", "--dataset", str(DATASET)]
    assert main([*common, "--out", str(tmp_path / "a"), "--rft-sdk", "rft-sdk==0.2.0"]) == 0
    folder = tmp_path / "a" / "resources_servers" / "rft_task"
    assert (folder / "requirements.txt").read_text().splitlines()[1] == "rft-sdk==0.2.0"
    assert not (folder / "wheels").exists()
    assert main([*common, "--out", str(tmp_path / "b"), "--rft-sdk", str(tmp_path / "nope.whl")]) == 1
    assert "no such wheel file" in capsys.readouterr().err and not (tmp_path / "b").exists()
