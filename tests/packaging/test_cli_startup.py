"""The ``rft`` command as a user meets it: a fast top-level help, suggestions for typos, quiet pipes.

Real subprocesses of the installed ``rft`` (``python -m rft_sdk``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from rft_sdk._cli_commands import COMMAND_EXTRAS, COMMANDS_GROUP, declared_extras, load_command, static_help

HEAVY = ("torch", "numpy", "matplotlib", "rich", "tqdm", "jsonschema", "triton", "transformers")


def _rft(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_top_level_help_lists_every_command_without_importing_any():
    code = ("import json, sys; from rft_sdk.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('rft_sdk.train', 'rft_sdk.emulator', "
            "'rft_sdk.doctor', 'rft_sdk.top')))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    *help_lines, heavy, subpackages = result.stdout.strip().splitlines()
    assert json.loads(heavy) == [] and json.loads(subpackages) == []
    text = "\n".join(help_lines)
    for ep in entry_points(group=COMMANDS_GROUP):
        assert ep.name in text


def test_the_help_read_from_source_is_the_modules_own():
    for ep in entry_points(group=COMMANDS_GROUP):
        loaded = load_command(ep)
        assert not isinstance(loaded, str), loaded
        assert static_help(ep) == loaded.HELP, ep.name


def test_install_hints_name_extras_that_exist():
    extras = set(declared_extras())
    assert extras and set(COMMAND_EXTRAS.values()) <= extras
    assert set(COMMAND_EXTRAS) <= {ep.name for ep in entry_points(group=COMMANDS_GROUP)}


def test_typos_get_a_suggestion_and_the_subcommands_usage(tmp_path):
    (tmp_path / "tiny_app.py").write_text("from rft_sdk import ToolServer\nserver = ToolServer(auth_env_var=None)\n"
                                          "@server.tool\ndef ping(x: int) -> int:\n    return x\n")
    flag = _rft("tools", "tiny_app:server", "--fromat", "responses", cwd=tmp_path)
    assert flag.returncode == 2 and "unrecognized arguments: --fromat responses (did you mean --format?)" in \
        flag.stderr and "usage: rft tools" in flag.stderr
    command = _rft("emualte", "--dataset", "d")
    assert command.returncode == 2 and "unknown command 'emualte' (did you mean 'emulate'?)" in command.stderr
    plugin = _rft("validate", "d.jsonl", "--jsno")
    assert plugin.returncode == 2 and "(did you mean --json?)" in plugin.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    source = "from rft_sdk import ToolServer\nserver = ToolServer(auth_env_var=None)\n"
    for i in range(300):  # ~400 KB of JSON: far more than a pipe buffer
        source += f"@server.tool\ndef t{i}(x: int) -> int:\n    '''{'word ' * 200}'''\n    return x\n"
    (tmp_path / "big_app.py").write_text(source)
    proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "tools", "big_app:server"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"["
    proc.stdout.close()  # what `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141 and b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_serve_help_names_every_builtin_surface():
    # An outside tester found `rft serve --help` listing "hosted, mcp, openenv" without nemo_gym.
    from rft_sdk.surfaces._registry import _BUILTIN, HOSTED

    result = _rft("serve", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for name in (HOSTED, *_BUILTIN):
        assert name in text, f"`rft serve --help` does not name the {name!r} surface"
