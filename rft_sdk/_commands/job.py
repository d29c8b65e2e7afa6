"""``rft job``: write the complete, validated fine-tuning job of a ToolServer for OpenAI or Azure AI Foundry.

Usage::

    rft job examples.retail.app:server --base-url https://rft.example.com --target azure \\
        --model o4-mini-2025-04-16 --training-file file-abc --validation-file file-def \\
        --suffix retail --seed 7 --token-env RFT_TOKEN --metadata team=search --out job.json

The JSON written is the body of ``client.fine_tuning.jobs.create(**job)`` (fields,
defaults, allowed values and their sources: ``docs/job-config.md``); it is
validated first (``rft_sdk._jobs._config.validate_job``). A hyperparameter takes a
positive number or ``auto`` and is left out unless given (the service's own
default applies). Refused unless overridden: a server that checks tokens and no
``--token-env`` (``--allow-unauthenticated``), a base URL that is not public
``https://`` (``--allow-insecure-url``). Exit status: 0 written, 2 anything
refused (one line saying why and what to do).
Declared as the ``job`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli_commands import FactoryError, env_secret, load_server, standalone_main
from .._jobs._config import REASONING_EFFORTS, TARGETS
from .._server._app import ToolServer
from .._validation._steps import size_steps
from ..exceptions import DefinitionError

__all__ = ["HELP", "add_arguments", "main", "run"]

#: One-line help shown by ``rft --help``.
HELP = "write a ToolServer's complete fine-tuning job (openai or azure) as validated JSON"


def _hyper(kind: type) -> Any:
    def parse(text: str) -> Any:
        if text == "auto":
            return "auto"
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__} or 'auto', got {text!r}") from None
    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``job`` options to ``parser``."""
    parser.add_argument("app", metavar="MODULE:ATTR", help="the ToolServer, e.g. examples.retail.app:server")
    parser.add_argument("--factory", action="store_true",
                        help="MODULE:ATTR is a function of no arguments that returns the ToolServer (as rft serve "
                             "--factory), called once")
    parser.add_argument("--base-url", required=True, help="public base URL the service will reach the server at")
    parser.add_argument("--target", default="openai", choices=list(TARGETS),
                        help="openai: one URL per tool, Authorization: Bearer; azure: one shared /tools URL, "
                             "X-Functions-Key, grader without headers (default openai)")
    parser.add_argument("--model", required=True, help="base model, e.g. o4-mini-2025-04-16")
    parser.add_argument("--training-file", required=True, help="uploaded training file id")
    parser.add_argument("--validation-file", default=None, help="uploaded validation file id")
    parser.add_argument("--suffix", default=None, help="fine-tuned model name suffix (at most 64 characters)")
    parser.add_argument("--seed", type=int, default=None, help="job seed, 0..2147483647 (default: the service picks)")
    parser.add_argument("--metadata", action="append", default=[], metavar="KEY=VALUE",
                        help="job metadata pair (repeatable; at most 16, keys <= 64 and values <= 512 characters)")
    parser.add_argument("--token-env", default=None, metavar="VAR",
                        help="environment variable holding the server's token (kept out of shell history)")
    parser.add_argument("--allow-unauthenticated", action="store_true",
                        help="write the job without a token even though the server checks tokens (e.g. a gateway "
                             "adds the header); otherwise refused, as every call would answer 401")
    parser.add_argument("--allow-insecure-url", action="store_true",
                        help="accept a loopback, private or plain-http --base-url (the service cannot reach it, or "
                             "would send the token in clear); for local experiments only")
    parser.add_argument("--grader", default=None, help="grader name (default: the server's default grader)")
    parser.add_argument("--builtin-grader", default=None, metavar="JSON",
                        help="a built-in grader object (e.g. string_check) instead of the endpoint grader; "
                             "how a tools-only server is exported")
    parser.add_argument("--max-episode-steps", type=int, default=10, help="model turns per rollout (default 10)")
    parser.add_argument("--dataset", default=None, metavar="JSONL",
                        help="size max_episode_steps from this dataset by the one rule of docs/gold-items.md: the "
                             "larger of what its lines need and --max-episode-steps; one 'info:' line on stderr where "
                             "that raises it, none where every line fits")
    ptc = parser.add_mutually_exclusive_group()
    ptc.add_argument("--parallel-tool-calls", dest="parallel_tool_calls", action="store_true", default=None,
                     help="allow several tool calls per model turn (left out unless given)")
    ptc.add_argument("--no-parallel-tool-calls", dest="parallel_tool_calls", action="store_false",
                     help="one tool call per model turn")
    parser.add_argument("--rate-limit", type=int, default=50, help="grader requests per second (default 50)")
    parser.add_argument("--pass-threshold", type=float, default=1.0, help="score counted as a pass (default 1.0)")
    hp = parser.add_argument_group("hyperparameters (a positive number or 'auto'; each left out unless given, so the "
                                   "service's default applies: docs/job-config.md)")
    hp.add_argument("--compute-multiplier", type=_hyper(float), default=None, help="Azure: 0.5-3.0")
    hp.add_argument("--eval-interval", type=_hyper(int), default=None, help="Azure: 1-25, default 1")
    hp.add_argument("--eval-samples", type=_hyper(int), default=None, help="Azure: 1-10, default 5")
    hp.add_argument("--n-epochs", type=_hyper(int), default=None)
    hp.add_argument("--batch-size", type=_hyper(int), default=None)
    hp.add_argument("--learning-rate-multiplier", type=_hyper(float), default=None)
    hp.add_argument("--reasoning-effort", default=None, choices=list(REASONING_EFFORTS),
                    help="Azure's default: medium")
    parser.add_argument("--out", default=None, help="write the job here (default: print it)")


def run(args: argparse.Namespace) -> int:
    """Build, validate and write the job; return the exit status."""
    def fail(message: str) -> int:
        print(f"rft job: {message}", file=sys.stderr)
        return 2

    try:
        app = load_server(args.app, factory=args.factory)
    except FactoryError as exc:  # a factory misused, or named without --factory: the reason is the whole line
        return fail(str(exc))
    except (ValueError, ImportError, AttributeError, DefinitionError) as exc:
        return fail(f"cannot load {args.app!r}{' (--factory)' if args.factory else ''}: {exc}")
    if not isinstance(app, ToolServer):
        return fail(f"{args.app!r} is a {type(app).__name__}, not a ToolServer")
    try:
        token = env_secret(args.token_env)
    except ValueError as exc:
        return fail(str(exc))
    steps = args.max_episode_steps
    if args.dataset is not None:
        try:
            steps, note = size_steps(args.dataset, steps)
        except ValueError as exc:
            return fail(str(exc))
        if note is not None:  # information, never a warning: quiet where the dataset changed nothing
            print(f"rft job: info: {note}", file=sys.stderr)
    metadata: dict[str, str] = {}
    for pair in args.metadata:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return fail(f"--metadata {pair!r}: expected KEY=VALUE")
        metadata[key] = value
    try:
        builtin = json.loads(args.builtin_grader) if args.builtin_grader else None
        if builtin is not None and not isinstance(builtin, dict):
            raise ValueError("--builtin-grader must be a JSON object")
        job = app.job_config(
            args.base_url, target=args.target, token=token, grader=args.grader, builtin_grader=builtin,
            model=args.model, training_file=args.training_file, validation_file=args.validation_file,
            suffix=args.suffix, seed=args.seed, metadata=metadata or None, max_episode_steps=steps,
            parallel_tool_calls=args.parallel_tool_calls, rate_limit=args.rate_limit,
            pass_threshold=args.pass_threshold, compute_multiplier=args.compute_multiplier,
            eval_interval=args.eval_interval, eval_samples=args.eval_samples, n_epochs=args.n_epochs,
            batch_size=args.batch_size, learning_rate_multiplier=args.learning_rate_multiplier,
            reasoning_effort=args.reasoning_effort, submittable=True,
            allow_unauthenticated=args.allow_unauthenticated, allow_insecure_url=args.allow_insecure_url)
    except ValueError as exc:
        return fail(str(exc))
    if not token and not args.allow_unauthenticated:  # the app as loaded checks no token: say what that means
        print("rft job: warning: the job sends no auth header, so the deployed server must accept calls without "
              "a token (anyone who finds the URL can call it); set RFT_AUTH_TOKENS there and pass --token-env, "
              "or --allow-unauthenticated to silence this", file=sys.stderr)
    text = json.dumps(job, indent=2)
    if args.out:
        try:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {args.out!r}: {exc}")
        print(f"wrote {args.out} ({args.target} job, {len(job['method']['reinforcement']['tools'])} tools)",
              file=sys.stderr)
    else:
        print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._commands.job MODULE:ATTR ...``."""
    return standalone_main("rft job", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
