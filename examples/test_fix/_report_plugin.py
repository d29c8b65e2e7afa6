"""The test_fix grader's test runner, run in the clean copy as ``python _rft_grade_report.py NODEID...``.

The grader (the supervisor, outside the sandbox) starts it with ``Sandbox.popen``,
writes a random nonce as the first line of its stdin, reads its report from its
stdout and decides the verdict itself (``_grading.run_clean``). Before pytest or
the code under test is imported, this script:

- moves the report channel to a private, non-inheritable duplicate of stdout
  (fd 1 then goes to stderr, so nothing pytest or the code prints reaches the
  supervisor; ``subprocess`` children do not inherit the channel);
- reads the nonce, then points stdin at ``/dev/null``;
- binds the writer, the nonce, the JSON encoder and the tamper check into
  closures and default arguments: replacing a module attribute (for example
  through ``sys.modules``) changes nothing the hooks use;
- snapshots the list of ``conftest.py`` files of the tree and its own plugin
  object, and, at ``pytest_sessionstart`` (configured, nothing of the tree
  imported yet), the identity of every attribute of the loaded ``pytest``,
  ``_pytest.*`` and ``pluggy.*`` modules and of their classes.

It writes one JSON line per event, each with the nonce: ``{"collected": [...]}``,
``{"nodeid", "when", "outcome", "foreign": [...]}`` per phase report, and
``{"end": true, "exitstatus", "tampered": [...]}`` at the end of the session;
then it leaves with ``os._exit(status)`` (pytest's own status), so no
``atexit`` hook of the code under test runs. ``foreign`` and ``tampered`` list
tamper evidence found *in* the process: a hook implementation whose code lives
in the tree but is not one of its original ``conftest.py`` files (a plugin
object registered by the library: it has no ``__file__`` but its methods have
code), a hook implementation without Python code, a plugin registered after
``pytest_sessionstart`` that is neither an original ``conftest.py`` nor an
instance of a class of pytest's own modules, and any changed attribute of the
snapshot. The supervisor adds what the process cannot forge: a line
without the nonce, anything written after the end marker, and an exit status
that contradicts the report.
"""

import json
import os
import sys


def _snapshot(modules):
    snap = {}
    for mod in modules:
        for name, value in list(vars(mod).items()):
            snap[f"{mod.__name__}.{name}"] = id(value)
            if isinstance(value, type) and getattr(value, "__module__", None) == mod.__name__:
                for attr, member in list(vars(value).items()):
                    snap[f"{mod.__name__}.{name}.{attr}"] = id(member)
    return snap


def _runner_modules():
    return [m for n, m in sorted(sys.modules.items()) if m is not None and (
        n == "pytest" or n.startswith(("_pytest.", "pytest.", "pluggy.")) or n in ("_pytest", "pluggy"))]


def make_plugin(write, nonce, rootdir):
    """The report plugin: an object whose attributes are plain hook functions
    (closures; pluggy passes only the hook's arguments, never a ``self``).

    Args:
        write: ``write(bytes)`` on the private channel.
        nonce: the supervisor's nonce (str), added to every line.
        rootdir: the tree's absolute path; hook code under it is foreign unless it is
            one of the ``conftest.py`` files present now.
    """
    dumps, realpath, sep, snapshot = json.dumps, os.path.realpath, os.sep, _snapshot
    state: dict = {}
    root = realpath(rootdir)
    conftests = frozenset(realpath(os.path.join(d, "conftest.py")) for d, _, files in os.walk(root)
                          if "conftest.py" in files)
    me = realpath(__file__)

    def emit(obj):
        write((dumps({**obj, "nonce": nonce}) + "\n").encode())

    def foreign(config):
        found = []
        manager = getattr(config, "pluginmanager", None)
        for hook_name, caller in list(vars(getattr(manager, "hook", None) or object()).items()):
            for impl in getattr(caller, "get_hookimpls", lambda: [])():
                fn = impl.function
                code = getattr(getattr(fn, "__func__", fn), "__code__", None)
                where = realpath(code.co_filename) if code is not None else None
                if where is None or not os.path.isfile(where):
                    found.append(f"{hook_name} implemented by {impl.plugin_name!r} without source code")
                elif where.startswith(root + sep) and where not in conftests and (
                        where != me or impl.plugin is not plugin):
                    found.append(f"{hook_name} implemented by {impl.plugin_name!r} from "
                                 f"{os.path.relpath(where, root)} (a plugin registered by the code under test)")
        start = state.get("plugins")
        for other in manager.get_plugins() if manager is not None and start is not None else ():
            if id(other) in start or realpath(str(getattr(other, "__file__", "") or "")) in conftests:
                continue
            cls = type(other)
            home = sys.modules.get(getattr(cls, "__module__", "") or "")
            if not (cls.__module__.startswith(("_pytest.", "pytest", "pluggy.")) and home is not None
                    and getattr(home, cls.__name__, None) is cls):
                found.append(f"plugin object {manager.get_name(other)!r} of type {cls.__module__}.{cls.__qualname__} "
                             "registered during the session (not by pytest)")
        return sorted(set(found))

    def changed():
        modules, before = state.get("modules", []), state.get("before", {})
        now = snapshot(modules)
        found = sorted(k for k, v in before.items() if now.get(k) != v)
        found += sorted(k for k in now if k not in before and ".Test" in k)
        mine = {k: id(v) for k, v in vars(plugin).items()}
        found += [f"report plugin attribute {k}" for k in sorted(set(mine) | set(own)) if mine.get(k) != own.get(k)]
        return [f"pytest internals changed: {k}" for k in found]

    def pytest_collection_finish(session):
        emit({"collected": [item.nodeid for item in getattr(session, "items", [])]})

    def pytest_runtest_logreport(report):
        emit({"nodeid": getattr(report, "nodeid", None), "when": getattr(report, "when", None),
              "outcome": getattr(report, "outcome", None),
              "foreign": foreign(getattr(report, "config", None) or state.get("config"))})

    def pytest_configure(config):
        state["config"] = config

    def pytest_sessionstart(session):
        # configured, nothing collected yet: no module of the tree imported
        state["modules"] = _runner_modules()
        state["before"] = snapshot(state["modules"])
        state["plugins"] = {id(p) for p in session.config.pluginmanager.get_plugins()}

    def pytest_sessionfinish(session, exitstatus):
        config = getattr(session, "config", None)
        emit({"end": True, "exitstatus": int(exitstatus), "tampered": [*foreign(config), *changed()][:40]})

    plugin = type("RftGradeReport", (), {})()
    for fn in (pytest_collection_finish, pytest_runtest_logreport, pytest_configure, pytest_sessionstart,
               pytest_sessionfinish):
        setattr(plugin, fn.__name__, fn)
    own = {k: id(v) for k, v in vars(plugin).items()}
    return plugin


def main(argv):
    """Run pytest over ``argv`` (node ids) as the module docstring says; never returns."""
    channel = os.dup(1)  # non-inheritable (PEP 446)
    os.dup2(2, 1)
    nonce = sys.stdin.readline().strip()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    write, exit_now = os.write, os._exit

    def send(data, _fd=channel, _write=write):
        view = memoryview(data)
        while view:
            view = view[_write(_fd, view):]

    import pytest

    plugin = make_plugin(send, nonce, os.getcwd())
    status = 3
    try:
        status = int(pytest.main(["-p", "no:cacheprovider", "-q", "--tb=line", *argv], plugins=[plugin]))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        exit_now(status)


if __name__ == "__main__":
    main(sys.argv[1:])
