"""``rft validate``: a dataset checked by the hosted rules of one target, and against the live server.

Usage::

    rft validate train.jsonl --target openai                    # the file alone
    rft validate train.jsonl --app examples.retail.app:server   # + the ToolServer's tools, in process
    rft validate train.jsonl --url https://tools.example.com --token-env RFT_TOKEN   # + live GET /tools
    rft validate train.jsonl --config job.json --json           # + the job (its tools' URLs and headers)
    rft validate train.jsonl --app app:server --strict          # a gold call refused by its tool is an error

Every finding names the line, the field and the fix (``rft_sdk._validate``,
``rft_sdk._validate_live``). The gold fields (``rft_sdk.protocol.GoldItem``) are
checked on every line and, with a server, every gold trajectory is replayed on
fresh rollouts (``rft_sdk._validate_gold``; ``--no-replay`` skips it). Exit status: 0 no errors (warnings allowed), 1
errors, 2 invalid options. ``--json`` prints one object (``Report.to_dict``)
for CI. ``rft emulate`` and ``rft doctor`` run the same checks first
(:func:`run_preflight`) and stop before any rollout on an error. Declared as
the ``validate`` entry point of the ``rft_sdk.commands`` group.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from ._check import auth_headers
from ._cli_commands import env_secret, standalone_main
from ._job_config import TARGETS, insecure_urls, validate_job
from ._validate import MIN_LINES, Report, check_lines, read_dataset
from ._validate_gold import check_gold, replay_gold
from ._validate_live import diff_line_tools, fetch_tools, server_tools_of
from .surfaces._hosted import HostedClient

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
    parser.add_argument("--strict", action="store_true",
                        help="dry run: a gold call the tool refuses (400 tool_error) is an error unless the gold "
                             "marks it \"expect_error\": true (default: a warning)")
    parser.add_argument("--no-replay", action="store_true",
                        help="do not replay the gold trajectories against the server (the dry run: each gold call "
                             "must answer 2xx and the gold must earn the full score; docs/gold-items.md)")


def _base_url(server_url: str, name: str) -> str:
    """The server's base URL from a job tool's URL (``.../tools/{name}`` or the shared ``.../tools``)."""
    url = server_url.rstrip("/")
    for suffix in (f"/tools/{name}", "/tools"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url.rsplit("/", 1)[0]


def _read_job(path: str | Path, report: Report) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(the job as written, its reinforcement object)``, or ``None`` (a finding says why)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        report.add("error", None, "job", f"cannot read {str(path)!r}: {exc}", "check the --config path")
        return None
    except json.JSONDecodeError as exc:
        report.add("error", None, "job", f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}",
                   "write the job as one JSON object (rft job writes it)")
        return None
    inner = data.get("method", {}).get("reinforcement") if isinstance(data, dict) and isinstance(
        data.get("method"), dict) else data
    if not isinstance(data, dict) or not isinstance(inner, dict):
        report.add("error", None, "job", "must be a JSON object: the hosted job or its reinforcement object",
                   "write it with rft job / ToolServer.job_config")
        return None
    return data, inner


def _check_job(path: str | Path, report: Report) -> dict[str, Any] | None:
    """The job's ``reinforcement`` object after the hosted checks of ``report.target`` (findings added)."""
    read = _read_job(path, report)
    if read is None:
        return None
    data, inner = read
    full = data if "method" in data else {"method": {"type": "reinforcement", "reinforcement": data}}
    try:
        job = validate_job(full, report.target, submittable="training_file" in full, allow_insecure_url=True)
    except ValueError as exc:
        for part in re.split(r"; (?=[\w.]+: )", str(exc)):
            where, _, message = part.partition(": ")
            report.add("error", None, f"job.{where}" if message else "job", message or where,
                       "see docs/job-config.md for each field's allowed values")
        return inner
    for where, problem in insecure_urls(job):
        report.add("warning", None, f"job.{where}", f"a hosted run cannot use it: {problem}",
                   "fine for rft emulate; write the submitted job with a public https:// --base-url")
    return inner


def _job_servers(inner: dict[str, Any]) -> dict[str, tuple[dict[str, str], list[str]]]:
    """``{base_url: (headers, tool names)}`` of the job's tools."""
    out: dict[str, tuple[dict[str, str], list[str]]] = {}
    for tool in inner.get("tools") or []:
        if not isinstance(tool, dict) or not isinstance(tool.get("server_url"), str):
            continue
        name = str(tool.get("name", ""))
        raw = tool.get("headers")
        headers = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        base = _base_url(tool["server_url"], name)
        out.setdefault(base, (headers, []))[1].append(name)
    return out


def _live_from_job(inner: dict[str, Any], report: Report, timeout_s: float,
                   transport: httpx.BaseTransport | None) -> dict[str, dict[str, Any]] | None:
    served: dict[str, dict[str, Any]] = {}
    checked = False
    for base, (headers, names) in _job_servers(inner).items():
        tools, why = fetch_tools(base, headers, timeout_s=timeout_s, transport=transport)
        if tools is None:
            kind = (why or "").split(":", 1)[0]
            if kind == "unreachable":
                report.add("error", None, "job.tools", f"{why}: every tool call of the run would fail",
                           "start the server (rft serve MODULE:ATTR) or fix the job's server_url")
            elif kind == "unauthorized":
                report.add("error", None, "job.tools", f"{why}: the job's tool headers are refused, so every tool "
                           "call would answer 401", "put a token the server accepts in the job (rft job --token-env)")
            else:
                report.add("warning", None, "job.tools", f"{why}: the dataset's tool schemas were not compared "
                           "with the server's", "serve the tools with rft_sdk (GET /tools) to have them compared")
            continue
        checked = True
        report.server = base if report.server is None else f"{report.server}, {base}"
        served.update({n: tools[n] for n in names if n in tools})
        for name in names:
            if name not in tools:
                report.add("error", None, "job.tools", f"the job names tool {name!r} but {base} does not serve it "
                           f"(it serves {sorted(tools)}): its calls answer 404", "fix the job's tool names")
    return served if checked else None


def _grader_of(inner: dict[str, Any] | None, base: str) -> str | None:
    """The grader name of a job whose grader URL is ``{base}/grade/{name}`` (``None``: the default one)."""
    grader = inner.get("grader") if isinstance(inner, dict) else None
    url = grader.get("url") if isinstance(grader, dict) else None
    if isinstance(url, str) and url.rstrip("/").startswith(base.rstrip("/") + "/grade/"):
        return url.rstrip("/").rsplit("/", 1)[1]
    return None


def _replay_client(app: Any, url: str | None, token: str | None, target: str, inner: dict[str, Any] | None,
                   timeout_s: float) -> tuple[HostedClient, str | None] | None:
    """The client the gold dry run plays through, and the grader name; ``None`` when there is no server."""
    if app is not None:
        # in process, as from loopback (the server's exposure warning is about sockets, not this)
        local = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=timeout_s)
        return HostedClient(local), None
    if url is not None:
        return HostedClient.over_http(url, headers=auth_headers(token, target), timeout_s=timeout_s), None
    servers = _job_servers(inner) if inner is not None else {}
    if len(servers) != 1:
        return None
    base, (headers, _) = next(iter(servers.items()))
    return HostedClient.over_http(base, headers=headers, timeout_s=timeout_s), _grader_of(inner, base)


def _replay(items: list[Any], indices: list[int], report: Report, client: HostedClient, grader: str | None,
            strict: bool) -> None:
    async def go() -> None:
        async with client:
            await replay_gold(items, indices, client, report, grader=grader, strict=strict)

    asyncio.run(go())


def validate(dataset: str | Path, *, target: str = "openai", config: str | Path | None = None,
             app: Any = None, url: str | None = None, token: str | None = None, min_lines: int = MIN_LINES,
             check_job: bool = True, timeout_s: float = 10.0,
             transport: httpx.BaseTransport | None = None, gold: bool = True, replay: bool = True,
             strict: bool = False) -> Report:
    """Check ``dataset`` for ``target``; with ``app`` (a ``ToolServer``), ``url`` or a ``config``
    whose tools point at a running server, also diff each line's tools against the server's.

    The gold fields (``rft_sdk.protocol.GoldItem``) are checked on every line; with a server
    (``app``, ``url``, or a ``config`` whose tools share one base URL) and ``replay``, every gold
    trajectory is also played on fresh rollouts (``rft_sdk._validate_gold``: each call must
    answer 2xx unless marked ``expect_error``, and the gold must earn the full score).

    Args:
        config: job JSON path; its tool names bound the dataset's tools; checked itself when ``check_job``.
        token: with ``url``: sent as the target's auth header.
        transport: an httpx transport for the live requests (tests, in-process apps); the dry run is
            not made through it (it is synchronous): pass ``app`` to replay in process.
        gold: check the gold fields (``rft emulate``/``rft doctor``'s pre-flight leaves them to the policy,
            which may be a model that never reads them).
        replay: play the gold trajectories against the server (the dry run; needs ``gold``).
        strict: in the dry run, a gold call the tool refuses (400 ``tool_error``) without
            ``"expect_error": true`` is an error (default: a warning).

    Returns:
        The :class:`~rft_sdk._validate.Report` (never raises on bad input: every problem is a finding).
    """
    report = Report(target, str(dataset))
    inner = None
    if config is not None:
        if check_job:
            inner = _check_job(config, report)
        else:
            read = _read_job(config, report)
            inner = read[1] if read else None
    job_tools = None
    if inner is not None and isinstance(inner.get("tools"), list):
        job_tools = [t["name"] for t in inner["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)]
    items = read_dataset(dataset, report)
    check_lines(items, report, job_tools=job_tools, min_lines=min_lines)
    server: dict[str, dict[str, Any]] | None = None
    if app is not None:
        server, report.server = server_tools_of(app), f"{type(app).__name__} (in process)"
    elif url is not None:
        server, why = fetch_tools(url, auth_headers(token, target), timeout_s=timeout_s, transport=transport)
        report.server = url
        if server is None:
            report.add("error", None, "--url", why or "no tools", "check the URL and --token-env")
    elif inner is not None:
        server = _live_from_job(inner, report, timeout_s, transport)
    if server is not None:
        diff_line_tools([i if isinstance(i, dict) else None for i in items], server, report)
    replayable = check_gold(items, report, server) if gold else []
    if replay and server is not None and replayable and transport is None:
        found = _replay_client(app, url, token, target, inner, timeout_s)
        if found is not None:
            _replay(items, replayable, report, *found, strict)
            report.replayed = len(replayable)
    return report


def preflight(dataset: str | Path, config: str | Path, target: str = "openai", *, timeout_s: float = 10.0,
              transport: httpx.BaseTransport | None = None) -> Report:
    """What ``rft emulate`` and ``rft doctor`` check before any rollout: the dataset by the target's
    rules, its tool names against the job's, and its tool schemas against the servers the job's tools
    point at (``GET /tools`` with the job's headers). The job's own fields are checked by the
    emulator's strict loader."""
    return validate(dataset, target=target, config=config, check_job=False, timeout_s=timeout_s,
                    transport=transport, gold=False, replay=False)


def run_preflight(dataset: str | Path, config: str | Path, target: str, prog: str, *,
                  targets: Sequence[str] = TARGETS) -> int | None:
    """Run :func:`preflight`, print its findings on stderr, and return 2 when it found errors (the
    caller stops before any rollout), else ``None``. A ``target`` outside ``targets`` (what the
    calling command speaks) is refused first, with the same status."""
    if target not in targets:
        print(f"{prog}: target {target!r} is not supported here; use one of {list(targets)}", file=sys.stderr)
        return 2
    report = preflight(dataset, config, target)
    for finding in report.findings:
        print(f"{prog}: {finding}", file=sys.stderr)
    if report.ok:
        return None
    print(f"{prog}: {len(report.errors)} error(s) found before any rollout (see above; rft validate {dataset} "
          f"--config {config} checks again)", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``rft validate``; print the findings; return the exit status (0 ok, 1 errors, 2 bad options)."""
    app = None
    if args.app:
        from .cli import load_app

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
                      min_lines=args.min_lines, timeout_s=args.timeout, replay=not args.no_replay,
                      strict=args.strict)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.render())
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._validate_cli DATASET ...``."""
    return standalone_main("rft validate", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
