"""``rft validate``: a dataset checked by the hosted rules of one target, and against the live server.

Usage::

    rft validate train.jsonl --target openai                    # the file alone
    rft validate train.jsonl --app examples.retail.app:server   # + the ToolServer's tools, in process
    rft validate train.jsonl --app app:strict_server --factory  # a function returning the ToolServer (called once)
    rft validate train.jsonl --url https://tools.example.com --token-env RFT_TOKEN   # + live GET /tools
    rft validate train.jsonl --config job.json --json           # + the job (its tools' URLs and headers,
                                                                #   its max_episode_steps against max_tool_calls)
    rft validate train.jsonl --app app:server --strict          # a gold call refused by its tool is an error

Every finding names the line, the field and the fix (``rft_sdk._validation._validate``,
``rft_sdk._validation._live``). The gold fields (``rft_sdk.protocol.GoldItem``) are
checked on every line and, with a server, every gold trajectory is replayed on
fresh rollouts (``rft_sdk._validation._gold``, docs/gold-items.md; ``--no-replay`` skips it). Exit status: 0 no errors (warnings allowed), 1
errors, 2 invalid options. ``--json`` prints one object (``Report.to_dict``)
for CI. ``rft emulate`` and ``rft doctor`` run the same checks first
(:func:`run_preflight`) and stop before any rollout on an error. Declared as
the ``validate`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from .._cli_commands import FactoryError, env_secret, load_server, standalone_main
from .._db._sqlite import SQLiteDatabase
from .._jobs._config import TARGETS
from .._validation._check import auth_headers
from .._validation._gold import replay_gold
from .._validation._preflight import job_server, preflight, run_preflight
from .._validation._preflight import validate as check_dataset
from .._validation._report import Report
from .._validation._validate import MIN_LINES
from ..exceptions import DefinitionError
from ..surfaces._hosted import HostedClient

__all__ = ["HELP", "add_arguments", "main", "preflight", "run", "run_preflight", "validate"]

#: One-line help shown by ``rft --help``.
HELP = "check a dataset by the hosted rules of a target, and its tools against the live server"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``validate`` options to ``parser``."""
    parser.add_argument("dataset", metavar="DATASET", help="dataset JSONL (hosted format)")
    live = parser.add_mutually_exclusive_group()
    live.add_argument("--app", default=None, metavar="MODULE:ATTR",
                      help="diff each line's tools against this ToolServer's (in process, no server needed)")
    live.add_argument("--url", default=None, help="diff each line's tools against GET URL/tools of a running server")
    parser.add_argument("--factory", action="store_true",
                        help="with --app: MODULE:ATTR is a function of no arguments that returns the ToolServer (as "
                             "rft serve --factory), called once")
    parser.add_argument("--token-env", default=None, metavar="VAR",
                        help="with --url: environment variable holding the server's token")
    parser.add_argument("--config", default=None, metavar="JOB",
                        help="the job JSON: its tool names, its max_episode_steps (a warning where a line's "
                             "max_tool_calls needs more turns), and (without --app/--url) its tools' URLs and "
                             "headers for the live diff")
    parser.add_argument("--grader", default=None, metavar="NAME",
                        help="dry run: grade with this named grader (default: the job's with --config, else the "
                             "server's default grader)")
    parser.add_argument("--target", default="openai", choices=list(TARGETS),
                        help="whose rules: openai or azure (default openai)")
    parser.add_argument("--min-lines", type=int, default=MIN_LINES, help=f"fewest lines (default {MIN_LINES})")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for GET /tools (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text (for CI)")
    parser.add_argument("--strict", action="store_true",
                        help="dry run: a gold call the tool refuses (400 tool_error) is an error unless the gold "
                             "marks it \"expect_error\": true (default: a warning)")
    parser.add_argument("--no-replay", action="store_true",
                        help="do not replay the gold trajectories against the server (the dry run: each gold call "
                             "must answer 2xx and the gold must earn the full score; docs/gold-items.md)")


def _replay_client(app: Any, url: str | None, token: str | None, target: str, config: str | Path | None,
                   timeout_s: float) -> tuple[HostedClient, str | None] | None:
    """The client the gold dry run plays through, and the grader name; ``None`` when there is no server."""
    if app is not None:  # in process, as from loopback (the exposure warning is about sockets, not this)
        local = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=timeout_s)
        return HostedClient(local), None
    if url is not None:
        return HostedClient.over_http(url, headers=auth_headers(token, target), timeout_s=timeout_s), None
    found = job_server(config) if config is not None else None
    if found is None:
        return None
    base, headers, grader = found
    return HostedClient.over_http(base, headers=headers, timeout_s=timeout_s), grader


def validate(dataset: str | Path, *, target: str = "openai", config: str | Path | None = None, app: Any = None,
             url: str | None = None, token: str | None = None, timeout_s: float = 10.0, replay: bool = True,
             strict: bool = False, grader: str | None = None, **options: Any) -> Report:
    """``rft validate`` as a function: the checks of :func:`rft_sdk._validation._preflight.validate`
    (same arguments; ``options``: ``min_lines``, ``check_job``, ``transport``, ``gold``), then, with a
    server (``app``, ``url``, or a ``config`` whose tools share one base URL) and ``replay``, the dry
    run: every well-formed gold trajectory played on fresh rollouts (``rft_sdk._validation._gold``:
    each call must answer 2xx unless marked ``expect_error``, and the gold must earn the full score;
    ``strict``: an unmarked 400 ``tool_error`` is an error, not a warning), graded by ``grader`` (a
    name; default the job's grader with ``config``, else the server's default one). No dry run through a
    ``transport`` (it is synchronous): pass ``app`` to replay in process.

    Returns:
        The report; ``report.replayed`` is the number of gold lines played (``None``: no dry run).
    """
    report = check_dataset(dataset, target=target, config=config, app=app, url=url, token=token,
                           timeout_s=timeout_s, **options)
    if not replay or not report.gold or report.server is None or options.get("transport") is not None:
        return report
    found = _replay_client(app, url, token, target, config, timeout_s)
    if found is None:
        return report
    client, named = found
    grader = grader or named

    async def go() -> int:
        async with client:
            return await replay_gold(report.gold, client, report, grader=grader, strict=strict)

    report.replayed = asyncio.run(go())  # gold trajectories and alternatives played
    return report


def _template_note(app: Any) -> str | None:
    """The ``info:`` line of an in-process dry run whose rollout database kept its files in the folder the SDK chose
    (``<temp dir>/rft-db-<name>``: neither the database's ``dir=`` nor ``$RFT_DB_DIR``), which nothing else names;
    ``None`` for any other database or folder, and where the folder does not exist."""
    db = getattr(app, "db", None)
    if not isinstance(db, SQLiteDatabase) or not db.dir.is_dir():
        return None
    if db.dir != Path(tempfile.gettempdir()) / f"rft-db-{db.name}":
        return None
    return (f"the dry run left the rollout database's template in {db.dir} (reused by the next run of the app; set "
            f"RFT_DB_DIR to keep it elsewhere)")


def run(args: argparse.Namespace) -> int:
    """Run ``rft validate``; print the findings; return the exit status (0 ok, 1 errors, 2 bad options)."""
    app = None
    if args.factory and not args.app:
        print("rft validate: --factory needs --app MODULE:ATTR (a served factory: validate with --url or --config)",
              file=sys.stderr)
        return 2
    if args.app:
        try:
            app = load_server(args.app, factory=args.factory)
        except FactoryError as exc:  # a factory misused, or named without --factory: the reason is the whole line
            print(f"rft validate: {exc}", file=sys.stderr)
            return 2
        except (ValueError, ImportError, AttributeError, DefinitionError) as exc:
            print(f"rft validate: cannot load {args.app!r}{' (--factory)' if args.factory else ''}: {exc}",
                  file=sys.stderr)
            return 2
        if not hasattr(app, "dataset_tools"):
            print(f"rft validate: {args.app!r} is a {type(app).__name__}, not a ToolServer", file=sys.stderr)
            return 2
        if args.grader is not None:
            try:
                app.grader_spec("http://localhost", name=args.grader)
            except ValueError as exc:
                print(f"rft validate: --grader: {exc}", file=sys.stderr)
                return 2
    try:
        token = env_secret(args.token_env)
    except ValueError as exc:
        print(f"rft validate: {exc}", file=sys.stderr)
        return 2
    report = validate(args.dataset, target=args.target, config=args.config, app=app, url=args.url, token=token,
                      min_lines=args.min_lines, timeout_s=args.timeout, replay=not args.no_replay,
                      strict=args.strict, grader=args.grader)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.render())
    note = _template_note(app) if app is not None and report.replayed else None
    if note:  # information on stderr, never in the report: the exit status and stdout are unchanged
        print(f"rft validate: info: {note}", file=sys.stderr)
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._commands.validate DATASET ...``."""
    return standalone_main("rft validate", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
