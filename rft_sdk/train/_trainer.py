"""The training loop: optional SFT warm start, then GRPO through the real endpoints.

Read top to bottom (after nanochat's ``scripts/chat_rl.py``):

1. build the model and a :class:`TorchPolicy` around it;
2. SFT: replay the gold actions of some train items through the emulator
   (real tool calls, real grader) and fit the recorded turns;
3. evaluate held-out items (greedy) — the "before GRPO" number;
4. per GRPO step: sample ``group_size`` rollouts for each of ``items_per_step``
   items with the emulator against the job's HTTP endpoints, turn grader
   scores into group-normalised advantages, and take ``num_iterations`` AdamW
   steps on the clipped GRPO objective (``kernels.grpo_loss``, TRL loss types,
   optional KL to the frozen post-SFT reference);
5. log metrics (JSONL + progress bar), checkpoint, evaluate, plot.

Pre-flight (``_preflight``): before any rollout the train items' gold rows are
checked against the model's ``block_size`` (a ``BlockSizeError`` names the fix).
``max_train_s`` is the budget of the whole run: SFT stops at
``sft_budget_share`` of it, GRPO gets what is left; ``TrainResult.budget_split``
says how it was spent.

Each rollout turn is one training row: the rendered prompt and the generated
completion, weighted by the rollout's advantage.

The whole run is one coroutine on one event loop (:func:`train` calls
``asyncio.run`` once), with one :class:`~rft_sdk.emulator.EmulatorSession`
that owns the HTTP clients for every sampling round and evaluation.
"""

from __future__ import annotations

import asyncio
import copy
import random
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from rft_sdk.emulator import EmulatorSession, Policy, ReinforcementJob, RolloutResult, load_job

from ._advantages import group_advantages
from ._budget import StepBudget
from ._checkpoint import build_model, save_checkpoint
from ._config import TrainConfig
from ._metrics import MetricsLog, plot_rewards
from ._policy import TorchPolicy
from ._preflight import check_items, check_rows
from ._schedule import lr_at
from ._sft import DemonstrationPolicy, sft_train
from ._turn import SampledTurn
from ._update import _update
from ._watch import Best, SignalWatch, group_stats

__all__ = ["TrainResult", "evaluate", "train"]  # _update is re-exported for tests


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        model / tokenizer: the policy after the LAST GRPO step (``checkpoint.pt``).
        eval_before: held-out success after SFT (before GRPO).
        eval_after: held-out success of the last step's weights.
        eval_best: the best held-out evaluation of the run (after SFT counts) as
            ``{"step", "success", "reward_mean", "n"}``; its weights are ``best_state``
            (``best.pt``). ``None`` without held-out items or with ``keep_best=False``.
        best_state: ``state_dict`` (CPU copies) of the best evaluation, or ``None``.
        steps_done: GRPO steps taken; steps_fit: the wall-clock budget's estimate
            (``None`` without ``max_train_s``).
        sft_losses, metrics (rows as in ``metrics.jsonl``), files (written paths).
        budget_split: how the run's time went, seconds: ``{"max_train_s", "sft_s" (model,
            demonstrations and SFT steps), "sft_cap_s" (``sft_budget_share * max_train_s``),
            "sft_steps_done", "sft_steps", "grpo_s", "grpo_steps_done", "grpo_steps", "eval_s"
            (the evaluation before GRPO), "total_s"}`` (also the last ``metrics.jsonl`` row).
    """

    model: torch.nn.Module
    tokenizer: Any
    eval_before: dict[str, float] | None
    eval_after: dict[str, float] | None
    sft_losses: list[float] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    eval_best: dict[str, float] | None = None
    best_state: dict[str, torch.Tensor] | None = None
    steps_done: int = 0
    steps_fit: int | None = None
    budget_split: dict[str, Any] = field(default_factory=dict)


Item = dict[str, Any]


def _turns(r: RolloutResult) -> list[SampledTurn]:
    """The trainer's token record of each turn of ``r`` (steps whose ``extra`` is a :class:`SampledTurn`)."""
    return [s.extra for s in r.steps if isinstance(s.extra, SampledTurn)]


async def _rollouts(session: EmulatorSession, items: list[Item], policy: Policy, *, samples: int,
                    cfg: TrainConfig) -> list[RolloutResult]:
    return await session.run(items, policy, samples_per_item=samples, max_episode_steps=cfg.max_episode_steps)


async def _evaluate(session: EmulatorSession, model: torch.nn.Module, tokenizer: Any, items: list[Item],
                    cfg: TrainConfig, *, temperature: float | None = None) -> dict[str, float]:
    temp = cfg.eval_temperature if temperature is None else temperature
    policy = TorchPolicy(model, tokenizer, temperature=temp, max_new_tokens=cfg.max_new_tokens,
                         seed=cfg.seed, max_tool_chars=cfg.max_tool_chars)
    results = await _rollouts(session, items, policy, samples=1, cfg=cfg)
    threshold = session.job.grader.pass_threshold
    scores = [r.score if r.score is not None else 0.0 for r in results]
    return {"success": sum(s >= threshold for s in scores) / len(scores), "reward_mean": sum(scores) / len(scores),
            "tool_calls_per_rollout": sum(len(r.tool_calls) for r in results) / len(results), "n": len(results)}


async def _heldout(session: EmulatorSession, model: torch.nn.Module, tokenizer: Any, items: list[Item],
                   cfg: TrainConfig, step: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Evaluate held-out ``items``: ``(evaluation, metrics fields)``; with ``cfg.eval_sampled`` the
    evaluation also carries ``sampled_success`` (one rollout per item at ``cfg.temperature``)."""
    ev = await _evaluate(session, model, tokenizer, items, cfg)
    fields: dict[str, Any] = {"step": step, "eval_success": ev["success"], "eval_reward": ev["reward_mean"]}
    if cfg.eval_sampled:
        ev["sampled_success"] = (await _evaluate(session, model, tokenizer, items, cfg,
                                                 temperature=cfg.temperature))["success"]
        fields["eval_sampled_success"] = ev["sampled_success"]
    return ev, fields


def evaluate(model: torch.nn.Module, tokenizer: Any, items: list[Item], job: Any, cfg: TrainConfig) -> dict[str, float]:
    """One rollout per item with ``cfg.eval_temperature`` (0 = greedy) through the job's endpoints.

    Returns ``{"success": fraction with score >= pass_threshold (discarded count as failures),
    "reward_mean", "tool_calls_per_rollout", "n"}``. Runs its own event loop (``asyncio.run``);
    inside :func:`train` the run's session is used instead.

    Raises:
        JobConfigError: ``job`` is not a valid job config (see ``rft_sdk.emulator.load_job``).
    """
    async def go() -> dict[str, float]:
        async with EmulatorSession(load_job(job), max_concurrency=cfg.max_concurrency) as session:
            return await _evaluate(session, model, tokenizer, items, cfg)

    return asyncio.run(go())


async def _demonstrations(session: EmulatorSession, items: list[Item], tokenizer: Any,
                          cfg: TrainConfig) -> list[tuple[list[int], list[int]]]:
    """(prompt, completion) pairs of the gold replays that the grader passes."""
    results = await _rollouts(session, items, DemonstrationPolicy(tokenizer, max_tool_chars=cfg.max_tool_chars),
                              samples=1, cfg=cfg)
    threshold = session.job.grader.pass_threshold
    passed = [r for r in results if r.score is not None and r.score >= threshold]
    if not passed:
        raise RuntimeError("no demonstration passed the grader; check the items' actions/reference_answer")
    return [(t.prompt_ids, t.completion_ids) for r in passed for t in _turns(r)]


def train(cfg: TrainConfig, *, job: Any, train_items: list[Item], eval_items: list[Item] | None = None,
          out_dir: str | Path | None = None) -> TrainResult:
    """Run SFT (if ``cfg.sft_steps``) then ``cfg.steps`` GRPO steps; see the module docstring.

    Args:
        cfg: the run's :class:`TrainConfig`.
        job: hosted job config (dict/path/``ReinforcementJob``) naming the tool and grader endpoints.
        train_items / eval_items: dataset items (dicts with ``messages``, ``tools``, …).
        out_dir: where ``metrics.jsonl``, ``checkpoint.pt`` and ``reward_curve.png`` go (None = nowhere).

    Raises:
        ValueError: no train items. JobConfigError (a ValueError): ``job`` is not a valid job config.
        RuntimeError: SFT requested but no demonstration passed.
    """
    if not train_items:
        raise ValueError("train() needs at least one train item")
    parsed = load_job(job)  # validated and parsed once, not per rollout batch
    return asyncio.run(_train(cfg, parsed, train_items, eval_items, out_dir))


async def _train(cfg: TrainConfig, job: ReinforcementJob, train_items: list[Item], eval_items: list[Item] | None,
                 out_dir: str | Path | None) -> TrainResult:
    async with EmulatorSession(job, max_concurrency=cfg.max_concurrency) as session:
        return await _train_in(session, cfg, train_items, eval_items, out_dir)


async def _train_in(session: EmulatorSession, cfg: TrainConfig, train_items: list[Item],
                    eval_items: list[Item] | None, out_dir: str | Path | None) -> TrainResult:
    job = session.job
    out = Path(out_dir) if out_dir is not None else None
    log = MetricsLog(out / "metrics.jsonl") if out is not None else None
    rows: list[dict[str, Any]] = []

    def record(row: dict[str, Any]) -> None:
        rows.append(row)
        if log is not None:
            log.write(row)

    # 1. model + policy (seeded)
    t_start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    model, tokenizer = build_model(cfg)
    block = int(getattr(model, "block_size", cfg.block_size))
    # pre-flight: the gold rows must fit the context before any rollout (BlockSizeError names the fix)
    for problem in check_items(train_items, tokenizer, block_size=block, max_new_tokens=cfg.max_new_tokens,
                               max_tool_chars=cfg.max_tool_chars, sft=bool(cfg.sft_steps)):
        warnings.warn(problem, RuntimeWarning, stacklevel=2)
    policy = TorchPolicy(model, tokenizer, temperature=cfg.temperature, max_new_tokens=cfg.max_new_tokens,
                         seed=cfg.seed, max_tool_chars=cfg.max_tool_chars)
    eval_set = list(eval_items or [])[: cfg.eval_items]

    # 2. SFT warm start on demonstrations gathered through the endpoints
    sft_losses: list[float] = []
    if cfg.sft_steps:
        demo_items = train_items[: cfg.sft_demos] if cfg.sft_demos is not None else train_items
        pairs = await _demonstrations(session, demo_items, tokenizer, cfg)
        check_rows(pairs, block)
        bar = tqdm(total=cfg.sft_steps, desc="SFT", disable=not cfg.progress)
        sft_deadline = (t_start + cfg.sft_budget_share * cfg.max_train_s) if cfg.max_train_s is not None else None
        sft_losses = sft_train(model, pairs, steps=cfg.sft_steps, batch_size=cfg.sft_batch_size, lr=cfg.sft_lr,
                               seed=cfg.seed, target_loss=cfg.sft_target_loss, deadline=sft_deadline,
                               on_step=lambda s, loss: (bar.update(1), bar.set_postfix(loss=f"{loss:.3f}")))
        bar.close()
        record({"phase": "sft", "step": 0, "sft_loss_first": sft_losses[0], "sft_loss_last": sft_losses[-1],
                "sft_steps_done": len(sft_losses), "demonstration_turns": len(pairs),
                "elapsed_s": round(time.perf_counter() - t_start, 1)})

    sft_s = time.perf_counter() - t_start  # model, demonstrations and SFT steps

    # 3. held-out success before GRPO
    t_eval = time.perf_counter()
    eval_before = None
    if eval_set:
        eval_before, ev_fields = await _heldout(session, model, tokenizer, eval_set, cfg, 0)
        record({"phase": "eval", **ev_fields, "elapsed_s": round(time.perf_counter() - t_start, 1)})
    eval_s = time.perf_counter() - t_eval

    # 4. GRPO
    keep_ref = cfg.beta > 0 or cfg.log_ref_kl
    ref_model = copy.deepcopy(model).eval().requires_grad_(False) if keep_ref else None
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.adam_betas, weight_decay=cfg.weight_decay)
    threshold = job.grader.pass_threshold
    budget = StepBudget(cfg, t_start, eval_s)
    best = Best(cfg.keep_best)
    if eval_before is not None:
        best.offer(0, eval_before, model)
    order: list[int] = []
    silent = SignalWatch()
    # with a time budget the bar's total is the steps the budget fits, known after MEASURE_STEPS (unknown till then)
    grpo_steps = range(1, cfg.steps + 1)
    bar = tqdm(iter(grpo_steps) if cfg.max_train_s is not None else grpo_steps, desc="GRPO",
               disable=not cfg.progress)
    last_step = 0
    for step in bar:
        if budget.spent():
            break  # wall-clock budget spent
        last_step = step
        t0 = time.perf_counter()
        lr = lr_at(step, lr=cfg.lr, schedule=cfg.lr_schedule, warmup_steps=min(cfg.warmup_steps, budget.horizon // 4),
                   horizon=budget.horizon, min_lr_ratio=cfg.min_lr_ratio)
        for group in opt.param_groups:
            group["lr"] = lr
        # 4a. items of this step (epochs of a seeded shuffle), G rollouts each through the endpoints
        batch_items = []
        for _ in range(min(cfg.items_per_step, len(train_items))):
            if not order:
                order = list(range(len(train_items)))
                rng.shuffle(order)
            batch_items.append(train_items[order.pop()])
        policy.set_round(step)
        results = await _rollouts(session, batch_items, policy, samples=cfg.group_size, cfg=cfg)
        t_sample = time.perf_counter() - t0
        kept = [r for r in results if not r.discarded and r.score is not None]
        kept.sort(key=lambda r: (r.item_index, [t.completion_ids for t in _turns(r)]))

        # 4b. group-normalised advantages (group = the samples of one item)
        rewards = [float(r.score) for r in kept if r.score is not None]
        adv = group_advantages(rewards, [r.item_index for r in kept], scale_by_std=cfg.scale_rewards) if kept else torch.zeros(0)

        # 4c. one training row per policy turn, weighted by its rollout's advantage
        prompts: list[list[int]] = []
        comps: list[list[int]] = []
        row_adv: list[float] = []
        for r, a in zip(kept, adv.tolist()):
            if cfg.skip_zero_advantage and a == 0.0 and cfg.beta == 0:
                continue
            for t in _turns(r):
                if t.completion_ids:
                    prompts.append(t.prompt_ids)
                    comps.append(t.completion_ids)
                    row_adv.append(a)

        # 4d. clipped GRPO objective, AdamW, gradient clipping
        upd = _update(model, ref_model, opt, prompts, comps, row_adv, tokenizer, cfg) if prompts else {}
        scores = torch.tensor(rewards) if rewards else torch.zeros(1)
        groups = group_stats(kept)
        row = {"phase": "grpo", "step": step, "reward_mean": float(scores.mean()),
               "reward_std": float(scores.std()) if len(rewards) > 1 else 0.0,
               "success_rate": sum(x >= threshold for x in rewards) / max(1, len(results)),
               "tool_calls_per_rollout": sum(len(r.tool_calls) for r in results) / max(1, len(results)),
               "discarded": sum(r.discarded for r in results), "rollouts": len(results), **groups,
               "train_rows": len(prompts), "lr": lr, **upd,
               "sample_s": round(t_sample, 3), "step_s": round(time.perf_counter() - t0, 3)}
        warning = silent.after_step(step, groups, rewards)
        if warning is not None:
            row["warning"] = warning

        # 5. evaluation, best weights, checkpoints, budget
        if eval_set and cfg.eval_every and step % cfg.eval_every == 0:
            ev, ev_fields = await _heldout(session, model, tokenizer, eval_set, cfg, step)
            row.update(ev_fields)
            best.offer(step, ev, model)
        row["elapsed_s"] = round(time.perf_counter() - t_start, 1)
        record(row)
        plan = budget.after_step(step)
        if plan is not None:
            record(plan)
            bar.total = budget.steps_fit
            bar.refresh()
        # No "loss" when every group scored alike (zero advantages): nothing to learn from this step.
        bar.set_postfix(reward=f"{row['reward_mean']:.2f}",
                        loss=f"{row['loss']:.3f}" if "loss" in row else "skipped (all groups tied)")
        if out is not None and cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            save_checkpoint(out / "checkpoint.pt", model, step=step, config=cfg, tokenizer=tokenizer)
    bar.close()
    t_grpo_end = time.perf_counter()

    eval_after = None
    if eval_set and last_step:
        done = next((r for r in rows if r.get("step") == last_step and "eval_success" in r), None)
        if done is None:
            eval_after, ev_fields = await _heldout(session, model, tokenizer, eval_set, cfg, last_step)
            record({"phase": "eval", **ev_fields, "elapsed_s": round(time.perf_counter() - t_start, 1)})
            best.offer(last_step, eval_after, model)
        else:
            eval_after = {"success": done["eval_success"], "reward_mean": done["eval_reward"], "n": len(eval_set)}
            if "eval_sampled_success" in done:
                eval_after["sampled_success"] = done["eval_sampled_success"]
    files: dict[str, Path] = {}
    if out is not None and log is not None:
        files["metrics"] = log.path
        files["checkpoint"] = save_checkpoint(out / "checkpoint.pt", model, step=last_step, config=cfg, tokenizer=tokenizer)
        if best.state is not None and best.info is not None:
            best_model = copy.deepcopy(model)
            best_model.load_state_dict(best.state)
            files["best_checkpoint"] = save_checkpoint(out / "best.pt", best_model, step=int(best.info["step"]),
                                                       config=cfg, tokenizer=tokenizer)
        files["plot"] = plot_rewards(rows, out / "reward_curve.png")
    split = {"max_train_s": cfg.max_train_s, "sft_s": round(sft_s, 1), "sft_steps_done": len(sft_losses),
             "sft_steps": cfg.sft_steps, "sft_cap_s": (round(cfg.sft_budget_share * cfg.max_train_s, 1)
                                                       if cfg.max_train_s is not None else None),
             "grpo_s": round(t_grpo_end - budget.t_grpo, 1), "grpo_steps_done": last_step, "grpo_steps": cfg.steps,
             "eval_s": round(eval_s, 1), "total_s": round(time.perf_counter() - t_start, 1)}
    record({"phase": "budget_split", **split})
    return TrainResult(model, tokenizer, eval_before, eval_after, sft_losses, rows, files, eval_best=best.info,
                       best_state=best.state, steps_done=last_step, steps_fit=budget.steps_fit, budget_split=split)
