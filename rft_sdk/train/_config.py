"""``TrainConfig``: every knob of an SFT + GRPO run, with its default and why."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from rft_sdk.kernels import LOSS_TYPES

from ._schedule import LR_SCHEDULES

__all__ = ["TrainConfig"]


@dataclass
class TrainConfig:
    """Configuration of :func:`rft_sdk.train.train` (JSON: the same keys, see ``from_dict``)."""

    seed: int = 0  # seeds torch, item sampling and every sampled token: same seed, same run
    # --- model -----------------------------------------------------------------
    n_layer: int = 2  # transformer blocks of the from-scratch TinyGPT
    n_head: int = 4  # attention heads
    n_embd: int = 128  # width (~0.43 M parameters with 2 layers)
    block_size: int = 320  # longest prompt + completion, in bytes/tokens
    hf_checkpoint: str | None = None  # a local Hugging Face causal-LM dir instead of TinyGPT (needs transformers)
    init_checkpoint: str | None = None  # a checkpoint.pt written by a previous run to start from
    # --- rendering / sampling --------------------------------------------------
    max_new_tokens: int = 64  # most tokens per assistant turn (a get_order_status call is 57)
    max_tool_chars: int = 200  # tool outputs are cut to this many characters in the prompt
    temperature: float = 1.0  # sampling temperature of GRPO rollouts (also used in the loss, as TRL)
    eval_temperature: float = 0.0  # 0 = greedy decoding for held-out evaluation
    max_episode_steps: int | None = None  # model turns per rollout; None = the job's value
    # --- SFT warm start ----------------------------------------------------------
    sft_steps: int = 0  # 0 skips SFT; demonstrations come from items' actions/reference_answer
    sft_demos: int | None = None  # how many train items to demonstrate (None = all)
    sft_batch_size: int = 32  # demonstration turns per SFT step
    sft_lr: float = 3e-3  # AdamW learning rate of SFT
    sft_target_loss: float | None = None  # stop SFT once its 10-step mean loss is <= this (sft_steps is the cap)
    # --- GRPO -------------------------------------------------------------------
    steps: int = 20  # GRPO steps (one sampling round + update each)
    max_train_s: float | None = None  # wall-clock budget of the whole run, SFT warm start and GRPO together
    sft_budget_share: float = 0.5  # with max_train_s: SFT (demonstrations + steps) stops at this share of it
    items_per_step: int = 8  # items per step, drawn without replacement from a shuffled epoch
    group_size: int = 8  # G: rollouts per item (the group of GRPO)
    lr: float = 1e-3  # peak AdamW learning rate of GRPO
    lr_schedule: str = "cosine"  # "cosine" (decay to min_lr_ratio * lr by the planned last step) | "constant"
    warmup_steps: int = 10  # linear lr warmup over the first GRPO steps (0 = none)
    min_lr_ratio: float = 0.1  # cosine floor, as a fraction of lr
    weight_decay: float = 0.0  # AdamW weight decay
    adam_betas: tuple[float, float] = (0.9, 0.99)  # AdamW betas
    grad_clip: float = 1.0  # max global gradient norm
    loss_type: str = "grpo"  # "grpo" | "dr_grpo" | "dapo" (TRL's normalisations, see kernels.reference)
    epsilon_low: float = 0.2  # PPO/GRPO ratio clip, lower side
    epsilon_high: float = 0.2  # upper side (DAPO's clip-higher uses e.g. 0.28)
    beta: float = 0.0  # KL weight to the frozen post-SFT reference (0 = no reference model, as TRL now defaults)
    scale_rewards: bool = True  # divide advantages by the group std (False = Dr. GRPO)
    num_iterations: int = 1  # updates per sampled batch (TRL's mu); 1 = strictly on-policy
    log_ref_kl: bool = True  # also measure KL to the frozen post-SFT reference when beta == 0 (one extra forward)
    skip_zero_advantage: bool = True  # drop turns whose advantage is 0 (all-equal groups; DAPO dynamic sampling)
    # --- evaluation, checkpoints -------------------------------------------------
    eval_every: int = 0  # evaluate held-out items every N GRPO steps (0 = only before and after)
    eval_items: int | None = None  # how many held-out items to evaluate (None = all)
    eval_sampled: bool = False  # also evaluate held-out at the GRPO sampling temperature (what GRPO optimises)
    checkpoint_every: int = 0  # save checkpoint.pt every N steps (0 = only at the end)
    keep_best: bool = True  # also keep the weights of the best held-out evaluation (best.pt)
    min_steps_to_learn: int = 50  # warn when the wall-clock budget fits fewer GRPO steps than this
    max_concurrency: int = 256  # rollouts in flight at once (the policy batches their turns)
    progress: bool = True  # tqdm progress bars on stderr

    def __post_init__(self) -> None:
        """Validate. Raises ValueError naming the field."""
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {self.lr_schedule!r}")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {self.loss_type!r}")
        if self.sft_target_loss is not None and self.sft_target_loss < 0:
            raise ValueError(f"sft_target_loss must be >= 0, got {self.sft_target_loss}")
        if self.temperature <= 0:
            raise ValueError("temperature must be > 0 for GRPO sampling")
        for name in ("steps", "sft_steps", "eval_every", "checkpoint_every", "warmup_steps", "min_steps_to_learn"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        for name in ("items_per_step", "group_size", "num_iterations", "sft_batch_size", "max_new_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if not 0.0 < self.sft_budget_share <= 1.0:
            raise ValueError(f"sft_budget_share must be in (0, 1], got {self.sft_budget_share}")
        if self.group_size < 2 and self.steps:
            raise ValueError("group_size must be >= 2: GRPO advantages compare samples of one item")
        self.adam_betas = tuple(self.adam_betas)  # type: ignore[assignment]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Build from a JSON object. Raises ValueError on unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown training config keys: {sorted(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable copy."""
        return asdict(self)


