"""Write tools known, not guessed (issue 36): ``@tool(writes=...)``, writes learnt from what a call
changed (rollout state, rollout database), ``GET /tools``'s ``"writes"``, the doctor and
``rft emulate --policy perturbed`` using that one answer; the noisy policy and *learnable* NOT
CHECKED for a deterministic policy. Real uvicorn servers on 127.0.0.1 throughout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolServer, tool
from rft_sdk.doctor import check_learnable, check_unhackable, is_write_tool
from rft_sdk.emulator import NoisyReplayPolicy, ReferenceReplayPolicy, learn_write_tools, load_job, served_writes
from rft_sdk.emulator import cli as emulate_cli
from rft_sdk.exceptions import ToolDefinitionError
from rft_sdk.testing import run_server

BOOKS = [f"b{n}" for n in range(10, 20)]


def make_library(db_dir: Path | None = None) -> ToolServer:
    """A library task: ``checkout_book`` writes (its name starts with "check", which the old name
    heuristic took for a read), ``lookup_book`` reads, ``renew_loan`` is declared a write."""

    def setup(conn: Any) -> None:
        conn.execute("CREATE TABLE loans (book TEXT PRIMARY KEY, member TEXT NOT NULL)")

    db = SQLiteDatabase(setup=setup, dir=db_dir, name="libwrites") if db_dir is not None else None
    server = ToolServer(auth_env_var=None, db=db)
    use_db = db is not None

    @server.tool
    def lookup_book(book: str, *, rollout: Rollout) -> str:
        """Whether a book is on loan.

        Args:
            book: e.g. "b10".
        """
        if use_db:
            row = rollout.db.execute("SELECT member FROM loans WHERE book = ?", (book,)).fetchone()
            return "on loan" if row else "available"
        return "on loan" if book in rollout.state.get("loans", {}) else "available"

    @server.tool
    def checkout_book(book: str, member: str, *, rollout: Rollout) -> str:
        """Lend a book to a member.

        Args:
            book: e.g. "b10".
            member: e.g. "m10".
        """
        if use_db:
            rollout.db.execute("INSERT OR REPLACE INTO loans VALUES (?, ?)", (book, member))
        else:
            rollout.state.setdefault("loans", {})[book] = member
        return "checked out"

    @server.tool(writes=True)
    def renew_loan(book: str, *, rollout: Rollout) -> str:
        """Renew a loan (declared a write; never called by the gold).

        Args:
            book: e.g. "b10".
        """
        return "renewed"

    @server.grader
    def grade(ctx: GradingContext) -> float:
        book, member = ctx.item["book"], ctx.item["member"]
        if use_db:
            rows = ctx.db.connection.execute("SELECT book, member FROM loans").fetchall()
            return float([tuple(r) for r in rows] == [(book, member)])
        return float(ctx.state.get("loans", {}) == {book: member})

    return server


def items_for(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "user", "content": f"Lend book {b} to member m{b[1:]}."}],
             "tools": server.dataset_tools(), "book": b, "member": f"m{b[1:]}",
             "actions": [{"name": "lookup_book", "arguments": {"book": b}},
                         {"name": "checkout_book", "arguments": {"book": b, "member": f"m{b[1:]}"}}],
             "reference_answer": f"Lent {b} to m{b[1:]}."} for b in BOOKS]


def _plain(x: str) -> str:
    """Plain.

    Args:
        x: a key.
    """
    return x


def test_writes_is_declared_or_refused():
    @tool(writes=False)
    def read_it(x: str) -> str:
        """Read.

        Args:
            x: a key.
        """
        return x

    assert read_it.__rft_tool__.writes is False and read_it.__rft_tool__.learned_writes is False
    with pytest.raises(ToolDefinitionError, match="writes must be True, False or None"):
        tool(writes="yes")(read_it.__wrapped__ if hasattr(read_it, "__wrapped__") else _plain)  # type: ignore[call-overload]


@pytest.mark.parametrize("backend", ["state", "sqlite"])
async def test_get_tools_learns_writes_from_what_the_gold_changed(backend, tmp_path):
    server = make_library(tmp_path / "db" if backend == "sqlite" else None)
    with run_server(server) as url:
        job = load_job(server.job_config(url, rate_limit=1000, max_episode_steps=4))
        before = httpx.get(f"{url}/tools").json()["writes"]
        assert before == {"lookup_book": None, "checkout_book": None, "renew_loan": True}  # nothing seen yet
        found, writes = await learn_write_tools(items_for(server), job)
        assert writes == {"lookup_book": False, "checkout_book": True, "renew_loan": True}
        assert found == {"checkout_book", "renew_loan"}
        assert await served_writes(job) == writes  # the gold dry run taught the server
    assert not is_write_tool("checkout_book")  # the old name heuristic got it wrong


async def test_doctor_uses_the_learnt_write_tools(tmp_path):
    server = make_library()
    with run_server(server) as url:
        result = await check_unhackable(items_for(server), server.job_config(url, rate_limit=1000,
                                                                             max_episode_steps=16))
    ev = result.evidence
    assert ev["write_tools_source"] == "declared or learnt in this run"
    assert ev["write_tools"] == ["checkout_book", "renew_loan"] and ev["unknown_kind_tools"] == []
    # the write-only probes now run on every item instead of skipping "the gold changes nothing"
    for probe in ("altered_writes", "read_only", "noop_write", "copied_answer", "superset_end_state"):
        assert ev["probes"][probe]["verdict"] == "pass" and ev["probes"][probe]["rollouts"] == 10, probe
    assert result.passed is True and ev["warned_probes"] == []


def test_emulate_perturbed_learns_write_tools_through_the_cli(tmp_path, capsys):
    server = make_library()
    with run_server(server) as url:
        dataset, config = tmp_path / "d.jsonl", tmp_path / "job.json"
        dataset.write_text("".join(json.dumps(i) + "\n" for i in items_for(server)), encoding="utf-8")
        config.write_text(json.dumps(server.job_config(url, rate_limit=1000, max_episode_steps=4)), encoding="utf-8")
        code = emulate_cli.main(["--dataset", str(dataset), "--config", str(config), "--policy", "perturbed",
                                 "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "write tools (declared or learnt from the gold dry run): checkout_book, renew_loan" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert list(summary["perturbations"]) == ["dropped checkout_book"]  # the learnt write was dropped
    assert summary["reward"]["max"] == 0.0


async def test_noisy_policy_gives_learnable_a_verdict_and_reference_is_not_checked():
    server = make_library()
    with run_server(server) as url:
        items, job = items_for(server), server.job_config(url, rate_limit=1000, max_episode_steps=6)
        noisy, results = await check_learnable(items, job, NoisyReplayPolicy(seed=1), samples=6)
        reference, _ = await check_learnable(items, job, ReferenceReplayPolicy(), samples=2)
    assert noisy.passed is True and noisy.evidence["share_items_with_signal"] >= 0.5
    assert {r.perturbation for r in results} - {"unchanged"}  # mistakes were made
    assert reference.passed is None and "deterministic" in reference.summary
    assert "--policy noisy" in reference.summary


def test_noisy_policy_is_reproducible_and_refuses_bad_rates():
    import random

    policy = NoisyReplayPolicy()
    gold = [{"name": "a", "arguments": {"k": 1}}, {"name": "b", "arguments": {"s": "x"}}]
    plans = [policy.plan(gold, "the answer", random.Random(f"0:item:{k}")) for k in range(40)]
    assert plans == [policy.plan(gold, "the answer", random.Random(f"0:item:{k}")) for k in range(40)]
    kinds = {note.split()[0] for _, _, d in plans for note in d.split("; ")}
    assert kinds >= {"dropped", "repeated", "altered", "wrong", "unchanged"}
    with pytest.raises(ValueError, match="rates"):
        NoisyReplayPolicy({"drop": 1.5})
    with pytest.raises(ValueError, match="rates"):
        NoisyReplayPolicy({"typo": 0.1})


def make_sync_server() -> ToolServer:
    """``sync_book`` changes state only for book "b0" (what a call changes depends on the data)."""
    server = ToolServer(auth_env_var=None)

    @server.tool
    def sync_book(book: str, *, rollout: Rollout) -> str:
        """Sync a book's record.

        Args:
            book: e.g. "b10".
        """
        if book == "b0":
            rollout.state["synced"] = book
        return "synced"

    @server.grader
    def grade(ctx: GradingContext) -> float:
        return float(ctx.output_text.strip() == ctx.item["reference_answer"])

    return server


def _sync_items(server: ToolServer, books: list[str]) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "user", "content": f"Sync {b}."}], "tools": server.dataset_tools(),
             "actions": [{"name": "sync_book", "arguments": {"book": b}}], "reference_answer": f"Synced {b}."}
            for b in books]


async def test_the_doctor_learns_write_tools_per_run_not_from_earlier_runs_on_the_server():
    """A server that once saw sync_book change state says "writes" ever after; the doctor decides from
    what this run's gold calls changed (x-rft-state-changed), so a run's verdict does not depend on
    what the server served before it."""
    fresh, used = make_sync_server(), make_sync_server()
    with run_server(fresh) as fresh_url, run_server(used) as used_url:
        first = await check_unhackable(_sync_items(fresh, BOOKS), fresh.job_config(fresh_url, rate_limit=1000))
        await check_unhackable(_sync_items(used, ["b0"] * 10), used.job_config(used_url, rate_limit=1000))
        assert httpx.get(f"{used_url}/tools").json()["writes"] == {"sync_book": True}  # stale for BOOKS
        again = await check_unhackable(_sync_items(used, BOOKS), used.job_config(used_url, rate_limit=1000))
    for result in (first, again):
        assert result.evidence["write_tools"] == [], result.evidence["write_tools"]
        assert result.evidence["write_tools_source"] == "declared or learnt in this run"
    assert {n: r["verdict"] for n, r in first.evidence["probes"].items()} == \
        {n: r["verdict"] for n, r in again.evidence["probes"].items()}


@pytest.mark.parametrize("backend", ["state", "sqlite"])
def test_the_server_says_what_a_call_changed_and_digests_the_end_state(backend, tmp_path):
    """x-rft-state-changed per call (decided by the server, not the tool) and, when asked, x-rft-end-state
    on the grade: equal for two call orders that end alike, different for one more write; a value written
    again changes nothing."""
    from rft_sdk.protocol import END_STATE_HEADER, STATE_CHANGED_HEADER

    server = make_library(tmp_path / "db" if backend == "sqlite" else None)
    item = items_for(server)[0]
    with run_server(server) as url, httpx.Client() as client:
        def call(trace: str, n: int, name: str, **arguments: str) -> str | None:
            body = {"call_id": f"c{n}", "trace_id": trace, "arguments": json.dumps(arguments), "item": item}
            resp = client.post(f"{url}/tools/{name}", json=body)
            assert resp.status_code == 200, resp.text
            return resp.headers.get(STATE_CHANGED_HEADER)

        def end_state(trace: str, ask: bool = True) -> str | None:
            resp = client.post(f"{url}/grade", json={"sample": {"output_text": "x"}, "trace_id": trace, "item": item},
                               headers={END_STATE_HEADER: "1"} if ask else {})
            assert resp.status_code == 200, resp.text
            return resp.headers.get(END_STATE_HEADER)

        assert call("t1", 1, "checkout_book", book="b1", member="m1") == "true"
        assert call("t1", 2, "checkout_book", book="b2", member="m2") == "true"
        assert call("t1", 3, "lookup_book", book="b1") == "false"
        assert call("t2", 1, "checkout_book", book="b2", member="m2") == "true"
        assert call("t2", 2, "checkout_book", book="b1", member="m1") == "true"
        assert call("t3", 1, "checkout_book", book="b1", member="m1") == "true"
        if backend == "state":  # SQLite counts a row rewritten with its own values as a change
            assert call("t3", 2, "checkout_book", book="b1", member="m1") == "false"
        replay = client.post(f"{url}/tools/checkout_book", json={"call_id": "c1", "trace_id": "t3", "item": item,
                                                                   "arguments": json.dumps({"book": "b1",
                                                                                            "member": "m1"})})
        assert STATE_CHANGED_HEADER not in replay.headers  # a replayed answer: not run again, nothing said
        one, other, fewer = end_state("t1"), end_state("t2"), end_state("t3")
        assert one is not None and one.startswith("sha256:") and len(one) == 7 + 64
        assert one == other and one != fewer
        call("t4", 1, "checkout_book", book="b1", member="m1")
        assert end_state("t4", ask=False) is None  # only a client that asks gets it
