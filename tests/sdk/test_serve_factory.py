"""``rft serve --factory`` (and ``rft tools --factory``): MODULE:ATTR is a function of no arguments returning the
ToolServer, so a suite can serve one grader of several per process (an outside tester's gap: doctor36 selected its
grader with an environment variable read at import). Real ``rft serve`` processes on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rft_sdk.testing import free_port, serve_process

#: One task, two graders; each factory builds a server with one of them.
APP = '''
from rft_sdk import GradingContext, Rollout, ToolServer

BUILT = []  # how many servers this process built


def build(grader: str) -> ToolServer:
    BUILT.append(grader)
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def lend(book_id: str, *, rollout: Rollout) -> str:
        """Lend a book.

        Args:
            book_id: e.g. "b1".
        """
        rollout.state["lent"] = book_id
        return f"lent {book_id}"

    if grader == "strict":
        @server.grader
        def strict(ctx: GradingContext) -> float:
            return float(ctx.state.get("lent") == ctx.item["book_id"])
    else:
        @server.grader
        def lenient(ctx: GradingContext) -> float:
            return 1.0
    return server


def strict_server() -> ToolServer:
    return build("strict")


def lenient_server() -> ToolServer:
    return build("lenient")


def needs_a_name(grader):
    return build(grader)


def built() -> str:
    return ",".join(BUILT)
'''


@pytest.fixture
def task(tmp_path: Path) -> Path:
    (tmp_path / "factory_app.py").write_text(APP, encoding="utf-8")
    return tmp_path


def _rft(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120)


def _grade(base: str, book: str) -> float:
    trace = f"t-{book}"
    call = {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "lend",
            "arguments": json.dumps({"book_id": book}), "trace_id": trace, "item": {"book_id": "b1"}}
    assert httpx.post(f"{base}/tools/lend", json=call, timeout=30).status_code == 200
    graded = httpx.post(f"{base}/grade", json={"sample": {"output_text": "done"}, "item": {"book_id": "b1"},
                                                "trace_id": trace}, timeout=30)
    assert graded.status_code == 200, graded.text
    return float(graded.json()["score"])


@pytest.mark.parametrize("workers", [1, 2])
def test_each_factory_serves_its_own_grader_in_its_own_process(task: Path, workers: int) -> None:
    extra = ["--workers", "2", "--store", f"sqlite:///{task / 'rollouts.db'}"] if workers == 2 else []
    with serve_process("factory_app:strict_server", "--factory", *extra, cwd=task) as strict, \
            serve_process("factory_app:lenient_server", "--factory", cwd=task) as lenient:
        listed = httpx.get(f"{strict}/tools", timeout=10).json()
        assert (listed["graders"], listed["default_grader"]) == (["strict"], "strict")
        assert httpx.get(f"{lenient}/tools", timeout=10).json()["graders"] == ["lenient"]
        assert _grade(strict, "b2") == 0.0 and _grade(strict, "b1") == 1.0
        assert _grade(lenient, "b2") == 1.0


def test_rft_tools_takes_the_factory_too(task: Path) -> None:
    port = free_port()
    done = _rft(task, "tools", "factory_app:strict_server", "--factory", "--base-url", f"http://127.0.0.1:{port}")
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)["method"]["reinforcement"]
    assert job["grader"]["url"] == f"http://127.0.0.1:{port}/grade" and [t["name"] for t in job["tools"]] == ["lend"]


def test_a_factory_misused_is_one_line_with_the_fix(task: Path) -> None:
    bare = _rft(task, "serve", "factory_app:strict_server", "--port", str(free_port()))
    assert bare.returncode == 2
    assert bare.stderr.strip() == ("rft serve: 'factory_app:strict_server' is a function of no arguments, not an "
                                   "ASGI app: if it returns the app (a ToolServer), pass --factory")
    needs = _rft(task, "serve", "factory_app:needs_a_name", "--factory", "--port", str(free_port()))
    assert needs.returncode == 2
    assert needs.stderr.strip() == (
        "rft serve: --factory: 'factory_app:needs_a_name' needs the argument(s) grader; a factory takes none (read "
        "what it needs from the environment, or give each choice a factory of its own)")
    not_a_server = _rft(task, "serve", "factory_app:built", "--factory", "--port", str(free_port()))
    assert not_a_server.returncode == 2
    assert not_a_server.stderr.strip() == ("rft serve: 'factory_app:built' (what the --factory returned) is a str, "
                                           "not an ASGI app (e.g. a ToolServer)")
    not_callable = _rft(task, "tools", "factory_app:BUILT", "--factory")
    assert not_callable.returncode == 2
    assert not_callable.stderr.strip() == ("rft tools: --factory: 'factory_app:BUILT' is a list, not a function "
                                           "returning the app")


def test_rft_validate_and_rft_job_take_the_factory_too(task: Path) -> None:
    """``rft validate --app MODULE:ATTR --factory`` loads the ToolServer the factory returns (in process, with the
    gold dry run graded by its one grader), as ``rft serve``/``rft tools`` do; without ``--factory`` it says to
    pass it (doctor37's tester: 'is a function, not a ToolServer')."""
    listed = _rft(task, "tools", "factory_app:strict_server", "--factory")
    assert listed.returncode == 0, listed.stderr
    line = {"messages": [{"role": "user", "content": "Lend me book b1."}], "tools": json.loads(listed.stdout),
            "book_id": "b1", "actions": [{"name": "lend", "arguments": {"book_id": "b1"}}],
            "reference_answer": "lent b1"}
    (task / "train.jsonl").write_text("".join(json.dumps(line) + "\n" for _ in range(10)), encoding="utf-8")
    done = _rft(task, "validate", "train.jsonl", "--app", "factory_app:strict_server", "--factory", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["gold_replayed"] == 10 and report["server"] == "ToolServer (in process)"
    # the same gold graded by the other factory's grader: the dry run's verdict is that grader's
    (task / "wrong.jsonl").write_text("".join(json.dumps({**line, "book_id": "b2"}) + "\n" for _ in range(10)))
    strict = _rft(task, "validate", "wrong.jsonl", "--app", "factory_app:strict_server", "--factory", "--json")
    lenient = _rft(task, "validate", "wrong.jsonl", "--app", "factory_app:lenient_server", "--factory", "--json")
    assert (strict.returncode, lenient.returncode) == (1, 0)
    bare = _rft(task, "validate", "train.jsonl", "--app", "factory_app:strict_server")
    assert bare.returncode == 2
    assert bare.stderr.strip() == ("rft validate: 'factory_app:strict_server' is a function of no arguments, not "
                                   "an ASGI app: if it returns the app (a ToolServer), pass --factory")
    alone = _rft(task, "validate", "train.jsonl", "--factory")
    assert alone.returncode == 2 and alone.stderr.startswith("rft validate: --factory needs --app MODULE:ATTR")
    needs = _rft(task, "validate", "train.jsonl", "--app", "factory_app:needs_a_name", "--factory")
    assert needs.returncode == 2 and needs.stderr.startswith("rft validate: --factory: 'factory_app:needs_a_name' "
                                                             "needs the argument(s) grader")
    job = _rft(task, "job", "factory_app:lenient_server", "--factory", "--base-url", "https://rft.example.com",
               "--model", "o4-mini-2025-04-16", "--training-file", "file-a")
    assert job.returncode == 0, job.stderr
    assert json.loads(job.stdout)["method"]["reinforcement"]["grader"]["url"] == "https://rft.example.com/grade"


def test_one_decorated_tool_in_two_servers_of_one_process() -> None:
    """docs/graders.md, "One decorated function in several servers of one process": each server keeps its own
    rollouts, state and graders; the tool's definition (its learnt kind) is shared."""
    from rft_sdk import GradingContext, Rollout, ToolServer, grader, tool
    from rft_sdk.testing import TestClient

    @tool
    def lend(book_id: str, *, rollout: Rollout) -> str:
        """Lend a book.

        Args:
            book_id: e.g. "b1".
        """
        rollout.state.setdefault("lent", []).append(book_id)
        return "ok"

    @grader
    def strict(ctx: GradingContext) -> float:
        return float(ctx.state.get("lent") == [ctx.item["book_id"]])

    @grader
    def lenient(ctx: GradingContext) -> float:
        return 1.0

    tools = [lend]
    listed = ToolServer(tools=tools, auth_env_var=None).dataset_tools()  # a build script's dataset tools
    first = ToolServer(tools=tools, graders=[strict], auth_env_var=None)
    second = ToolServer(tools=tools, graders=[lenient], auth_env_var=None)
    assert first.dataset_tools() == second.dataset_tools() == listed
    item = {"book_id": "b1"}
    with TestClient(first) as a, TestClient(second) as b:
        assert b.http.get("/tools").json()["writes"] == {"lend": None}
        a.call("lend", trace_id="t1", item=item, book_id="b1")
        assert b.http.get("/tools").json()["writes"] == {"lend": True}  # learnt from a call on the other server
        b.call("lend", trace_id="t1", item=item, book_id="b2")  # the same trace_id: another server's rollout
        assert (a.state("t1"), b.state("t1")) == ({"lent": ["b1"]}, {"lent": ["b2"]})
        assert (a.grade("t1", "done", item=item).score, b.grade("t1", "done", item=item).score) == (1.0, 1.0)
