"""Shared pieces of the kernels package: output type, loss types, input checks, loss weights.

Loss normalisations follow TRL's ``GRPOTrainer._compute_loss``
(https://github.com/huggingface/trl, ``trl/trainer/grpo_trainer.py``):

* ``grpo``    — per-sequence mean over completion tokens, then mean over sequences
  (DeepSeekMath GRPO, Shao et al. 2024, arXiv:2402.03300).
* ``dr_grpo`` — sum over all completion tokens / (B · max_completion_length)
  ("Understanding R1-Zero-Like Training", Liu et al. 2025, arXiv:2503.20783).
* ``dapo``    — token-level: sum over all completion tokens / number of completion tokens
  (DAPO, Yu et al. 2025, arXiv:2503.14476).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

LOSS_TYPES: tuple[str, ...] = ("grpo", "dr_grpo", "dapo")
FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)


@dataclass(frozen=True)
class GRPOLossOutput:
    """Result of :func:`rft_sdk.kernels.grpo_loss` and :func:`rft_sdk.kernels.fused_linear_grpo_loss`.

    Every field is a tensor on the logits' device: reading one on the host (``float(...)``,
    ``.item()``) is the caller's choice, the loss path itself never synchronises.

    Attributes:
        loss: scalar tensor (fp32), differentiable w.r.t. the logits (or hidden states / weight).
        logprobs: ``[B, T]`` fp32, detached log-probabilities of the sampled tokens
            under the current policy (at the given temperature).
        kl: ``[B, T]`` fp32 detached per-token k3 KL estimate
            ``exp(ref - lp) - (ref - lp) - 1`` (without β), or ``None`` when
            ``beta == 0`` or no reference logprobs were given.
        clip_ratio: 0-dim fp32 tensor, the fraction (0..1) of completion tokens whose ratio
            lies in the clipped region (TRL's ``clip_ratio/region_mean``: ``r < 1-ε_low`` with
            ``A < 0`` or ``r > 1+ε_high`` with ``A > 0``); ``float(out.clip_ratio)`` reads it.
        entropy: ``[B, T]`` fp32 detached per-token entropy ``-Σ_v p log p`` of
            ``softmax(logits / temperature)`` (nats), or ``None`` unless ``return_entropy=True``.
    """

    loss: torch.Tensor
    logprobs: torch.Tensor
    kl: torch.Tensor | None
    clip_ratio: torch.Tensor
    entropy: torch.Tensor | None = None


def check_selective_inputs(
    logits: torch.Tensor, token_ids: torch.Tensor, temperature: float,
    logits_offset: int | None = None, check_ids: bool | None = None,
) -> int:
    """Validate ``logits[..., V]`` / ``token_ids[...]`` / temperature / offset and return the offset (int).

    Shapes: ``logits.shape[:-1] == token_ids.shape`` when ``logits_offset`` is ``None``; with an
    int offset, 3-D ``[B, L, V]`` logits and ``token_ids[B, T]`` with ``L ≥ logits_offset + T``
    (rows ``offset .. offset+T`` score the ids). ``check_ids``: check that ids lie in ``[0, V)``;
    ``None`` = only for CPU tensors (on CUDA the check would cost a host–device sync; the
    kernels then give NaN logprobs for bad ids instead of reading out of bounds).

    Raises:
        TypeError / ValueError: the first problem found, naming the argument.
    """
    if not isinstance(logits, torch.Tensor) or not isinstance(token_ids, torch.Tensor):
        raise TypeError("logits and token_ids must be torch.Tensor")
    if logits.dtype not in FLOAT_DTYPES:
        raise TypeError(f"logits must be float32/bfloat16/float16/float64, got {logits.dtype}")
    check_token_ids(token_ids, logits.device)
    ids_shape = tuple(token_ids.shape)
    if logits_offset is None:
        if logits.dim() < 1 or tuple(logits.shape[:-1]) != ids_shape:
            raise ValueError(f"logits shape {tuple(logits.shape)} must be token_ids shape {ids_shape} + (V,) "
                             "(or pass logits_offset to score a window of longer [B, L, V] logits)")
        logits_offset = 0
    elif isinstance(logits_offset, bool) or not isinstance(logits_offset, int) or logits_offset < 0:
        raise ValueError(f"logits_offset must be an int >= 0 or None, got {logits_offset!r}")
    elif (logits.dim() != 3 or len(ids_shape) != 2 or logits.shape[0] != ids_shape[0]
          or logits.shape[1] < logits_offset + ids_shape[1]):
        raise ValueError(f"logits_offset={logits_offset} needs logits [B, L, V] and token_ids [B, T] with "
                         f"L >= offset + T, got {tuple(logits.shape)} and {ids_shape}")
    if not float(temperature) > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    check_id_range(token_ids, logits.shape[-1], check_ids)
    return logits_offset


def check_token_ids(token_ids: torch.Tensor, device: torch.device) -> None:
    """``token_ids`` is an integer tensor on ``device``; raise ``TypeError``/``ValueError``."""
    if token_ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"token_ids must be an integer tensor, got {token_ids.dtype}")
    if token_ids.device != device:
        raise ValueError(f"logits on {device} but token_ids on {token_ids.device}")


def check_id_range(token_ids: torch.Tensor, vocab: int, check_ids: bool | None) -> None:
    """Raise ``ValueError`` for ids outside ``[0, vocab)`` (``check_ids=None``: CPU tensors only, no sync)."""
    if vocab <= 0:
        raise ValueError("vocabulary size V must be > 0")
    if check_ids is None:
        check_ids = token_ids.device.type == "cpu"
    if check_ids and token_ids.numel() and bool(((token_ids < 0) | (token_ids >= vocab)).any()):
        raise ValueError(f"token_ids must lie in [0, {vocab}); got min {int(token_ids.min())}, max {int(token_ids.max())}")


def check_grpo_inputs(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    epsilon_low: float,
    epsilon_high: float,
    beta: float,
    loss_type: str,
    max_completion_length: int | None,
    temperature: float = 1.0,
    logits_offset: int | None = None,
    check_ids: bool | None = None,
) -> int:
    """Validate the arguments of :func:`rft_sdk.kernels.grpo_loss`, return the logits offset (int).

    Raises:
        TypeError / ValueError: the first problem found, naming the argument.
    """
    if logits.dim() != 3 or token_ids.dim() != 2:
        raise ValueError(f"logits must be [B, L, V] and token_ids [B, T], got shapes {tuple(logits.shape)}, "
                         f"{tuple(token_ids.shape)}")
    offset = check_selective_inputs(logits, token_ids, temperature, logits_offset, check_ids)
    check_grpo_params(logits.device, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                      epsilon_low, epsilon_high, beta, loss_type, max_completion_length)
    return offset


def check_grpo_params(
    device: torch.device,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    epsilon_low: float,
    epsilon_high: float,
    beta: float,
    loss_type: str,
    max_completion_length: int | None,
) -> None:
    """Validate the per-token GRPO inputs against ``token_ids[B, T]`` and the loss parameters."""
    b, t = token_ids.shape
    if tuple(advantages.shape) not in ((b,), (b, t)):
        raise ValueError(f"advantages must be [B]={b} or [B, T]={b, t}, got {tuple(advantages.shape)}")
    if tuple(completion_mask.shape) != (b, t):
        raise ValueError(f"completion_mask must be [B, T]={b, t}, got {tuple(completion_mask.shape)}")
    for name, x in (("old_logprobs", old_logprobs), ("ref_logprobs", ref_logprobs)):
        if x is not None and tuple(x.shape) != (b, t):
            raise ValueError(f"{name} must be [B, T]={b, t}, got {tuple(x.shape)}")
    for name, x in (("advantages", advantages), ("completion_mask", completion_mask),
                    ("old_logprobs", old_logprobs), ("ref_logprobs", ref_logprobs)):
        if x is not None and x.device != device:
            raise ValueError(f"{name} on {x.device} but logits on {device}")
    if epsilon_low < 0 or epsilon_high < 0:
        raise ValueError(f"epsilon_low/epsilon_high must be >= 0, got {epsilon_low}, {epsilon_high}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta > 0 and ref_logprobs is None:
        raise ValueError("beta > 0 needs ref_logprobs")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    if max_completion_length is not None and max_completion_length <= 0:
        raise ValueError(f"max_completion_length must be > 0, got {max_completion_length}")


def check_fused_linear_inputs(
    hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, chunk_size: int | None,
) -> None:
    """Validate ``hidden[..., H]``, ``weight[V, H]``, ``bias[V]`` and ``chunk_size``; raise ``TypeError``/``ValueError``."""
    for name, x in (("hidden", hidden), ("weight", weight), ("bias", bias)):
        if x is None:
            continue
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype not in FLOAT_DTYPES:
            raise TypeError(f"{name} must be float32/bfloat16/float16/float64, got {x.dtype}")
        if x.dtype != hidden.dtype or x.device != hidden.device:
            raise ValueError(f"{name} is {x.dtype} on {x.device} but hidden is {hidden.dtype} on {hidden.device}")
    if weight.dim() != 2 or weight.shape[0] == 0 or hidden.shape[-1] != weight.shape[1]:
        raise ValueError(f"weight must be [V, H] with V > 0 and H = hidden.shape[-1] = {hidden.shape[-1]}, "
                         f"got {tuple(weight.shape)}")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ValueError(f"bias must be [V] = ({weight.shape[0]},), got {tuple(bias.shape)}")
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"chunk_size must be a positive int or None, got {chunk_size!r}")


def loss_weights(completion_mask: torch.Tensor, loss_type: str, max_completion_length: int | None) -> torch.Tensor:
    """Per-token weights ``w[B, T]`` (fp32) with ``loss = Σ w · per_token_loss`` for each loss type.

    ``grpo``: ``m / (B · max(1, Σ_t m))``; ``dr_grpo``: ``m / (B · L)`` with ``L = max_completion_length``
    (default ``T``); ``dapo``: ``m / max(1, Σ m)`` — the TRL normalisations rewritten as weights.
    """
    m = completion_mask.to(torch.float32)
    b, t = m.shape
    if loss_type == "grpo":
        return m / (m.sum(dim=1, keepdim=True).clamp(min=1.0) * b)
    if loss_type == "dr_grpo":
        length = t if max_completion_length is None else max_completion_length
        return m / float(b * length)
    if loss_type == "dapo":
        return m / m.sum().clamp(min=1.0)
    raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")


def masked_clip_ratio(clipped: torch.Tensor, completion_mask: torch.Tensor) -> torch.Tensor:
    """0-dim fp32 tensor: fraction (0..1) of completion tokens flagged in ``clipped[B, T]``; 0 when there are none.

    Stays on the device (no host sync).
    """
    mask = completion_mask.to(torch.float32)
    return (clipped.to(torch.float32) * mask).sum() / mask.sum().clamp(min=1.0)
