"""``rft emulate``: run a policy against your tool server and grader as the hosted service would.

Usage::

    rft emulate --dataset train.jsonl --config job.json --policy reference --out runs/ref
    rft emulate --dataset train.jsonl --config job.json --policy openai \\
        --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-0.5B-Instruct --out runs/base
    rft emulate ... --policy perturbed     # write tools: declared or learnt from a gold dry run
    rft emulate ... --policy perturbed --write-tools cancel_order,modify_order   # override
    rft emulate ... --policy noisy         # the gold with dropped/repeated/altered calls, wrong answers
    rft emulate ... --policy my_pkg.policies:make_policy      # any object/factory with async act()
    rft emulate ... --target azure      # play Azure AI Foundry: grader called without headers

Declared as the ``emulate`` entry point of the ``rft_sdk.commands`` group
(``pyproject.toml``); ``rft_sdk.cli`` finds it there and calls
:func:`add_arguments` and :func:`run` (``docs/ARCHITECTURE.md``, "CLI").
Before any rollout it runs the checks of ``rft validate`` (the dataset by the
target's rules, its tools against the job's and against the live server's
``GET /tools``) and, for ``--policy openai``, asks the model endpoint for its
``/models`` (:meth:`OpenAICompatiblePolicy.preflight`); it stops on an error.
After the run it prints the top discard reasons with one example each, and
exits 1 when the share of discarded rollouts passes ``--max-discard-share``
(default 0 for replay policies, 0.1 for a model: ``_discards``).
Exit codes: 0 done, 1 too many discarded rollouts, 2 invalid
dataset/config/arguments or a preflight error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import httpx
from rich.console import Console

from .._cli_commands import share_arg
from .._validation._preflight import run_preflight
from ._client import ClientSettings
from ._contract import Policy, PolicyError
from ._dataset import DatasetError, load_dataset
from ._discards import MODEL_MAX_DISCARD_SHARE, default_max_discard_share, discard_digest, report_discards
from ._emulate import emulate
from ._job import TARGETS, JobConfigError, load_job, target_problems
from ._openai import OpenAICompatiblePolicy
from ._policy import NoisyReplayPolicy, PerturbedReplayPolicy, ReferenceReplayPolicy
from ._report import print_summary
from ._writes import learn_write_tools

__all__ = ["HELP", "add_arguments", "main", "make_policy", "run"]

#: One-line help shown by ``rft --help``.
HELP = "run a job offline against the local emulator of the hosted service"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``emulate`` options to ``parser``."""
    parser.add_argument("--dataset", required=True, help="dataset JSONL (hosted format)")
    parser.add_argument("--config", required=True, help="job config JSON (full hosted job or the 'reinforcement' object)")
    parser.add_argument("--policy", default="reference",
                        help="reference | perturbed | noisy | openai | MODULE:ATTR (default: reference)")
    parser.add_argument("--out", required=True, help="output directory for summary.json, rollouts.jsonl, plots")
    parser.add_argument("--base-url", help="openai policy: chat-completions base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--model", help="openai policy: model name")
    parser.add_argument("--api-key", default=None, help="openai policy: API key (default $OPENAI_API_KEY)")
    parser.add_argument("--temperature", type=float, default=1.0, help="openai policy: sampling temperature")
    ptc = parser.add_mutually_exclusive_group()
    ptc.add_argument("--parallel-tool-calls", dest="parallel_tool_calls", action="store_true", default=None,
                     help="openai policy: send parallel_tool_calls=true (default: the job's value, else not sent)")
    ptc.add_argument("--no-parallel-tool-calls", dest="parallel_tool_calls", action="store_false",
                     help="openai policy: send parallel_tool_calls=false")
    parser.add_argument("--tool-choice", default=None,
                        help="openai policy: tool_choice to send: auto | required | none | a tool name")
    parser.add_argument("--target", default="openai", choices=list(TARGETS),
                        help="hosted service to play: openai, or azure (tool calls to the job's URLs, which an "
                             "Azure job shares as one /tools URL; the grader called WITHOUT headers); default openai")
    parser.add_argument("--write-tools", default="",
                        help="perturbed policy: comma-separated write tool names (default: declared with "
                             "@tool(writes=...) or learnt from what the gold's calls change)")
    parser.add_argument("--seed", type=int, default=0, help="perturbed and noisy policies: RNG seed")
    parser.add_argument("--samples-per-item", type=int, default=None,
                        help="rollouts per item (default: from compute_multiplier)")
    parser.add_argument("--eval", action="store_true", help="use hyperparameters.eval_samples per item")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    parser.add_argument("--max-episode-steps", type=int, default=None,
                        help="override the job's max_episode_steps (model turns per rollout)")
    parser.add_argument("--concurrency", type=int, default=64, help="rollouts in flight (default 64)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per tool/grader call limit, seconds")
    parser.add_argument("--retries", type=int, default=3, help="retries on 5xx/transport errors (hosted: 3)")
    parser.add_argument("--backoff", type=float, default=0.5, help="first retry backoff, seconds (doubles)")
    parser.add_argument("--label", default=None, help="name shown in the report")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--max-discard-share", type=share_arg, default=None,
                        help="exit 1 when more than this share (0-1) of rollouts is discarded (default: 0 for "
                             f"reference/perturbed replays, {MODEL_MAX_DISCARD_SHARE} for a model policy)")


def _load_object(spec: str) -> Policy:
    """The policy object named by ``--policy MODULE:ATTR`` (a factory is called once)."""
    from rft_sdk._cli_commands import load_app

    try:
        obj = load_app(spec)
    except ValueError:
        raise ValueError(f"--policy {spec!r}: expected reference, perturbed, openai or MODULE:ATTR") from None
    if isinstance(obj, type) or (not hasattr(obj, "act") and callable(obj)):
        obj = obj()  # a class or a factory
    if not isinstance(obj, Policy):  # runtime_checkable: has an ``act`` attribute
        raise ValueError(f"--policy {spec!r} is not a policy (no async act method)")
    return obj


def _tool_choice(value: str | None) -> str | dict[str, Any] | None:
    """``--tool-choice``: a keyword as is, anything else names a function."""
    if value is None or value in ("auto", "required", "none"):
        return value
    return {"type": "function", "function": {"name": value}}


def make_policy(args: argparse.Namespace, write_tools: set[str] | None = None) -> Policy:
    """Build the policy named by ``args.policy`` (:func:`run` then gives an openai policy
    the job's ``parallel_tool_calls`` unless ``--[no-]parallel-tool-calls`` chose).

    Args:
        write_tools: for ``perturbed`` without ``--write-tools``: the write tools learnt from
            the server (``learn_write_tools``).

    Raises:
        ValueError: missing options (``--base-url``/``--model`` for openai; for perturbed,
            no write tool given, declared or learnt) or an unusable ``MODULE:ATTR``.
    """
    if args.policy == "reference":
        return ReferenceReplayPolicy()
    if args.policy == "noisy":
        return NoisyReplayPolicy(seed=args.seed)
    if args.policy == "perturbed":
        tools = [t for t in args.write_tools.split(",") if t] or sorted(write_tools or ())
        if not tools:
            raise ValueError("--policy perturbed: no write tool is known: the gold dry run changed nothing and no "
                             "tool declares @tool(writes=True); pass --write-tools NAME[,NAME...]")
        return PerturbedReplayPolicy(tools, seed=args.seed)
    if args.policy == "openai":
        if not args.base_url or not args.model:
            raise ValueError("--policy openai needs --base-url and --model")
        parallel = getattr(args, "parallel_tool_calls", None)
        return OpenAICompatiblePolicy(args.base_url, args.model, args.api_key, temperature=args.temperature,
                                      timeout_s=args.timeout, parallel_tool_calls=parallel,
                                      tool_choice=_tool_choice(getattr(args, "tool_choice", None)))
    return _load_object(args.policy)


def run(args: argparse.Namespace) -> int:
    """Run ``rft emulate``; print the summary table; return the exit code."""
    err = Console(stderr=True)
    target = getattr(args, "target", "openai")
    learn = args.policy == "perturbed" and not [t for t in args.write_tools.split(",") if t]
    try:
        policy = make_policy(args) if not learn else ReferenceReplayPolicy()  # perturbed: built once learnt
        job = load_job(args.config)
    except (ValueError, ImportError, AttributeError) as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        return 2
    # then the checks of `rft validate`: dataset rules, job tool names, schemas against the live server
    # a replay policy (reference, perturbed, noisy) plays the gold fields: they are checked too
    replays = learn or getattr(policy, "actions_field", None) is not None
    if (code := run_preflight(args.dataset, args.config, target, "rft emulate", gold=replays)) is not None:
        return code
    if learn:
        try:
            items = load_dataset(args.dataset, job.tool_names)[:args.limit]
            found, writes = asyncio.run(learn_write_tools(items, job, settings=ClientSettings(target=target)))
            policy = make_policy(args, found)
        except (DatasetError, ValueError, httpx.HTTPError) as exc:
            err.print(f"error: {exc}", style="red", markup=False, highlight=False)
            return 2
        err.print(f"write tools (declared or learnt from the gold dry run): {', '.join(sorted(found))}",
                  markup=False, highlight=False, soft_wrap=True)
    for problem in target_problems(job, target):
        err.print(f"warning ({target}): {problem}", style="yellow", markup=False, highlight=False)
    if isinstance(policy, OpenAICompatiblePolicy) and policy.parallel_tool_calls is None:
        policy.parallel_tool_calls = job.parallel_tool_calls  # the job's setting, unless the flags chose
    settings = ClientSettings(retries=args.retries, backoff_initial_s=args.backoff, timeout_s=args.timeout,
                              target=target)

    async def go() -> Any:
        try:
            if isinstance(policy, OpenAICompatiblePolicy):
                warning = await policy.preflight(args.timeout)  # PolicyError: no rollout, exit 2
                if warning:
                    err.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
            return await emulate(args.dataset, job, policy, out_dir=args.out,
                                 samples_per_item=args.samples_per_item, use_eval_samples=args.eval,
                                 limit=args.limit, max_concurrency=args.concurrency, settings=settings,
                                 progress=not args.no_progress, label=args.label or args.policy, console=err,
                                 max_episode_steps=args.max_episode_steps)
        finally:
            close = getattr(policy, "aclose", None)
            if close is not None:
                await close()

    try:
        result = asyncio.run(go())
    except (DatasetError, JobConfigError, ValueError, PolicyError) as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        return 2
    print_summary(result.summary, Console())
    err.print(f"wrote {', '.join(str(p) for p in result.paths.values())}")
    share = getattr(args, "max_discard_share", None)
    limit = default_max_discard_share(policy) if share is None else share
    return 1 if report_discards(discard_digest(result.results), limit, "rft emulate", err) else 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk.emulator.cli ...``."""
    parser = argparse.ArgumentParser(prog="rft emulate", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
