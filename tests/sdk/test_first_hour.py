"""Issue 36's first-hour fixes, through the CLI as a user runs it (subprocesses) or a real server.

* the TypedDict advice is right for this Python (pydantic refuses ``typing.TypedDict`` before 3.12);
* a bad ``RFT_DB_DIR`` stops ``rft serve`` in one line naming the fix, without a traceback;
* a port in use is reported before the app is imported, in one line with the fix;
* ``GET /readyz`` reads the rollout database.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rft_sdk import Rollout, SQLiteDatabase, ToolServer
from rft_sdk._definitions._schema import TYPED_DICT
from rft_sdk.testing import free_port, run_server

ROOT = Path(__file__).resolve().parents[2]

APP = '''
import pathlib
from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolServer

pathlib.Path("imported").write_text("yes")  # the test checks whether the app module was imported


def setup(conn):
    conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")


server = ToolServer(db=SQLiteDatabase(setup=setup, name="firsthour"))


@server.tool
def get(k: str, *, rollout: Rollout) -> str:
    return str(rollout.db.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchone())


@server.grader
def g(ctx: GradingContext) -> float:
    return 1.0
'''


def rft(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{cwd}", **(env or {})})


@pytest.mark.parametrize("source", ["typing", "typing_extensions"])
def test_typeddict_advice_follows_the_python_version(tmp_path: Path, source: str) -> None:
    (tmp_path / "td_app.py").write_text(
        f"from {source} import TypedDict\n"
        "from rft_sdk import Rollout, ToolServer\n"
        "class Address(TypedDict):\n"
        "    city: str\n"
        "server = ToolServer()\n"
        "@server.tool\n"
        "def ship(to: Address, *, rollout: Rollout) -> str:\n"
        "    return to['city']\n")
    proc = rft(tmp_path, "tools", "td_app:server")
    refused = source == "typing" and sys.version_info < (3, 12)
    if not refused:
        assert proc.returncode == 0, proc.stderr
        assert '"city"' in proc.stdout
        return
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0  # one line
    assert "tool ship, parameter 'to': pydantic refuses typing.TypedDict on Python 3." in proc.stderr
    assert "`from typing_extensions import TypedDict`" in proc.stderr


def test_free_form_dict_advice_names_the_typeddict_this_python_takes(tmp_path: Path) -> None:
    (tmp_path / "dict_app.py").write_text(
        "from rft_sdk import Rollout, ToolServer\n"
        "server = ToolServer()\n"
        "@server.tool\n"
        "def save(data: dict, *, rollout: Rollout) -> str:\n"
        "    return 'ok'\n")
    proc = rft(tmp_path, "tools", "dict_app:server")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    expected = "typing.TypedDict" if sys.version_info >= (3, 12) else "typing_extensions.TypedDict"
    assert TYPED_DICT == expected and f"use a pydantic model or {expected} with named fields" in proc.stderr


def test_a_bad_rft_db_dir_is_one_line_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "db_app.py").write_text(APP)
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the folder should be")
    proc = rft(tmp_path, "serve", "db_app:server", "--port", str(free_port()), env={"RFT_DB_DIR": str(blocker)})
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "rft_sdk: the rollout database SQLiteDatabase(name='firsthour') did not start" in proc.stderr
    assert f"its files go to '{blocker}/firsthour': set RFT_DB_DIR to a writable folder" in proc.stderr


def test_a_port_in_use_is_reported_before_the_app_is_imported(tmp_path: Path) -> None:
    (tmp_path / "db_app.py").write_text(APP)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = rft(tmp_path, "serve", "db_app:server", "--port", str(port))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"rft serve: port {port} on 127.0.0.1 is already in use (another server?); "
                                   f"stop that process or pass another --port, e.g. --port {port + 1}")
    assert not (tmp_path / "imported").exists()  # no start-up work was done


def test_readyz_reads_the_rollout_database(tmp_path: Path) -> None:
    def setup(conn) -> None:
        conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")

    db = SQLiteDatabase(setup=setup, name="readyz", dir=tmp_path / "dbs")
    server = ToolServer(db=db)

    @server.tool
    def get(k: str, *, rollout: Rollout) -> str:
        return "x"

    with run_server(server) as url:
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"store": "ok", "database": "ok"}
        shutil.rmtree(tmp_path / "dbs")  # the database's folder is gone: a new rollout could not clone
        gone = httpx.get(f"{url}/readyz")
        assert gone.status_code == 503 and gone.json() == {"status": "unavailable",
                                                           "checks": {"store": "ok", "database": "failed"}}
    with pytest.raises(ValueError, match="'database' already exists"):
        server.readiness_check(lambda: True, name="database")
