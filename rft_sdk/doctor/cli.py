"""``rft doctor``: check the four principles of a successful agent RFT run before paying for one.

Usage::

    rft doctor --dataset train.jsonl --config job.json --out runs/doctor
    rft doctor ... --policy openai --base-url http://localhost:8000/v1 --model M --samples 8
    rft doctor ... --production-log prod.jsonl --probes my_pkg.probes:PROBES --hack-threshold 0.05
    rft doctor ... --target azure --budget 12 --skip-probes tool_spam,answer_without_work

Writes ``OUT/doctor.json`` and ``OUT/doctor.html``, prints a table, and exits
1 when a principle fails or when more than ``--max-discard-share`` of the
policy's rollouts were discarded (the top reasons, one example each, are
printed; default 0 for the reference replay, 0.1 for a model, as ``rft emulate``;
the other principles are then not run, since their rollouts would meet the same fault),
0 otherwise ("not checked" and warnings do not fail), 2 on invalid input or an
unreachable model endpoint (checked before any rollout). Needs the ``emulate`` extra: ``pip install "rft-sdk[emulate]"``.
Declared as the ``doctor`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

__all__ = ["HELP", "add_arguments", "load_probes", "main", "run"]

#: One-line help shown by ``rft --help``.
HELP = "pre-flight report: is the task gradeable, production-like, learnable and unhackable?"

_NEEDS_EXTRA = 'rft doctor needs the emulate extra: pip install "rft-sdk[emulate]"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``doctor`` options to ``parser`` (no heavy imports: ``--help`` works without extras)."""
    parser.add_argument("--dataset", required=True, help="dataset JSONL (hosted format)")
    parser.add_argument("--config", required=True,
                        help="job config JSON (full hosted job or 'reinforcement' object); the grader measured is the "
                             "one at its grader.url: /grade is the server's default grader, /grade/NAME the grader "
                             "NAME (rft tools --grader NAME writes it)")
    parser.add_argument("--out", required=True, help="output directory for doctor.json and doctor.html")
    parser.add_argument("--policy", default="reference",
                        help="learnable check's policy: reference (deterministic: learnable not checked) | noisy (the "
                             "gold with mistakes, offline) | openai | MODULE:ATTR (default: reference)")
    parser.add_argument("--base-url", help="openai policy: chat-completions base URL")
    parser.add_argument("--model", help="openai policy: model name")
    parser.add_argument("--api-key", default=None, help="openai policy: API key (default $OPENAI_API_KEY)")
    parser.add_argument("--temperature", type=float, default=1.0, help="openai policy: sampling temperature")
    parser.add_argument("--production-log", default=None, help="JSONL of production requests (messages, tool calls)")
    parser.add_argument("--probes", action="append", default=[],
                        help="extra probes MODULE:ATTR: a {name: policy} dict, a policy, or a factory (repeatable); "
                             "a policy's 'intent' is hack (default), shortcut or valid (must pass)")
    parser.add_argument("--skip-probes", default="",
                        help="comma-separated probes to waive for this task (recorded in the report)")
    parser.add_argument("--budget", type=int, default=None,
                        help="declared tool-call budget per rollout for items without 'max_tool_calls': a shortcut "
                             "rewarded past it fails")
    parser.add_argument("--samples", type=int, default=4, help="rollouts per item for the learnable check (default 4)")
    parser.add_argument("--hack-threshold", type=float, default=None,
                        help="largest share of items a probe may be rewarded on (default 0.02)")
    parser.add_argument("--hack-share", type=float, default=None,
                        help="a probe is rewarded on an item above baseline + this share of (gold - baseline) (default 0.5)")
    parser.add_argument("--write-tools", default="", help="comma-separated state-changing tools (default: declared with @tool(writes=...) or "
                             "learnt from what the gold's calls change, GET /tools 'writes')")
    parser.add_argument("--replays", type=int, default=3, help="reference replays per item (gradeable, default 3)")
    parser.add_argument("--regrades", type=int, default=2, help="re-grades per trajectory (gradeable, default 2)")
    parser.add_argument("--principles", default="gradeable,production_like,learnable,unhackable",
                        help="comma-separated subset to run")
    from rft_sdk._jobs._config import TARGETS

    parser.add_argument("--target", default="openai", choices=list(TARGETS),
                        help="hosted service to play: openai, or azure (its grader is called without headers)")
    parser.add_argument("--concurrency", type=int, default=32, help="rollouts in flight (default 32)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per tool/grader call limit, seconds")
    parser.add_argument("--retries", type=int, default=3, help="retries on 5xx/transport errors (hosted: 3)")
    from rft_sdk._cli_commands import share_arg

    parser.add_argument("--max-discard-share", type=share_arg, default=None,
                        help="exit 1 when more than this share (0-1) of the policy's rollouts is discarded "
                             "(default: 0 for the reference replay, 0.1 for a model policy)")


def _load(spec: str, what: str) -> Any:
    from rft_sdk._cli_commands import load_app

    try:
        return load_app(spec)
    except ValueError:
        raise ValueError(f"{what} {spec!r}: expected MODULE:ATTR") from None


def load_probes(specs: list[str]) -> dict[str, Any]:
    """Probes named by ``--probes MODULE:ATTR`` values, merged in order.

    Each ATTR is a ``{name: policy}`` mapping, a policy (named after ATTR), or a
    class or factory returning either (called once with no arguments). A policy
    is any object with ``async act(...)``; its optional ``intent`` says what its
    reward means (``_probes``: ``hack`` by default, ``shortcut``, ``valid``).

    Raises:
        ValueError: a spec that names nothing usable, or a policy with an unknown ``intent``.
    """
    from rft_sdk.doctor import probe_intent

    out: dict[str, Any] = {}
    for spec in specs:
        obj = _load(spec, "--probes")
        if isinstance(obj, type) or (not hasattr(obj, "act") and not isinstance(obj, dict) and callable(obj)):
            obj = obj()
        if isinstance(obj, dict):
            bad = [k for k, v in obj.items() if not hasattr(v, "act")]
            if bad:
                raise ValueError(f"--probes {spec!r}: entries {bad} are not policies (no async act method)")
            found = dict(obj)
        elif hasattr(obj, "act"):
            found = {spec.rpartition(":")[2]: obj}
        else:
            raise ValueError(f"--probes {spec!r} is neither a policy nor a {{name: policy}} dict")
        for name, probe in found.items():
            probe_intent(probe, name)  # refuses an unknown intent, naming the probe
        out.update(found)
    return out


def _policy(args: argparse.Namespace) -> Any:
    from rft_sdk.emulator import NoisyReplayPolicy, OpenAICompatiblePolicy, ReferenceReplayPolicy

    if args.policy == "reference":
        return ReferenceReplayPolicy()
    if args.policy == "noisy":
        return NoisyReplayPolicy()
    if args.policy == "openai":
        if not args.base_url or not args.model:
            raise ValueError("--policy openai needs --base-url and --model")
        return OpenAICompatiblePolicy(args.base_url, args.model, args.api_key, temperature=args.temperature,
                                      timeout_s=args.timeout)
    obj = _load(args.policy, "--policy")
    if isinstance(obj, type) or (not hasattr(obj, "act") and callable(obj)):
        obj = obj()  # a class or a factory
    if not hasattr(obj, "act"):
        raise ValueError(f"--policy {args.policy!r} is not a policy (no async act method)")
    return obj


def run(args: argparse.Namespace) -> int:
    """Run ``rft doctor``; print the tables; return the exit code (0 pass, 1 a principle fails, 2 bad input)."""
    try:
        from rich.console import Console

        from rft_sdk._validation._preflight import run_preflight
        from rft_sdk.doctor import HACK_SHARE, HACK_THRESHOLD, print_doctor, run_doctor, write_doctor_report
        from rft_sdk.doctor._common import TARGETS
        from rft_sdk.emulator import ClientSettings, DatasetError, JobConfigError, OpenAICompatiblePolicy, PolicyError
        from rft_sdk.emulator._discards import default_max_discard_share, report_discards
    except ImportError as exc:
        print(f"error: {_NEEDS_EXTRA} ({exc})", file=sys.stderr)
        return 2
    err = Console(stderr=True)
    try:
        if args.budget is not None and args.budget < 0:
            raise ValueError(f"--budget must be >= 0, got {args.budget}")
        policy = _policy(args)
        probes = load_probes(args.probes)
    except (ValueError, ImportError, AttributeError) as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        return 2
    # the doctor replays the gold (gradeable, the probes): its fields are checked before any rollout
    if (code := run_preflight(args.dataset, args.config, args.target, "rft doctor", targets=TARGETS,
                              gold=True)) is not None:
        return code  # rft validate's checks found errors: no rollout
    settings = ClientSettings(retries=args.retries, timeout_s=args.timeout)

    share = getattr(args, "max_discard_share", None)
    limit = default_max_discard_share(policy) if share is None else share

    async def go() -> Any:
        try:
            if isinstance(policy, OpenAICompatiblePolicy):
                warning = await policy.preflight(args.timeout)  # PolicyError: no rollout, exit 2
                if warning:
                    err.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
            return await run_doctor(
                args.dataset, args.config, policy=policy, production_log=args.production_log, probes=probes,
                samples=args.samples, write_tools=[t for t in args.write_tools.split(",") if t] or None,
                hack_threshold=HACK_THRESHOLD if args.hack_threshold is None else args.hack_threshold,
                hack_share=HACK_SHARE if args.hack_share is None else args.hack_share, budget=args.budget,
                skip_probes=[t.strip() for t in args.skip_probes.split(",") if t.strip()],
                replays=args.replays, regrades=args.regrades, target=args.target, settings=settings,
                principles=[p for p in args.principles.split(",") if p], max_concurrency=args.concurrency,
                max_discard_share=limit)
        finally:
            close = getattr(policy, "aclose", None)
            if close is not None:
                await close()

    try:
        report = asyncio.run(go())
    except (DatasetError, JobConfigError, ValueError, PolicyError) as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        return 2
    console = Console() if Console().is_terminal else Console(width=140)
    print_doctor(report, console)
    paths = write_doctor_report(args.out, report)
    for problem in report.meta.get("target_problems", []):
        err.print(f"warning ({args.target}): {problem}", style="yellow", markup=False, highlight=False)
    err.print(f"wrote {paths['json']}, {paths['html']}")
    digest = report.meta.get("discards")
    too_many = digest is not None and report_discards(digest, limit, "rft doctor", err)
    return 1 if too_many else int(report.exit_code)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk.doctor.cli ...``."""
    parser = argparse.ArgumentParser(prog="rft doctor", description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
