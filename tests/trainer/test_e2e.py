"""A short SFT + GRPO run through real uvicorn servers, then the same run through the CLI.

Tools: the retail example server's real ``get_order_status`` endpoint. Grader: a
tiny rft_sdk app with a dense similarity reward, so that even an untrained
policy gets reward variance (non-zero advantages) and GRPO actually updates.
"""

import difflib
import json

import torch

from examples.retail.app import server as retail_server
from examples.retail.order_status_task import build_items
from rft_sdk import ToolServer, grader
from rft_sdk.testing import run_server
from rft_sdk.train import TrainConfig, cli, load_checkpoint, train


@grader(name="similarity")
def similarity(ctx):
    return difflib.SequenceMatcher(None, ctx.output_text.strip().lower(), ctx.item["answer"]).ratio()


GRADER_APP = ToolServer(graders=[similarity])
CFG = dict(n_layer=1, n_embd=32, n_head=2, block_size=192, sft_steps=20, sft_demos=8, sft_batch_size=8,
           steps=3, items_per_step=3, group_size=4, max_new_tokens=24, temperature=1.0, lr=3e-3,
           eval_items=4, progress=False, seed=3)
VOLATILE = {"sample_s", "step_s", "elapsed_s", "sft_s", "grpo_s", "eval_s", "total_s"}  # wall-clock figures


def _job(tools_url: str, grader_url: str) -> dict:
    return {"tools": [{"name": "get_order_status", "server_url": f"{tools_url}/tools/get_order_status"}],
            "grader": {"type": "endpoint", "url": f"{grader_url}/grade/similarity", "rate_limit": 1000,
                       "pass_threshold": 0.99},
            "max_episode_steps": 2}


def _stable(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def test_train_end_to_end_then_cli_reproduces_it(tmp_path):
    train_items, held = build_items(seed=0)
    with run_server(retail_server) as tools_url, run_server(GRADER_APP) as grader_url:
        job = _job(tools_url, grader_url)
        result = train(TrainConfig(**CFG), job=job, train_items=train_items[:40], eval_items=held,
                       out_dir=tmp_path / "run")

        # the pipeline completed and wrote its files
        for name in ("metrics", "checkpoint", "plot"):
            assert result.files[name].is_file() and result.files[name].stat().st_size > 0
        assert result.files["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        rows = [json.loads(line) for line in result.files["metrics"].read_text().splitlines()]
        grpo = [r for r in rows if r["phase"] == "grpo"]
        assert [r["step"] for r in grpo] == [1, 2, 3]
        assert all(r["rollouts"] == 12 and r["discarded"] == 0 for r in grpo)
        assert result.eval_before["n"] == result.eval_after["n"] == 4

        # the loss moved: SFT cross-entropy fell, GRPO took real gradient steps on non-zero advantages
        assert result.sft_losses[-1] < result.sft_losses[0] - 0.5
        losses = [r["loss"] for r in grpo if r["train_rows"] > 0]
        assert losses and all(abs(x) < 100 for x in losses)
        assert any(r["grad_norm"] > 0 for r in grpo if r["train_rows"] > 0)
        assert all(0 <= r["reward_mean"] <= 1 and r["reward_std"] > 0 for r in grpo)

        # the best held-out evaluation (after SFT counts) is kept beside the last weights
        assert result.eval_best["success"] == max(result.eval_before["success"], result.eval_after["success"])
        best, _ = load_checkpoint(result.files["best_checkpoint"])
        assert all(torch.equal(a, result.best_state[k]) for k, a in best.state_dict().items())
        assert all(r["lr"] > 0 and 0 <= r["groups_all_equal"] <= 1 for r in grpo)

        # the checkpoint holds the trained weights
        loaded, _ = load_checkpoint(result.files["checkpoint"])
        assert loaded.state_dict().keys() == result.model.state_dict().keys()
        for (k, a), b in zip(result.model.state_dict().items(), loaded.state_dict().values()):
            assert torch.equal(a, b), k

        # the CLI with the same config reproduces the run exactly (seeded sampling, seeded item order)
        (tmp_path / "job.json").write_text(json.dumps(job))
        with open(tmp_path / "train.jsonl", "w") as fh:
            fh.writelines(json.dumps(it) + "\n" for it in train_items[:40])
        (tmp_path / "cfg.json").write_text(json.dumps({"job": "job.json", "train_items": "train.jsonl",
                                                       "eval_items": held, "training": CFG}))
        assert cli.main(["--config", str(tmp_path / "cfg.json"), "--out", str(tmp_path / "cli")]) == 0
    cli_rows = [json.loads(line) for line in (tmp_path / "cli" / "metrics.jsonl").read_text().splitlines()]
    assert _stable(cli_rows) == _stable(rows)
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert summary["eval_after"] == result.eval_after


def test_cli_rejects_bad_config(tmp_path, capsys):
    (tmp_path / "cfg.json").write_text(json.dumps({"job": {}, "train_items": [], "training": {"nope": 1}}))
    assert cli.main(["--config", str(tmp_path / "cfg.json"), "--out", str(tmp_path / "o")]) == 2
    assert "nope" in capsys.readouterr().err


def test_train_runs_on_one_event_loop_with_one_session(monkeypatch):
    """SFT demonstrations, every sampling round and every evaluation share one loop and one session."""
    import asyncio

    from rft_sdk.emulator import EmulatorSession
    from rft_sdk.train import _trainer

    loops, sessions = [], []
    real_run, real_init = asyncio.run, EmulatorSession.__init__

    def counting_run(coro, **kw):
        loops.append(coro)
        return real_run(coro, **kw)

    def counting_init(self, *a, **kw):
        sessions.append(self)
        real_init(self, *a, **kw)

    monkeypatch.setattr(_trainer.asyncio, "run", counting_run)
    monkeypatch.setattr(EmulatorSession, "__init__", counting_init)
    train_items, held = build_items(seed=0)
    cfg = TrainConfig(**{**CFG, "sft_steps": 2, "steps": 2, "eval_every": 1, "eval_items": 2, "eval_sampled": True})
    with run_server(retail_server) as tools_url, run_server(GRADER_APP) as grader_url:
        result = train(cfg, job=_job(tools_url, grader_url), train_items=train_items[:12], eval_items=held)
    assert [r["step"] for r in result.metrics if r["phase"] == "grpo"] == [1, 2]
    assert len(loops) == 1 and len(sessions) == 1
    # eval_sampled: every held-out evaluation (after SFT, steps 1 and 2) also ran at the sampling temperature
    evals = [r for r in result.metrics if "eval_success" in r]
    assert [r["step"] for r in evals] == [0, 1, 2]
    assert all(0.0 <= r["eval_sampled_success"] <= 1.0 for r in evals)
    assert result.eval_best["sampled_success"] in {r["eval_sampled_success"] for r in evals}
    clients = sessions[0].http_clients
    assert clients and all(c.is_closed for c in clients)  # opened once, closed at the end
