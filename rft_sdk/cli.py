"""The ``rft`` command line.

Core sub-commands (this module, no extras needed):
    rft serve MODULE:ATTR [--factory --host --port --workers --log-level --loop --http --gc --header-timeout-s
                          --limit-concurrency --redis-persistence]   serve with uvicorn
                       (--workers N > 1 is refused unless the ToolServer's store is
                       multiprocess_safe, e.g. SQLiteStore; exit status 2; a store that
                       does not answer stops the start: status 2 with workers, 3 from
                       uvicorn's failed lifespan startup otherwise; --factory: MODULE:ATTR
                       is a function of no arguments returning the app, called once per
                       process, as uvicorn --factory)
    rft tools MODULE:ATTR [--factory] [--format] [--base-url URL [--dataset JSONL]]  print dataset tools / job
                                                                   config JSON (--dataset: max_episode_steps sized
                                                                   from the dataset's lines)
    rft --version                                                  print the installed version

Every other sub-command is declared by the package that implements it, as an
entry point in the ``rft_sdk.commands`` group (``pyproject.toml``): the value
is a module exposing ``HELP: str``, ``add_arguments(parser)`` and
``run(args) -> int``. This module never imports those packages by name, so the
import order stays one-way (``docs/ARCHITECTURE.md``); a command whose extra is
not installed is listed with the ``pip install`` line that enables it.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import gc
import json
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from ._cli_commands import (
    COMMANDS_GROUP,
    FactoryError,
    close_option,
    env_secret,
    load_app,
    load_command,
    load_server,
    missing_extra,
    plugin_commands,
    static_help,
    subparser,
)
from ._server._app import SURFACES_ENV_VAR, ToolServer
from ._stores import STORE_URL_ENV, RolloutStore
from ._stores._redis import PERSISTENCE_ENV, PERSISTENCE_MODES
from ._version import __version__
from .exceptions import DefinitionError
from .protocol import CONNECTION_LIMIT, FIRST_BYTE_TIMEOUT_S, HEADER_TIMEOUT_S, KEEP_ALIVE_S

__all__ = ["COMMANDS_GROUP", "load_app", "main"]



def port_problem(host: str, port: int) -> str | None:
    """Why ``rft serve`` cannot listen on ``host:port`` (in use, not allowed, no such address), with
    the fix; ``None`` when a socket binds there (with ``SO_REUSEADDR``, as uvicorn binds).

    Checked before the app is imported, so a port in use is reported at once and not after
    the app's start-up work. (Another process may still take the port in between.)"""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"--host {host!r} is not an address of this machine ({exc.strerror}); use e.g. --host 127.0.0.1"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"port {port} on {host} is already in use (another server?); stop that process or "
                        f"pass another --port, e.g. --port {port + 1}")
            if exc.errno == errno.EACCES:
                return f"port {port} on {host} needs privileges this user lacks; pass --port 1024 or above"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}; pass another --host or --port"
    return None


def _unshared_store(app: Any) -> str | None:
    """Why ``app`` cannot run in several worker processes, or ``None`` when it can.

    A ``ToolServer`` whose store is per-process (``multiprocess_safe`` False,
    e.g. ``MemoryStore``) would give each worker its own rollout state, so calls
    of one rollout reaching different workers would silently see different
    state. Apps that are not a ``ToolServer`` (no ``store``) are not inspected.
    """
    store = getattr(app, "store", None)
    if not isinstance(store, RolloutStore) or store.multiprocess_safe:
        return None
    return (f"the app's {type(store).__name__} keeps rollout state inside one process, so calls of a "
            "rollout landing on different workers would see different state. Give the ToolServer a "
            "store shared by the worker processes (rft serve --store sqlite:///path/rollouts.db for a SQLiteStore, or "
            "--store redis://host:6379/0 for replicas on several hosts), or serve with --workers 1")


def _store_problem(app: ToolServer) -> str | None:
    """Why ``app``'s store does not answer, checked on a throwaway event loop (the worker processes
    import their own app; this instance is never served)."""
    import asyncio

    async def check() -> str | None:
        try:
            return await app.startup_problem()
        finally:
            try:
                await app.store.aclose()
            except Exception:  # closing a store that never connected may fail; the answer above stands
                pass

    return asyncio.run(check())


def _print_tools(app: Any, args: argparse.Namespace) -> int:
    """``rft tools``: print the dataset tools, or with ``--base-url`` the hosted job's ``method``
    object (hosted protocol §1); exit status 2 with a one-line reason when that cannot be built."""
    if not isinstance(app, ToolServer):
        print(f"rft tools: {args.app!r} is a {type(app).__name__}, not a ToolServer", file=sys.stderr)
        return 2
    out: dict[str, Any] | list[dict[str, Any]]
    try:
        token = env_secret(args.token_env)
        steps = args.max_episode_steps
        if args.dataset is not None:
            if not args.base_url:
                raise ValueError("--dataset sizes the job's max_episode_steps: it needs --base-url")
            from ._validation._steps import size_steps

            steps, note = size_steps(args.dataset, steps)
            if note is not None:  # information, never a warning: quiet where the dataset changed nothing
                print(f"rft tools: info: {note}", file=sys.stderr)
        if args.base_url:
            out = app.job_config(args.base_url, target=args.target, token=token, grader=args.grader,
                                 max_episode_steps=steps,
                                 compute_multiplier=args.compute_multiplier, rate_limit=args.rate_limit,
                                 pass_threshold=args.pass_threshold,
                                 allow_unauthenticated=args.allow_unauthenticated)
        else:
            out = app.dataset_tools(args.format)
    except ValueError as exc:
        print(f"rft tools: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=2))
    return 0


_load_command = load_command  # the name tests and older callers use


#: ``rft serve --gc`` modes; see :func:`tune_gc`.
GC_MODES = ("default", "freeze", "generational")
#: the mode ``rft serve`` applies to one worker when ``--gc`` is not given: with 10,000 live rollouts its full
#: collections take 4 ms where the interpreter's settings take 15 ms (benchmarks/results/server_gc.txt).
SERVE_GC = "freeze"
_GC_THRESHOLD0 = 10_000


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


def tune_gc(mode: str) -> None:
    """Tune CPython's cyclic garbage collector for a long-running server (``rft serve --gc``).

    ``"default"`` changes nothing. ``"freeze"`` collects once, then
    ``gc.freeze()``s every object alive now (imports, the app, its tools:
    they are never garbage, yet a full collection would walk them all) and
    raises the generation-0 threshold to 10,000 allocations (fewer, rarer
    collections). ``"generational"`` freezes at startup too, keeps the default
    thresholds and also freezes what survives each full collection, so a full
    collection walks only objects created since the previous one (live
    rollouts stop lengthening the pauses); the cost: a reference cycle among objects that
    were alive at a freeze and die later is never collected (rollout records
    hold no cycles; see docs/performance.md).

    Raises:
        ValueError: an unknown mode (the choices are :data:`GC_MODES`).
    """
    if mode not in GC_MODES:
        raise ValueError(f"gc mode must be one of {GC_MODES}, got {mode!r}")
    if mode == "default":
        return
    gc.collect()
    gc.freeze()
    if mode == "freeze":
        gc.set_threshold(_GC_THRESHOLD0, *gc.get_threshold()[1:])
    elif _freeze_survivors not in gc.callbacks:  # generational: default thresholds, small full collections
        gc.callbacks.append(_freeze_survivors)


def _build_parser(command: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rft", description="Tool and grader endpoints for hosted agent RFT.")
    parser.add_argument("--version", action="version", version=f"rft-sdk {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="serve a ToolServer (uvicorn)")
    serve.add_argument("app", metavar="MODULE:ATTR",
                       help="e.g. examples.retail.app:server; imported with the current directory first on sys.path "
                            "(a folder without __init__.py works), plus $PYTHONPATH; the module's own folder is not "
                            "added: a module it imports by a bare name from another folder needs PYTHONPATH")
    serve.add_argument("--factory", action="store_true",
                       help="MODULE:ATTR is a function of no arguments that returns the app (a ToolServer), as "
                            "uvicorn --factory: called once in this process and once in each worker; one factory "
                            "per grader serves one grader per process (docs/graders.md)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes (default 1); more than 1 needs a store shared by the "
                            "processes, e.g. ToolServer(store=SQLiteStore(path))")
    serve.add_argument("--store", default=None, metavar="URL",
                       help="rollout store for a ToolServer built without one: memory://, sqlite:///path, "
                            "redis://host:port/db or rediss://... (sets $RFT_STORE_URL before the app is imported)")
    serve.add_argument("--surfaces", default=None, metavar="LIST",
                       help="surfaces a ToolServer exposes, comma-separated: hosted, mcp, openenv, nemo_gym, or a "
                            "plug-in's entry-point name (docs/surfaces.md; "
                            "sets $RFT_SURFACES "
                            "before the app is imported; default: the app's own choice, else hosted)")
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"],
                       help="event loop (default auto: uvloop when installed, e.g. uvicorn[standard])")
    serve.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"],
                       help="HTTP parser (default auto: httptools when installed)")
    serve.add_argument("--header-timeout-s", type=float, default=HEADER_TIMEOUT_S, metavar="S",
                       help=f"seconds a connection has to send a request's complete headers before it is closed "
                            f"(slow or stalled clients; default {HEADER_TIMEOUT_S:g}, 0: none; docs/reliability.md)")
    serve.add_argument("--limit-concurrency", type=int, default=None, metavar="N",
                       help=f"connections per worker before uvicorn answers 503 (retried by the hosted side); "
                            f"default: the open-file limit (raised at start to the hard limit) less 256, at least "
                            f"{CONNECTION_LIMIT}; 0: none. Requests past what a worker runs at once queue instead "
                            "(ToolServer(admission=...), docs/performance.md)")
    serve.add_argument("--first-byte-timeout-s", type=float, default=FIRST_BYTE_TIMEOUT_S, metavar="S",
                       help=f"seconds a new connection may stay silent before it is closed (default "
                            f"{FIRST_BYTE_TIMEOUT_S:g}, 0: none); a client opening a batch's connections at once "
                            "may write to them late")
    serve.add_argument("--timeout-keep-alive", type=float, default=KEEP_ALIVE_S, metavar="S",
                       help=f"seconds an idle keep-alive connection stays open between requests (uvicorn's "
                            f"timeout_keep_alive; default {KEEP_ALIVE_S:g}, longer than clients keep idle pooled "
                            "connections: a client that reuses a connection later than the server keeps it meets a "
                            "closed socket, a retried transport error)")
    serve.add_argument("--redis-persistence", default=None, choices=list(PERSISTENCE_MODES),
                       help="a RedisStore on a Redis without an append-only file: refuse to start (require, the "
                            "default), warn, or off (sets $RFT_REDIS_PERSISTENCE; docs/reliability.md)")
    serve.add_argument("--gc", default=None, choices=list(GC_MODES),
                       help=f"garbage-collector tuning of a single worker (docs/performance.md; {SERVE_GC} unless "
                            "given): freeze (objects alive at startup leave every collection; gen-0 threshold "
                            "10,000), generational (freeze at startup and what survives each full collection), "
                            "default (the interpreter's own settings)")

    tools = sub.add_parser("tools", help="print the dataset tools (or job config) of a ToolServer as JSON")
    tools.add_argument("app", metavar="MODULE:ATTR")
    tools.add_argument("--factory", action="store_true",
                       help="MODULE:ATTR is a function of no arguments that returns the ToolServer (as rft serve "
                            "--factory)")
    tools.add_argument("--format", default="chat_completions", choices=["chat_completions", "responses"])
    tools.add_argument("--base-url", default=None, help="print the whole job config for this public URL instead")
    job = tools.add_argument_group("job config (with --base-url)")
    job.add_argument("--target", default="openai", choices=["openai", "azure"],
                     help="service dialect: openai (one URL per tool, Authorization: Bearer) or azure (one "
                          "shared /tools URL, X-Functions-Key, grader without headers); default openai. "
                          "For a complete submittable job use 'rft job'")
    job.add_argument("--token-env", default=None, metavar="VAR",
                     help="put the token $VAR in every tool's (and, for openai, the grader's) headers "
                          "(read from the environment, so the token stays out of shell history)")
    job.add_argument("--allow-unauthenticated", action="store_true",
                     help="print the job without a token although the server checks tokens (refused otherwise)")
    job.add_argument("--grader", default=None, metavar="NAME",
                     help="the job's grader: its URL is <base-url>/grade/NAME (<base-url>/grade/s/<secret>/NAME "
                          "with a grader_secret); default: the server's default grader, at <base-url>/grade")
    job.add_argument("--max-episode-steps", type=int, default=10, help="model turns per rollout (default 10)")
    job.add_argument("--dataset", default=None, metavar="JSONL",
                     help="size max_episode_steps from this dataset by the one rule of docs/gold-items.md (per "
                          "line the gold's calls + 1, each alternative's + 1; with max_tool_calls also its + 1 and "
                          "the gold's calls + 2): the larger of that and --max-episode-steps. One 'info:' line on "
                          "stderr where that raises it (or no line has gold to size it by), none where every "
                          "line fits; the exit status tells success")
    job.add_argument("--compute-multiplier", type=float, default=None,
                     help="rollouts per item scale (left out unless given: the service's default)")
    job.add_argument("--rate-limit", type=int, default=50, help="grader requests per second (default 50)")
    job.add_argument("--pass-threshold", type=float, default=1.0, help="score counted as a pass (default 1.0)")

    # Declared commands are imported only when run; the top-level help reads their HELP from source.
    for name, ep in sorted(plugin_commands().items()):
        if command != name:
            text = static_help(ep) or f"(from {ep.value})"
            if extra := missing_extra(name):
                text += f' [needs: pip install "rft-sdk[{extra}]"]'
            sub.add_parser(name, help=text, description=text)
            continue
        loaded = load_command(ep)
        if isinstance(loaded, str):
            child = sub.add_parser(name, help=loaded, description=loaded)
            child.set_defaults(_unavailable=loaded)
            child.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            continue
        child = sub.add_parser(name, help=loaded.HELP, description=loaded.HELP,
                               formatter_class=getattr(loaded, "FORMATTER_CLASS", argparse.HelpFormatter))
        loaded.add_arguments(child)
        child.set_defaults(_delegate=loaded)
    return parser


def _quiet_broken_pipe() -> int:
    """After stdout's reader went away (``rft tools ... | head``): no traceback, exit 141 as a shell would
    (128 + SIGPIPE). stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (tests capturing it)
        pass
    return 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rft``; returns the process exit status (141 when stdout's reader went away)."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # inside the try: a reader gone by now must not fail at interpreter exit
        return status
    except BrokenPipeError:
        return _quiet_broken_pipe()


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    parser = _build_parser(command)
    known = ["serve", "tools", *plugin_commands()]
    if command is not None and command not in known:
        near = difflib.get_close_matches(command, known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        print(f"rft: unknown command {command!r}{hint}; commands: {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    try:
        args, unknown = parser.parse_known_args(args_list)
        if getattr(args, "_unavailable", None):  # its extra is missing: say what to install
            print(f"rft {args.command}: {args._unavailable}", file=sys.stderr)
            return 2
        if unknown:
            child = subparser(parser, args.command)
            child.error(f"unrecognized arguments: {' '.join(unknown)}{close_option(unknown, child)}")
    except SystemExit as exc:  # --help / --version exit 0, usage errors exit 2
        return exc.code if isinstance(exc.code, int) else 2
    if getattr(args, "_delegate", None) is not None:
        return int(args._delegate.run(args) or 0)
    if getattr(args, "store", None):  # read by ToolServer() when the app module is imported (and by workers)
        os.environ[STORE_URL_ENV] = args.store
    if getattr(args, "surfaces", None):  # read by ToolServer() when the app module is imported (and by workers)
        os.environ[SURFACES_ENV_VAR] = args.surfaces
    if getattr(args, "redis_persistence", None):  # read by RedisStore() (and by workers)
        os.environ[PERSISTENCE_ENV] = args.redis_persistence
    if args.command == "serve":  # read by each connection of the protocol classes (and by workers)
        if (not args.header_timeout_s >= 0 or not args.first_byte_timeout_s >= 0
                or (args.limit_concurrency or 0) < 0 or not args.timeout_keep_alive > 0):
            print("rft serve: --header-timeout-s, --first-byte-timeout-s and --limit-concurrency must be >= 0, "
                  "--timeout-keep-alive > 0", file=sys.stderr)
            return 2
        from ._server._connections import (  # imports uvicorn: only when serving
            FIRST_BYTE_TIMEOUT_ENV,
            HEADER_TIMEOUT_ENV,
        )

        os.environ[HEADER_TIMEOUT_ENV] = repr(args.header_timeout_s)
        os.environ[FIRST_BYTE_TIMEOUT_ENV] = repr(args.first_byte_timeout_s)
    if args.command == "serve" and (problem := port_problem(args.host, args.port)):
        print(f"rft serve: {problem}", file=sys.stderr)  # before the app is imported or started
        return 2
    try:
        app = load_server(args.app, factory=args.factory)
    except FactoryError as exc:  # a factory misused, or named without --factory: the reason is the whole line
        print(f"rft {args.command}: {exc}", file=sys.stderr)
        return 2
    except (ValueError, ImportError, AttributeError, DefinitionError) as exc:  # DefinitionError: a bad @tool/@grader
        print(f"rft {args.command}: cannot load {args.app!r}{' (--factory)' if args.factory else ''}: {exc}",
              file=sys.stderr)
        return 2
    if args.command == "tools":
        return _print_tools(app, args)
    if not callable(app):
        made = " (what the --factory returned)" if args.factory else ""
        print(f"rft serve: {args.app!r}{made} is a {type(app).__name__}, not an ASGI app (e.g. a ToolServer)",
              file=sys.stderr)
        return 2
    if args.workers < 1:
        print(f"rft serve: --workers must be >= 1, got {args.workers}", file=sys.stderr)
        return 2
    if args.workers > 1 and (problem := _unshared_store(app)):
        print(f"rft serve: --workers {args.workers} refused: {problem}", file=sys.stderr)
        return 2
    if isinstance(app, ToolServer):
        # the exposure warning is logged at startup from the bind address (ASGI lifespan, rft_sdk._server._ready);
        # a store that does not answer stops the start: here for worker processes, in the lifespan otherwise
        if args.workers > 1 and (problem := _store_problem(app)):
            print(f"rft serve: {problem}", file=sys.stderr)
            return 2
        app.check_store_at_startup = True
    import uvicorn

    from ._server._connections import connection_limit, http_protocol, raise_open_file_limit

    try:  # uvicorn's protocol classes with the header-read deadline (rft_sdk._server._connections)
        http = http_protocol(args.http)
    except ValueError as exc:
        print(f"rft serve: {exc}", file=sys.stderr)
        return 2
    soft, hard = raise_open_file_limit()
    limit = (connection_limit(soft, CONNECTION_LIMIT) if args.limit_concurrency is None
             else args.limit_concurrency or None)
    if args.log_level in ("info", "debug"):
        print(f"rft serve: open-file limit {'unlimited' if soft < 0 else soft} (hard "
              f"{'unlimited' if hard < 0 else hard}); up to {limit or 'unlimited'} connections per worker",
              file=sys.stderr)
    if args.workers > 1:  # uvicorn needs an import string to spawn workers (each tunes nothing: --gc is 1 worker)
        if args.gc is not None:
            print(f"rft serve: --gc {args.gc} applies to --workers 1 only; workers keep the interpreter's settings",
                  file=sys.stderr)
        uvicorn.run(args.app, host=args.host, port=args.port, workers=args.workers, loop=args.loop, http=http,
                    log_level=args.log_level, app_dir=os.getcwd(), limit_concurrency=limit,
                    timeout_keep_alive=args.timeout_keep_alive, factory=args.factory)
    else:
        tune_gc(args.gc or SERVE_GC)
        uvicorn.run(app, host=args.host, port=args.port, loop=args.loop, http=http, log_level=args.log_level,
                    limit_concurrency=limit, timeout_keep_alive=args.timeout_keep_alive)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
