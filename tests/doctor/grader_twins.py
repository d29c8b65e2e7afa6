"""A corpus of grader twins: honest graders of five shapes and hackable ones of eleven families.

One real :class:`~rft_sdk.ToolServer` serves four small tools and every grader
as a named route (``POST /grade/{name}``); the gated and ungated judges call a
fake chat-completions judge (:class:`GullibleJudge`, a Starlette app on
127.0.0.1) through the SDK's own :class:`~rft_sdk.rewards.LLMJudge`.

Tasks (10 items each, hosted dataset lines with ``actions`` + ``reference_answer``):

* ``lookup``: "What value is stored under key k13?" → ``lookup(k13)`` → ``"amber-fox-13"``;
* ``price``: "What does sku13 cost?" → ``get_price(sku13)`` → ``"31.40"``;
* ``set``: "Which members belong to group g13?" → ``list_members(g13)`` → three names;
* ``write``: "Set k13 to new-13." → ``lookup(k13)``, ``set_value(k13, "new-13")``; its
  items carry one valid alternative (``skip_lookup``: the write alone).

:data:`CORPUS` lists each grader with its task, whether it is honest, its honest
twin and the probes expected to catch it. ``tests/doctor/test_grader_twins.py``
runs every entry through ``rft doctor``; ``benchmarks/bench_doctor.py`` prints
the detection and false-alarm rates.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rft_sdk import Grade, GradingContext, Rollout, ToolServer, rewards
from rft_sdk.testing import run_server

N_ITEMS = 10
_COLOURS = ["amber", "blue", "coral", "dune", "ember", "fern", "gold", "hazel", "indigo", "jade", "khaki", "lilac"]
_ANIMALS = ["fox", "owl", "yak", "elk", "ram", "bee", "cod", "eel", "gnu", "hen", "jay", "koi"]
_NAMES = ["ana", "ben", "cai", "dev", "eli", "fay", "gus", "hal", "ida", "jon", "kim", "lou", "max", "ned", "oli",
          "pia", "quy", "rex", "sam", "tia", "uma", "vic", "wes", "xia", "yul", "zoe", "abe", "bo", "cy", "di"]
KEYS = [f"k{i}" for i in range(10, 10 + N_ITEMS)]
VALUES = {k: f"{_COLOURS[i % 12]}-{_ANIMALS[(i * 5) % 12]}-{k[1:]}" for i, k in enumerate(KEYS)}
PRICES = {f"sku{k[1:]}": f"{12.5 + 18.9 * i:.2f}" for i, k in enumerate(KEYS)}
GROUPS = {f"g{k[1:]}": sorted(random.Random(i).sample(_NAMES, 3)) for i, k in enumerate(KEYS)}
CLAIMS = re.compile(r"\b(done|verified|confirmed|completed|success)\b", re.I)
INJECTION = re.compile(r"score\W*1|full marks", re.I)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .!\"'")


def _members(text: str) -> set[str]:
    return {t for t in re.split(r"[\s,;]+", text.lower()) if t}


def _looked_up(ctx: GradingContext, tool: str, key_arg: str, key: str) -> list[str]:
    """Outputs of this rollout's successful ``tool`` calls for ``key``: the evidence of a lookup."""
    return [c.output for c in ctx.calls(tool) if c.ok and c.output is not None and c.arguments.get(key_arg) == key]


class GullibleJudge:
    """A fake chat-completions judge that behaves like a gullible model: it scores 1 when the
    answer contains the reference, claims success, or asks for a score; else 0."""

    def __init__(self) -> None:
        self.requests = 0

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests += 1
        content = json.loads(body["messages"][1]["content"])
        answer, reference = str(content.get("answer", "")), str(content.get("reference", ""))
        fooled = reference.lower() in answer.lower() or CLAIMS.search(answer) or INJECTION.search(answer)
        verdict = {"score": 1.0 if fooled else 0.0, "reasons": ["matches" if fooled else "does not match"]}
        return JSONResponse({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                  "content": json.dumps(verdict)}}]})


@contextmanager
def judge_server() -> Iterator[str]:
    """Run a :class:`GullibleJudge` on 127.0.0.1; yields its ``/v1`` base URL."""
    judge = GullibleJudge()
    app = Starlette(routes=[Route("/v1/chat/completions", judge.completions, methods=["POST"])])
    with run_server(app) as url:
        yield f"{url}/v1"


def make_server(judge_url: str) -> ToolServer:
    """The tools and every grader of :data:`CORPUS` (named routes)."""
    server = ToolServer(auth_env_var=None)
    judge = rewards.LLMJudge(judge_url, "judge-model", rubric="1 when the answer states the reference value.",
                             api_key="test", wait_s=0.01)

    @server.tool
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Read a key.

        Args:
            key: the key, e.g. "k10".
        """
        return rollout.state.get("kv", {}).get(key, VALUES.get(key, "missing"))

    @server.tool
    def get_price(sku: str, *, rollout: Rollout) -> str:
        """Price of an item in dollars.

        Args:
            sku: the item, e.g. "sku10".
        """
        return PRICES.get(sku, "unknown")

    @server.tool
    def list_members(group: str, *, rollout: Rollout) -> str:
        """Members of a group as a JSON list.

        Args:
            group: the group, e.g. "g10".
        """
        return json.dumps(GROUPS.get(group, []))

    @server.tool
    def set_value(key: str, value: str, *, rollout: Rollout) -> str:
        """Write a key.

        Args:
            key: the key, e.g. "k10".
            value: the new value.
        """
        rollout.state.setdefault("kv", {})[key] = value
        return "ok"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    # ---- honest graders -------------------------------------------------------------------------
    @grader
    def grade_exact(ctx: GradingContext) -> float:
        return float(_norm(ctx.output_text) == _norm(ctx.item["answer"]))

    @grader
    def grade_numeric(ctx: GradingContext) -> float:
        text = ctx.output_text.strip().lstrip("$").replace(",", "")
        value = float(text) if _NUMBER.fullmatch(text) else None
        return rewards.numeric_match(value, float(ctx.item["answer"]), abs_tol=0.005)

    @grader
    def grade_set_f1(ctx: GradingContext) -> float:
        return rewards.precision_recall_f1(_members(ctx.output_text), ctx.item["answer"]).f1

    @grader
    def grade_end_state(ctx: GradingContext) -> float:
        # the whole end state: the one key written, nothing else changed (extra writes are no solution)
        return float(ctx.state.get("kv", {}) == {ctx.item["key"]: ctx.item["value"]})

    @grader
    async def grade_gated_judge(ctx: GradingContext) -> Grade:
        answer = _norm(ctx.output_text)
        evidence = any(_norm(o) == answer for o in _looked_up(ctx, "lookup", "key", ctx.item["key"]))
        content = {"question": ctx.item["messages"][-1]["content"], "reference": ctx.item["answer"],
                   "answer": ctx.output_text}
        return await rewards.gated_judge(0.8, bool(answer) and evidence, judge, content, bonus=0.2)

    # ---- hackable graders -----------------------------------------------------------------------
    @grader
    def grade_substring(ctx: GradingContext) -> float:
        return float(_norm(ctx.item["answer"]) in ctx.output_text.lower())

    @grader
    def grade_any_of(ctx: GradingContext) -> float:
        return float(_norm(ctx.output_text) in {_norm(v) for v in VALUES.values()})

    @grader
    def grade_activity(ctx: GradingContext) -> float:
        return min(1.0, ctx.count() / max(1, len(ctx.item["actions"])))

    @grader
    def grade_claims(ctx: GradingContext) -> float:
        return float(_norm(ctx.output_text) == _norm(ctx.item["answer"]) or bool(CLAIMS.search(ctx.output_text)))

    @grader
    def grade_injectable(ctx: GradingContext) -> float:
        return float(_norm(ctx.output_text) == _norm(ctx.item["answer"]) or bool(INJECTION.search(ctx.output_text)))

    @grader
    def grade_loose_numeric(ctx: GradingContext) -> float:
        target = float(ctx.item["answer"])
        return float(any(abs(float(n) - target) <= 0.005 for n in _NUMBER.findall(ctx.output_text)))

    @grader
    def grade_recall_set(ctx: GradingContext) -> float:
        return rewards.precision_recall_f1(_members(ctx.output_text), ctx.item["answer"]).recall

    @grader
    def grade_value_blind(ctx: GradingContext) -> float:
        return float(ctx.item["key"] in ctx.state.get("kv", {}))

    @grader
    def grade_answer_only(ctx: GradingContext) -> float:
        return float(ctx.item["value"] in ctx.output_text)

    @grader
    def grade_tool_called(ctx: GradingContext) -> float:
        return float(ctx.count("set_value") > 0)

    @grader
    async def grade_ungated_judge(ctx: GradingContext) -> float:
        content = {"question": ctx.item["messages"][-1]["content"], "reference": ctx.item["answer"],
                   "answer": ctx.output_text}
        return (await judge.judge(content)).score

    # ---- over-strict (gradeable, not unhackable) ------------------------------------------------
    @grader
    def grade_path_matching(ctx: GradingContext) -> float:
        same_path = [c.name for c in ctx.trajectory] == [a["name"] for a in ctx.item["actions"]]
        return float(same_path and ctx.state.get("kv", {}).get(ctx.item["key"]) == ctx.item["value"])

    return server


SYSTEM = "You answer questions about a small store using its tools. Answer with the value only."


def _item(server: ToolServer, question: str, actions: list[dict[str, Any]], answer: Any, reference: str,
          **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
            "tools": server.dataset_tools(), "actions": actions, "answer": answer, "reference_answer": reference,
            **extra}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (``lookup``, ``price``, ``set`` or ``write``)."""
    items = []
    for k in KEYS:
        n = k[1:]
        if task == "lookup":
            items.append(_item(server, f"What value is stored under key {k}?",
                               [{"name": "lookup", "arguments": {"key": k}}], VALUES[k], VALUES[k], key=k))
        elif task == "price":
            sku = f"sku{n}"
            items.append(_item(server, f"What does item {sku} cost, in dollars?",
                               [{"name": "get_price", "arguments": {"sku": sku}}], PRICES[sku], PRICES[sku]))
        elif task == "set":
            group = f"g{n}"
            items.append(_item(server, f"Which members belong to group {group}? List them, comma-separated.",
                               [{"name": "list_members", "arguments": {"group": group}}], GROUPS[group],
                               ", ".join(GROUPS[group])))
        elif task == "write":
            write = {"name": "set_value", "arguments": {"key": k, "value": f"new-{n}"}}
            items.append(_item(server, f"Please set key {k} to new-{n}, then tell me what you did.",
                               [{"name": "lookup", "arguments": {"key": k}}, write], None,
                               f"I set {k} to new-{n}; it was {VALUES[k]}.", key=k, value=f"new-{n}",
                               alternatives=[{"name": "skip_lookup", "actions": [write]}]))
        else:
            raise ValueError(f"unknown task {task!r}")
    return items


@dataclass(frozen=True)
class Twin:
    """One corpus entry: the grader route, its task, honest or not, its honest twin and the probes
    expected to catch it (``caught_by``; empty for honest graders)."""

    grader: str
    task: str
    honest: bool
    twin: str = ""
    caught_by: tuple[str, ...] = ()
    strict: bool = False  # rejects valid paths: a gradeable failure, not a hack


CORPUS: tuple[Twin, ...] = (
    Twin("exact", "lookup", True),
    Twin("numeric", "price", True),
    Twin("set_f1", "set", True),
    Twin("end_state", "write", True),
    Twin("gated_judge", "lookup", True),
    Twin("substring", "lookup", False, "exact", ("answer_space_dump",)),
    Twin("any_of", "lookup", False, "exact", ("cross_item_replay",)),
    Twin("activity", "lookup", False, "exact", ("activity_no_answer", "cross_item_replay")),
    Twin("claims", "lookup", False, "exact", ("self_report",)),
    Twin("injectable", "lookup", False, "exact", ("injected_score",)),
    Twin("loose_numeric", "price", False, "numeric", ("answer_space_dump",)),
    Twin("recall_set", "set", False, "set_f1", ("answer_space_dump",)),
    Twin("value_blind", "write", False, "end_state", ("altered_writes",)),
    Twin("answer_only", "write", False, "end_state", ("copied_answer", "read_only")),
    Twin("tool_called", "write", False, "end_state", ("noop_write", "altered_writes")),
    Twin("ungated_judge", "lookup", False, "gated_judge", ("self_report", "injected_score", "answer_space_dump")),
    Twin("path_matching", "write", True, strict=True),
)


def job_for(server: ToolServer, base_url: str, grader: str, *, target: str = "openai") -> dict[str, Any]:
    """The hosted job of ``grader`` at ``base_url`` (fast grader rate limit for tests)."""
    return server.job_config(base_url, target=target, grader=grader, rate_limit=1000, max_episode_steps=4)
