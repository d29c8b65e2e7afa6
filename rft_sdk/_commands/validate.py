"""``rft validate``: a dataset checked by the hosted rules of one target, and against the live server.

Usage::

    rft validate train.jsonl --target openai                    # the file alone
    rft validate train.jsonl --app examples.retail.app:server   # + the ToolServer's tools, in process
    rft validate train.jsonl --url https://tools.example.com --token-env RFT_TOKEN   # + live GET /tools
    rft validate train.jsonl --config job.json --json           # + the job (its tools' URLs and headers)

Every finding names the line, the field and the fix (``rft_sdk._validation._validate``,
``rft_sdk._validation._live``). Exit status: 0 no errors (warnings allowed), 1
errors, 2 invalid options. ``--json`` prints one object (``Report.to_dict``)
for CI. ``rft emulate`` and ``rft doctor`` run the same checks first
(:func:`run_preflight`) and stop before any rollout on an error. Declared as
the ``validate`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import json
import sys

from .._cli_commands import env_secret, standalone_main
from .._jobs._config import TARGETS
from .._validation._preflight import preflight, run_preflight, validate
from .._validation._validate import MIN_LINES

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
    parser.add_argument("--token-env", default=None, metavar="VAR",
                        help="with --url: environment variable holding the server's token")
    parser.add_argument("--config", default=None, metavar="JOB",
                        help="the job JSON: its tool names, and (without --app/--url) its tools' URLs and headers "
                             "for the live diff")
    parser.add_argument("--target", default="openai", choices=list(TARGETS),
                        help="whose rules: openai or azure (default openai)")
    parser.add_argument("--min-lines", type=int, default=MIN_LINES, help=f"fewest lines (default {MIN_LINES})")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for GET /tools (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text (for CI)")


def run(args: argparse.Namespace) -> int:
    """Run ``rft validate``; print the findings; return the exit status (0 ok, 1 errors, 2 bad options)."""
    app = None
    if args.app:
        from .._cli_commands import load_app

        try:
            app = load_app(args.app)
        except (ValueError, ImportError, AttributeError) as exc:
            print(f"rft validate: cannot load {args.app!r}: {exc}", file=sys.stderr)
            return 2
        if not hasattr(app, "dataset_tools"):
            print(f"rft validate: {args.app!r} is a {type(app).__name__}, not a ToolServer", file=sys.stderr)
            return 2
    try:
        token = env_secret(args.token_env)
    except ValueError as exc:
        print(f"rft validate: {exc}", file=sys.stderr)
        return 2
    report = validate(args.dataset, target=args.target, config=args.config, app=app, url=args.url, token=token,
                      min_lines=args.min_lines, timeout_s=args.timeout)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.render())
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._commands.validate DATASET ...``."""
    return standalone_main("rft validate", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
