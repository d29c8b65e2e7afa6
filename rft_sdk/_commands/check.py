"""``rft check``: the hosted services' tool and grader test hooks, against a running server.

Usage::

    rft check tool search_catalog --args '{"query": "Urban Puffer", "top_k": 1}' --item '{}' \\
        --url http://127.0.0.1:8000 --token-env RFT_TOKEN [--trace-id trace_abc] [--target azure]
    rft check grader --sample '{"output_text": "JKT-URB-009"}' --item @item.json \\
        --url http://127.0.0.1:8000 [--trace-id trace_abc] [--grader NAME] [--secret-env RFT_GRADER_SECRET]

Each prints the request (tokens masked), the status, the time taken and the
answer (a tool's ``output`` decoded when it is JSON; a grade's details header).
A JSON option takes the JSON text or ``@path`` to a file. Exit status: 0 for a
2xx answer, 1 for any other answer or no answer, 2 for invalid options.
Declared as the ``check`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli_commands import env_secret, standalone_main
from .._jobs._config import TARGETS
from .._validation._check import CheckResult, check_grader, check_tool

__all__ = ["HELP", "add_arguments", "main", "run"]

#: One-line help shown by ``rft --help``.
HELP = "send one tool call or one grade to a running server, as the hosted test hooks do"


def _json_arg(text: str, option: str) -> Any:
    """``text`` as JSON, or the JSON in the file ``@path``.

    Raises:
        ValueError: unreadable file or invalid JSON (names the option).
    """
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{option}: cannot read {text[1:]!r}: {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{option}: invalid JSON: {exc}") from None


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--item", default="{}", help="the dataset line as JSON (or @file); default {}")
    p.add_argument("--trace-id", default=None, help="the rollout's trace_id")
    p.add_argument("--url", required=True, help="the server's base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--token-env", default=None, metavar="VAR", help="environment variable holding the token")
    p.add_argument("--target", default="openai", choices=list(TARGETS),
                   help="whose request to send: openai (/tools/{name}, Authorization: Bearer) or azure "
                        "(shared /tools, X-Functions-Key; grader without headers); default openai")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait (default 600, as hosted)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object instead")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``check tool`` / ``check grader`` sub-commands to ``parser``."""
    sub = parser.add_subparsers(dest="check_what", required=True, metavar="tool|grader")
    tool = sub.add_parser("tool", help="one tool call, as a rollout sends it")
    tool.add_argument("name", help="tool name")
    tool.add_argument("--args", required=True, dest="arguments", help="the call's arguments as JSON (or @file)")
    tool.add_argument("--call-id", default=None, help="call_id (default: a fresh one)")
    _common(tool)
    grader = sub.add_parser("grader", help="one grade, as the service sends it after a rollout")
    grader.add_argument("--sample", required=True, help='the model sample as JSON (or @file), e.g. {"output_text": "..."}')
    grader.add_argument("--grader", default=None, help="grader name (default: the server's default grader)")
    grader.add_argument("--secret-env", default=None, metavar="VAR",
                        help="environment variable holding the grader secret: post to /grade/s/<secret>, no headers")
    _common(grader)


def _result_json(result: CheckResult) -> str:
    return json.dumps({"url": result.url, "request_headers": result.request_headers,
                       "request": result.request_body, "status": result.status,
                       "elapsed_ms": round(result.elapsed_s * 1000, 3), "response": result.response_body,
                       "grade_details": result.grade_details, "error": result.error}, ensure_ascii=False)


def run(args: argparse.Namespace) -> int:
    """Run ``rft check``; print the report; return the exit status (0 on a 2xx answer)."""
    try:
        item = _json_arg(args.item, "--item")
        if not isinstance(item, dict):
            raise ValueError("--item: must be a JSON object")
        token = env_secret(args.token_env)
        if args.check_what == "tool":
            arguments = _json_arg(args.arguments, "--args")
            result = check_tool(args.url, args.name, arguments, item=item, trace_id=args.trace_id,
                                call_id=args.call_id, target=args.target, token=token, timeout_s=args.timeout)
        else:
            sample = _json_arg(args.sample, "--sample")
            if not isinstance(sample, dict):
                raise ValueError("--sample: must be a JSON object")
            result = check_grader(args.url, sample, item=item, trace_id=args.trace_id, grader=args.grader,
                                  grader_secret=env_secret(args.secret_env), target=args.target, token=token,
                                  timeout_s=args.timeout)
    except ValueError as exc:
        print(f"rft check: {exc}", file=sys.stderr)
        return 2
    print(_result_json(result) if args.json else result.render())
    return 0 if result.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._commands.check tool|grader ...``."""
    return standalone_main("rft check", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
