"""A tiny key-value task served by real ToolServers: one honest grader and deliberately broken ones."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from rft_sdk import Grade, GradingContext, Rollout, ToolServer
from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

BASE = {f"k{i}": f"old{i}" for i in range(100)}
SYSTEM = "You manage a key-value store. Use the tools, then tell the user what you changed and the old value."


def make_server(grader_kind: str = "honest", *, tokens: list[str] | None = None,
                empty_credit: float = 0.0) -> ToolServer:
    """``honest``: end state + answer + call budget; ``no_budget``: the same without the budget;
    ``injectable``: also 1.0 for "score: 1" in the answer; ``random``: the honest score times a random
    factor; ``lenient``: 1.0 whatever happened. ``tokens``: bearer tokens the server requires;
    ``empty_credit``: what an empty answer with no write earns (partial credit for nothing)."""
    server = ToolServer(auth_tokens=tokens) if tokens else ToolServer(auth_env_var=None)

    @server.tool
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Read a key.

        Args:
            key: the key, e.g. "k1".
        """
        return rollout.state.get("kv", {}).get(key, BASE.get(key, "missing"))

    @server.tool
    def set_value(key: str, value: str, *, rollout: Rollout) -> str:
        """Write a key.

        Args:
            key: the key, e.g. "k1".
            value: the new value.
        """
        rollout.state.setdefault("kv", {})[key] = value
        return "ok"

    @server.grader
    def grade(ctx: GradingContext) -> Grade | float:
        item = ctx.item
        if grader_kind == "lenient":
            return 1.0
        if grader_kind == "injectable" and "score: 1" in ctx.output_text.lower():
            return 1.0
        if not ctx.output_text.strip() and not ctx.count():
            return empty_credit
        if grader_kind != "no_budget" and ctx.count() > 2 * len(item["actions"]) + 5:
            return Grade(0.0, reasons=["over the call budget"])
        if ctx.state.get("kv", {}) != {item["key"]: item["value"]}:  # the whole end state: no extra writes
            return Grade(0.0, reasons=["wrong end state"])
        score = 0.5 + 0.5 * (item["old"] in ctx.output_text)
        if grader_kind == "random":
            score *= random.uniform(0.5, 1.0)
        return score

    return server


def make_items(server: ToolServer, n: int = 10, *, start: int = 10, zero_variance: bool = False) -> list[dict[str, Any]]:
    """``n`` dataset lines with gold ``actions`` and ``reference_answer``; ``alt`` is the noisy policy's
    wrong value (equal to the right one when ``zero_variance``)."""
    tools = server.dataset_tools()
    items = []
    for i in range(start, start + n):
        key, value = f"k{i}", f"new{i}"
        items.append({
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"Please set {key} to {value} and tell me its old value."}],
            "tools": tools, "key": key, "value": value, "old": BASE[key],
            "alt": value if zero_variance else f"wrong{i}",
            "actions": [{"name": "lookup", "arguments": {"key": key}},
                        {"name": "set_value", "arguments": {"key": key, "value": value}}],
            "reference_answer": f"I set {key} to {value}; its old value was {BASE[key]}.",
        })
    return items


def job_for(server: ToolServer, base_url: str, **kwargs: Any) -> dict[str, Any]:
    """The hosted job for ``server`` at ``base_url`` (fast grader rate limit for tests)."""
    return server.job_config(base_url, rate_limit=1000, max_episode_steps=4, **kwargs)


class NoisyPolicy:
    """Sample k of an item writes the right value when k is even, ``item["alt"]`` when odd; then the gold answer."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()
        self._plan: dict[str, bool] = {}

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> PolicyStep:
        if trace_id not in self._plan:
            self._plan[trace_id] = self._seen[item["key"]] % 2 == 0
            self._seen[item["key"]] += 1
        turn = turns_taken(messages, item)
        if turn == 0:
            return PolicyStep(tool_calls=[make_tool_call("lookup", {"key": item["key"]})])
        if turn == 1:
            value = item["value"] if self._plan[trace_id] else item["alt"]
            return PolicyStep(tool_calls=[make_tool_call("set_value", {"key": item["key"], "value": value})])
        return PolicyStep(content=item["reference_answer"])


def production_log(n: int = 30, *, start: int = 50, shifted: bool = False) -> list[dict[str, Any]]:
    """Production requests: like the dataset (``shifted=False``), or long Cyrillic prompts that only read."""
    rng = random.Random(0)
    lines = []
    for i in range(start, start + n):
        if shifted:
            text = " ".join(rng.choice(["пожалуйста", "покажите", "значение", "ключа", "срочно", "спасибо"])
                            for _ in range(60 + i % 40))
            calls = [{"name": "lookup", "arguments": {"key": f"k{j}"}} for j in range(6)]
        else:
            text = f"Please set k{i} to new{i} and tell me its old value."
            calls = [{"name": "lookup", "arguments": {"key": f"k{i}"}},
                     {"name": "set_value", "arguments": {"key": f"k{i}", "value": f"new{i}"}}]
        lines.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
                      "tool_calls": calls})
    return lines


def _user_probe_answer(item: dict[str, Any]) -> str:
    return "All set. score: 1"


def user_probes() -> dict[str, Any]:
    """A ``--probes`` factory: one extra probe that claims success and injects a score."""
    from rft_sdk.doctor import TextProbe

    return {"claims_score": TextProbe(_user_probe_answer)}


def fast_probes() -> dict[str, Any]:
    """The built-in suite with ``tool_spam`` at 5 copies (10 calls: still over the honest budget of 9)."""
    from rft_sdk.doctor import default_probes

    return default_probes(["set_value"], copies=5)


class DirectWrite:
    """A valid solution by another path: the write alone, no lookup, then the gold answer (``intent`` valid)."""

    intent = "valid"

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> PolicyStep:
        if turns_taken(messages, item) == 0:
            return PolicyStep(tool_calls=[make_tool_call("set_value", {"key": item["key"], "value": item["value"]})])
        return PolicyStep(content=item["reference_answer"])


def valid_probes() -> dict[str, Any]:
    """A ``--probes`` factory with one must-pass probe."""
    return {"direct_write": DirectWrite()}


class Sneaky:
    """A plain policy with no intent (a probe pack's shape): the gold answer, no calls."""

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> PolicyStep:
        return PolicyStep(content=item["reference_answer"])


BAD_INTENT = type("BadIntent", (Sneaky,), {"intent": "maybe"})()


def twin_verdicts(make_server: Any, make_items: Any, job_for: Any, twins: Any, *,
                  gradeable: bool = False, probes: Any = None, hackable_probes: Any = None) -> dict[str, Any]:
    """Run the doctor once per twin against one real server (``make_server()``, served on 127.0.0.1):
    ``{grader: unhackable evidence}``, or with ``gradeable`` ``{grader: (gradeable passed, unhackable
    evidence)}`` (``check_gradeable`` with one replay and one regrade). Each twin has ``task`` and
    ``grader``, or ``twins`` maps each grader to a tuple whose first element is its task; no write tools
    are given (declared by the server or learnt). ``probes``: a callable returning the probes to run for
    each twin (one module's, to keep a file fast), default the built-in suite; ``hackable_probes``: the names
    of the built-in probes the hackable twins run, the others skipped (:func:`reduced_probes`; each honest twin
    still runs the whole suite, where a false alarm would show)."""
    import asyncio

    from rft_sdk.doctor import check_gradeable, check_unhackable, default_probes
    from rft_sdk.testing import run_server

    server = make_server()
    out: dict[str, Any] = {}
    with run_server(server) as url:
        async def run_all() -> None:
            triples = ([(grader, twin[0], twin[1]) for grader, twin in twins.items()] if isinstance(twins, Mapping)
                       else [(twin.grader, twin.task, twin.honest) for twin in twins])
            for grader, task, honest in triples:
                items, job = make_items(server, task), job_for(server, url, grader)
                skip = () if honest or hackable_probes is None else sorted(set(default_probes()) - hackable_probes)
                evidence = (await check_unhackable(items, job, probes() if probes else None, skip=skip)).evidence
                if gradeable:
                    passed = (await check_gradeable(items, job, replays=1, regrades=1)).passed
                    out[grader] = (passed, evidence)
                else:
                    out[grader] = evidence
        asyncio.run(run_all())
    return out


#: Probes every hackable twin also runs (``reduced_probes``): a twin caught only by these is no finding.
BASELINES = ("cross_item_replay", "wrong_answer")


def reduced_probes(*names: str) -> frozenset[str]:
    """The probes a hackable twin runs (``twin_verdicts(hackable_probes=...)``): :data:`BASELINES`, every
    control (``control = True``: the probes judged against one need it run first) and ``names`` (the probes a
    module's hackable twins must fail through, and those its tests read); the rest of the built-in suite is
    skipped (``check_unhackable(skip=...)``, so the suite is still built with the run's write tools). The
    honest twins keep the whole suite: a false alarm shows there."""
    from rft_sdk.doctor import default_probes

    suite = default_probes()
    unknown = set(names) - set(suite)
    assert not unknown, f"no such probe: {sorted(unknown)}"
    return frozenset(n for n, p in suite.items() if n in {*BASELINES, *names} or getattr(p, "control", False))


def twin_probes(twins: Any, *extra: str) -> frozenset[str]:
    """:func:`reduced_probes` with the probes the hackable twins of ``twins`` must fail through (a mapping
    ``grader -> (task, honest, probe, ...)`` or :class:`Twin` s) and ``extra`` (probes the module's tests read
    on a hackable twin)."""
    named = ([t[2] for t in twins.values() if not t[1]] if isinstance(twins, Mapping)
             else [t.probe for t in twins if not t.honest])
    return reduced_probes(*dict.fromkeys([*named, *extra]))


def assert_quiet(evidence: Mapping[str, Any]) -> None:
    """An honest grader's unhackable evidence: no probe failed and none warned (the failures' mean scores
    and what they played in the message)."""
    assert evidence["failed_probes"] == [] and evidence["warned_probes"] == [], {
        p: (evidence["probes"][p]["mean_score"], evidence["probes"][p].get("played"))
        for p in evidence["failed_probes"]}


def assert_caught(verdicts: Mapping[str, Any], twins: Mapping[str, tuple[str, bool, str]], name: str) -> None:
    """Hackable twin ``name`` of ``twins`` (``grader -> (task, honest, probe)``) failed through its probe, and the
    honest grader of its task played that probe and passed it (detection through a discriminating probe)."""
    task, _, probe = twins[name]
    assert probe in verdicts[name]["failed_probes"], (name, verdicts[name]["failed_probes"])
    honest = next(g for g, t in twins.items() if t[0] == task and t[1])
    row = verdicts[honest]["probes"][probe]
    assert row["verdict"] == "pass" and row["rollouts"] > 0, (honest, probe, row["skip_reasons"])


def gold_replays(twins: Mapping[str, tuple[str, bool, str]], make_server: Any, make_items: Any,
                 job_for: Any) -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item of each grader of ``twins``, against
    one real server (``rft_sdk.testing.run_server``); the base of the round-66 tests' ``replays`` fixtures."""
    import asyncio

    from rft_sdk.doctor._common import load_inputs
    from rft_sdk.doctor._unhackable import gold_replay
    from rft_sdk.testing import run_server

    server = make_server()
    out: dict[str, Any] = {}
    with run_server(server) as url:
        async def run_all() -> None:
            for grader, (task, _, _) in twins.items():
                items, job = load_inputs(make_items(server, task), job_for(server, url, grader))
                out[grader] = (items, await gold_replay(items, job, settings=None, max_concurrency=4))
        asyncio.run(run_all())
    return out


def twin_tests(twins: Mapping[str, tuple[str, bool, str]], make_server: Any, make_items: Any, job_for: Any,
               *extra: str) -> tuple[Any, Any, Any]:
    """The three pieces every twin module repeats, for ``twins`` (``grader -> (task, honest, probe)``): the
    module-scoped ``verdicts`` fixture (:func:`twin_verdicts`, the hackable twins on :func:`twin_probes` with
    ``extra``), a test that each honest grader passes every probe without a warning (:func:`assert_quiet`) and one
    that each hackable twin fails through its probe, which its honest twin played and passed (:func:`assert_caught`).
    Assign them to module names: ``verdicts, test_honest..., test_each_hackable... = twin_tests(...)``."""
    @pytest.fixture(scope="module")
    def verdicts() -> dict[str, Any]:
        return twin_verdicts(make_server, make_items, job_for, twins, hackable_probes=twin_probes(twins, *extra))

    @pytest.mark.parametrize("name", [g for g, t in twins.items() if t[1]])
    def honest(verdicts: Mapping[str, Any], name: str) -> None:
        assert_quiet(verdicts[name])

    @pytest.mark.parametrize("name", [g for g, t in twins.items() if not t[1]])
    def hackable(verdicts: Mapping[str, Any], name: str) -> None:
        assert_caught(verdicts, twins, name)

    return verdicts, honest, hackable


@dataclass(frozen=True)
class Twin:
    """One grader of a twin suite: its route, its task, honest or not, its honest twin and the probe that
    must catch its flaw (``""`` for an honest grader)."""

    grader: str
    task: str
    honest: bool
    twin: str = ""
    probe: str = ""


def twin_item(server: ToolServer, system: str, user: str, tools: tuple[str, ...], actions: list[dict[str, Any]],
              answer: str, **fields: Any) -> dict[str, Any]:
    """One single-turn item of a twin suite: a system and a user message, the schemas of ``tools``, the gold
    ``actions`` and ``reference_answer``, a budget of four calls over the gold's, and ``fields``."""
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "tools": server.dataset_tools(names=tools), "max_tool_calls": len(actions) + 4, "actions": actions,
            "reference_answer": answer, **fields}


def twin_job(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader`` at ``base_url`` for a twin suite (fast grader rate limit, 16 steps)."""
    return server.job_config(base_url, grader=grader, rate_limit=1000, max_episode_steps=16)


def budget_grader(server: Any) -> Any:
    """A decorator registering ``fn`` on ``server`` under its name without ``grade_``; past the item's declared
    budget (``max_tool_calls``) the grader scores 0 (the honest twins enforce it, as gold-items.md asks)."""

    def grader(fn: Any) -> Any:
        def within_budget(ctx: GradingContext) -> float:
            return 0.0 if ctx.count() > ctx.item["max_tool_calls"] else fn(ctx)
        within_budget.__name__ = within_budget.__qualname__ = fn.__name__
        within_budget.__doc__ = fn.__doc__
        return server.grader(name=fn.__name__.removeprefix("grade_"))(within_budget)
    return grader
