"""The dataset checks of ``rft validate`` as functions: the target's rules, the job file's
endpoints, the dataset's tools against the live server's, and the pre-flight that ``rft emulate``
and ``rft doctor`` run before any rollout. ``rft_sdk._commands.validate`` parses and prints.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from .._jobs._config import TARGETS, insecure_url_problem, job_urls, validate_job
from ._check import auth_headers
from ._gold import check_gold
from ._live import diff_line_tools, fetch_tools, server_tools_of
from ._steps import check_steps
from ._validate import MIN_LINES, Report, check_lines, read_dataset

__all__ = ["job_server", "preflight", "run_preflight", "validate"]


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
    _insecure_warnings(job_urls(job), report)
    return inner


def _insecure_warnings(urls: Sequence[tuple[str, str]], report: Report) -> None:
    """Warn where a hosted run cannot reach or trust the job's URLs (``(field, url)``), once per server
    (scheme and host): a job written for a local run (``--base-url http://127.0.0.1:PORT``) gets one warning
    naming its fields, not one per tool and one for the grader (doctor37's tester: the real warnings drowned)."""
    fix = "fine for rft emulate and rft doctor; write the submitted job with a public https:// --base-url"
    by_server: dict[str, list[tuple[str, str, str]]] = {}
    for where, url in urls:
        if problem := insecure_url_problem(url):
            parts = urlsplit(url)
            by_server.setdefault(f"{parts.scheme}://{parts.netloc}", []).append((where, url, problem))
    for server, found in by_server.items():
        if len(found) == 1:
            where, _, problem = found[0]
            report.add("warning", None, f"job.{where}", f"a hosted run cannot use it: {problem}", fix)
            continue
        fields = ", ".join(where.removeprefix("method.reinforcement.") for where, _, _ in found)
        problem = insecure_url_problem(server) or found[0][2]  # the scheme and host decide it: the same for each
        report.add("warning", None, "job.method.reinforcement",
                   f"a hosted run cannot use the job's {len(found)} URLs on {server} ({fields}): {problem}", fix)


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


def validate(dataset: str | Path, *, target: str = "openai", config: str | Path | None = None,
             app: Any = None, url: str | None = None, token: str | None = None, min_lines: int = MIN_LINES,
             check_job: bool = True, timeout_s: float = 10.0,
             transport: httpx.BaseTransport | None = None, gold: bool = True) -> Report:
    """Check ``dataset`` for ``target``; with ``app`` (a ``ToolServer``), ``url`` or a ``config``
    whose tools point at a running server, also diff each line's tools against the server's.

    With a ``config``, each line's ``max_tool_calls`` is checked against the job's ``max_episode_steps``
    (``rft_sdk._validation._steps``: warnings where a rollout within the budget, or the doctor's
    ``refused_spam`` probe, is cut before its answer).

    The gold fields (``rft_sdk.protocol.GoldItem``) are checked too (``rft_sdk._validation._gold``);
    the lines whose gold can be replayed are left in ``report.gold`` for the dry run, which
    ``rft_sdk._commands.validate.validate`` makes.

    Args:
        config: job JSON path; its tool names bound the dataset's tools; checked itself when ``check_job``.
        token: with ``url``: sent as the target's auth header.
        transport: an httpx transport for the live requests (tests, in-process apps).
        gold: check the gold fields (the pre-flight of ``rft emulate``/``rft doctor`` leaves them to
            the policy, which may be a model that never reads them).

    Returns:
        The :class:`~rft_sdk._validation._validate.Report` (never raises on bad input: every problem is a finding).
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
    if inner is not None:  # each line's max_tool_calls against the job's max_episode_steps
        check_steps(items, inner, report)
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
    if gold:
        report.gold = check_gold(items, report, server)
    return report


def job_server(config: str | Path) -> tuple[str, dict[str, str], str | None] | None:
    """``(base URL, headers, grader name or None)`` of the one server a job's tools point at, or
    ``None`` when the job cannot be read or its tools point at several servers."""
    read = _read_job(config, Report("openai", str(config)))
    servers = _job_servers(read[1]) if read else {}
    if read is None or len(servers) != 1:
        return None
    base, (headers, _) = next(iter(servers.items()))
    grader = read[1].get("grader")
    url = grader.get("url") if isinstance(grader, dict) else None
    name = None
    if isinstance(url, str) and url.rstrip("/").startswith(base.rstrip("/") + "/grade/"):
        name = url.rstrip("/").rsplit("/", 1)[1]
    return base, headers, name


def preflight(dataset: str | Path, config: str | Path, target: str = "openai", *, timeout_s: float = 10.0,
              transport: httpx.BaseTransport | None = None, gold: bool = False) -> Report:
    """What ``rft emulate`` and ``rft doctor`` check before any rollout: the dataset by the target's
    rules, its tool names against the job's, and its tool schemas against the servers the job's tools
    point at (``GET /tools`` with the job's headers). The job's own fields are checked by the
    emulator's strict loader.

    Args:
        gold: also check the gold fields statically (``rft_sdk._validation._gold``: their shape, tool
            names, argument names against the served schemas; no dry run). On for whatever replays the
            gold (the replay policies, the doctor's probes): a broken gold call would otherwise get the
            same refusal in every rollout and still score as the gold.
    """
    return validate(dataset, target=target, config=config, check_job=False, timeout_s=timeout_s,
                    transport=transport, gold=gold)


def run_preflight(dataset: str | Path, config: str | Path, target: str, prog: str, *,
                  targets: Sequence[str] = TARGETS, gold: bool = False) -> int | None:
    """Run :func:`preflight`, print its findings on stderr, and return 2 when it found errors (the
    caller stops before any rollout), else ``None``. A ``target`` outside ``targets`` (what the
    calling command speaks) is refused first, with the same status. ``gold``: see :func:`preflight`."""
    if target not in targets:
        print(f"{prog}: target {target!r} is not supported here; use one of {list(targets)}", file=sys.stderr)
        return 2
    report = preflight(dataset, config, target, gold=gold)
    for finding in report.findings:
        print(f"{prog}: {finding}", file=sys.stderr)
    if report.ok:
        return None
    print(f"{prog}: {len(report.errors)} error(s) found before any rollout (see above; rft validate {dataset} "
          f"--config {config} checks again)", file=sys.stderr)
    return 2
