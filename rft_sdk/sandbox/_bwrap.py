"""The bubblewrap command line that contains one sandboxed command (and its probes).

``bwrap_argv`` builds the prefix; ``bwrap_reason`` runs ``true`` in it once to
tell whether this host allows it. See ``_sandbox_run`` for what it enforces.
Source of the options: ``bwrap --help`` and bubblewrap's manual (bwrap(1)).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

__all__ = ["NOBODY", "bwrap_argv", "bwrap_reason", "runtime_paths", "setpriv_argv", "unshare_ok"]

NOBODY = 65534
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "hosts", "host.conf",
        "localtime", "timezone", "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "alternatives",
        "gitconfig", "os-release", "debian_version")
_TMPFS_BYTES = 256 * 1024**2  # size of the private /tmp; /dev/shm gets a quarter


def runtime_paths() -> list[str]:
    """This interpreter's installation and virtual environment (real paths, existing)."""
    paths = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    paths.add(os.path.realpath(os.path.dirname(os.path.realpath(sys.executable))))
    return sorted(p for p in paths if os.path.isdir(p) and p != "/")


@functools.cache
def unshare_ok(as_root: bool) -> bool:
    """Whether ``unshare`` can make network and PID namespaces here (a user namespace too, when not root)."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    user = [] if as_root else ["--user", "--map-root-user"]
    try:
        return subprocess.run([exe, *user, "--net", "--pid", "--fork", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def setpriv_argv(uid: int, *, caps: bool = True) -> list[str]:
    """``setpriv`` switching to ``uid`` (groups cleared; with ``caps``, no capability left)."""
    exe = "/usr/bin/setpriv" if os.path.exists("/usr/bin/setpriv") else (shutil.which("setpriv") or "setpriv")
    extra = ["--inh-caps=-all", "--bounding-set=-all"] if caps else []
    return [exe, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *extra, "--"]


def bwrap_argv(workdir: str, *, network: bool = False, as_root: bool, ro_paths: Sequence[str] = (),
               drop_to: int | None = None) -> list[str]:
    """The ``bwrap ... --`` prefix for one command (no side effects); see the module docstring.

    ``drop_to``: as root, the uid ``setpriv`` switches to after bwrap set up the
    namespaces (bwrap needs root for the mounts; the command must not keep it).
    """
    exe = shutil.which("bwrap") or "bwrap"
    a = [exe, "--die-with-parent", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
         "--hostname", "sandbox"]
    if not as_root:
        a.append("--unshare-user")
    if not network:
        a.append("--unshare-net")
    for name in _SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            a += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            a += ["--ro-bind", path, path]
    a += ["--perms", "0755", "--dir", "/etc"]
    for name in _ETC:
        a += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    a += ["--proc", "/proc", "--dev", "/dev",
          "--perms", "1777", "--size", str(_TMPFS_BYTES), "--tmpfs", "/tmp",
          "--perms", "1777", "--size", str(_TMPFS_BYTES // 4), "--tmpfs", "/dev/shm"]
    made = {"/", "/tmp", "/dev", "/proc", "/etc", *(f"/{n}" for n in _SYSTEM_DIRS)}
    covered = [f"/{n}" for n in _SYSTEM_DIRS]
    for src, rw in [*((p, False) for p in sorted(set(ro_paths), key=len)), (workdir, True)]:
        if not rw and any(src == c or src.startswith(c + "/") for c in covered):
            continue  # already visible (e.g. a runtime under /usr)
        parents = []
        parent = os.path.dirname(src)
        while parent not in made and not any(parent == c or parent.startswith(c + "/") for c in covered):
            parents.append(parent)
            parent = os.path.dirname(parent)
        for p in reversed(parents):
            a += ["--perms", "0755", "--dir", p]
            made.add(p)
        a += ["--bind" if rw else "--ro-bind", src, src]
        if not rw:
            covered.append(src)
    a += ["--chdir", workdir]
    if drop_to is not None:
        a += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--",
              *setpriv_argv(drop_to)[:-1]]
    return [*a, "--"]


@functools.cache
def bwrap_reason(as_root: bool) -> str:
    """Why bwrap cannot contain a command here ('' when it can): runs ``true`` in it once."""
    if shutil.which("bwrap") is None:
        return "bwrap not installed (apt-get install bubblewrap)"
    if as_root and not os.path.exists("/usr/bin/setpriv") and shutil.which("setpriv") is None:
        return "setpriv (util-linux) not installed: cannot drop root inside the sandbox"
    with tempfile.TemporaryDirectory(prefix="rft-bwrap-probe-") as tmp:
        uid = NOBODY if as_root else os.geteuid()
        os.chmod(tmp, 0o777)
        argv = [*bwrap_argv(tmp, as_root=as_root, ro_paths=runtime_paths(), drop_to=uid if as_root else None),
                sys.executable, "-c", "import os; print(os.getuid())"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bwrap failed to start: {exc}"
    if proc.returncode != 0 or proc.stdout.strip() != str(uid):
        return f"bwrap test run failed (status {proc.returncode}): {proc.stderr.strip()[:300]}"
    return ""
