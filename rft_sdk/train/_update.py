"""One GRPO update: ``num_iterations`` AdamW steps on the clipped objective of a batch of rows.

Also measures what explains a run's dynamics: token entropy (chunked, see
``_entropy``), KL to the frozen post-SFT reference (k3 estimator
``exp(ref - lp) - (ref - lp) - 1``, Schulman 2020 "Approximating KL
divergence", as TRL), the clip ratio and the gradient norm before clipping.
"""

from __future__ import annotations

from typing import Any

import torch

from rft_sdk import kernels

from ._batch import TokenBatch, completion_logits, make_batch
from ._config import TrainConfig
from ._entropy import token_entropy

__all__: list[str] = []


def _update(model: torch.nn.Module, ref_model: torch.nn.Module | None, opt: torch.optim.Optimizer,
            prompts: list[list[int]], comps: list[list[int]], advantages: list[float], tokenizer: Any,
            cfg: TrainConfig) -> dict[str, float]:
    """``num_iterations`` AdamW steps on the GRPO loss of the rows; returns loss/KL/entropy/clip/grad-norm.

    ``ref_model`` (frozen) enters the loss only when ``cfg.beta > 0``; with ``beta == 0`` it is only
    measured (``"kl"``). Without it ``"kl"`` is 0.0. Metrics are those of the first iteration.

    The model runs in ``eval()`` mode (dropout off, as TRL's ``disable_dropout=True``), the mode the
    policy sampled in: the ``old`` logprobs recomputed here for ``num_iterations > 1`` are then the
    sampling-time logprobs (the ratio compares against the policy that acted), and with
    ``num_iterations == 1`` the on-policy ratio is exactly 1 (TRL passes ``old_per_token_logps=None``).
    """
    batch = make_batch(prompts, comps, pad_id=tokenizer.pad_id, block_size=getattr(model, "block_size", None))
    adv = torch.tensor(advantages, dtype=torch.float32)
    model.eval()  # gradients still flow; only dropout (and similar train-mode noise) is switched off
    with torch.no_grad():
        old_lp = _logprobs(model, batch, cfg.temperature) if cfg.num_iterations > 1 else None
        ref_lp = _logprobs(ref_model, batch, cfg.temperature) if ref_model is not None else None
    loss_ref_lp = ref_lp if cfg.beta > 0 else None  # measured-only when beta == 0
    first: dict[str, float] = {}
    for it in range(cfg.num_iterations):
        logits = completion_logits(model, batch)
        out = kernels.grpo_loss(logits, batch.completion_ids, adv, batch.completion_mask, old_lp, loss_ref_lp,
                                temperature=cfg.temperature, epsilon_low=cfg.epsilon_low,
                                epsilon_high=cfg.epsilon_high, beta=cfg.beta, loss_type=cfg.loss_type,
                                max_completion_length=cfg.max_new_tokens)
        opt.zero_grad(set_to_none=True)
        torch.autograd.backward(out.loss)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        if it == 0:
            mask = batch.completion_mask
            entropy = token_entropy(logits, cfg.temperature)  # chunked, no [B, T, V] log-softmax
            kl = out.kl
            if kl is None and ref_lp is not None:
                delta = ref_lp - out.logprobs.detach()
                kl = torch.exp(delta) - delta - 1.0
            first = {"loss": out.loss.item(), "entropy": float((entropy * mask).sum() / mask.sum()),
                     "kl": float((kl * mask).sum() / mask.sum()) if kl is not None else 0.0,
                     "clip_ratio": float(out.clip_ratio), "grad_norm": float(grad_norm),
                     "completion_tokens": int(mask.sum())}
    return first


def _logprobs(model: torch.nn.Module, batch: TokenBatch, temperature: float) -> torch.Tensor:
    return kernels.selective_log_softmax(completion_logits(model, batch), batch.completion_ids, temperature)
