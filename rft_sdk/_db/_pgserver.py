"""A throwaway PostgreSQL server for tests, examples and benchmarks: ``postgres_server()``.

``initdb`` a fresh cluster in a temporary folder, start ``postgres`` on a free
port of 127.0.0.1 (and a Unix socket in that folder), yield its URL, then stop
it and delete the folder. PostgreSQL refuses to run as root: when this process
is root, the cluster is owned by and run as the ``postgres`` system user (the
one Debian's ``postgresql`` package creates) through ``runuser``.

The binaries are found in ``$RFT_PG_BINDIR``, else on ``PATH``, else in the
newest ``/usr/lib/postgresql/*/bin`` (Debian's layout).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..exceptions import RFTError

__all__ = ["BINDIR_ENV", "find_pg_bindir", "postgres_server"]

#: Environment variable naming the folder of ``initdb``/``pg_ctl`` (overrides the search).
BINDIR_ENV = "RFT_PG_BINDIR"


def find_pg_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``.

    Raises:
        RFTError: no PostgreSQL server binaries found (the message says how to install them).
    """
    candidates = [os.environ.get(BINDIR_ENV, "")]
    on_path = shutil.which("pg_ctl")
    candidates.append(str(Path(on_path).parent) if on_path else "")
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    raise RFTError("no PostgreSQL server binaries (initdb, pg_ctl) found: install them (Debian/Ubuntu: "
                   f"apt-get install postgresql) or set ${BINDIR_ENV}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def postgres_server(*, durable: bool = False, max_connections: int = 400,
                    startup_timeout_s: float = 60.0) -> Iterator[str]:
    """Run a throwaway PostgreSQL server; yield ``"postgresql://postgres@127.0.0.1:PORT/postgres"``.

    Args:
        durable: keep PostgreSQL's crash-safety settings (``fsync``, full page
            writes); the default turns them off, as a test cluster needs no
            crash recovery. Benchmarks that report clone latency pass ``True``.
        max_connections: the server's ``max_connections``.
        startup_timeout_s: seconds ``pg_ctl start`` may wait for the server.

    Authentication is ``trust`` for the local user ``postgres``; the server
    listens on 127.0.0.1 only. Stopped (``-m immediate``) and deleted on exit.

    Raises:
        RFTError: no binaries, or root without a ``postgres`` system user.
        subprocess.CalledProcessError: ``initdb`` or ``pg_ctl start`` failed
            (the server log is printed into the message's stderr).
    """
    bindir = find_pg_bindir()
    prefix: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise RFTError("PostgreSQL refuses to run as root and there is no 'postgres' system user "
                           "(apt-get install postgresql creates it)") from None
        prefix = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="rft-pg-"))
    data, sockets, log = root / "data", root / "sock", root / "server.log"
    sockets.mkdir()
    if owner is not None:
        for path in (root, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    settings = [f"-p {port}", "-c listen_addresses=127.0.0.1", f"-k {sockets}",
                f"-c max_connections={int(max_connections)}", "-c shared_buffers=64MB"]
    if not durable:
        settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
    env = {**os.environ, "LC_ALL": "C"}
    started = False
    try:
        subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                        "-E", "UTF8", "--locale=C", "--no-sync"], check=True, capture_output=True, env=env)
        try:
            subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w",
                            "-t", str(int(startup_timeout_s)), "-o", " ".join(settings), "start"],
                           check=True, capture_output=True, env=env)
        except subprocess.CalledProcessError as exc:
            exc.stderr = (exc.stderr or b"") + (log.read_bytes() if log.exists() else b"")
            raise
        started = True
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if started:
            subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, env=env)
        shutil.rmtree(root, ignore_errors=True)
