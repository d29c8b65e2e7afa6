"""A small nanoGPT-style causal transformer that trains from scratch on CPU.

Architecture (after Karpathy's nanoGPT, https://github.com/karpathy/nanoGPT):
token embeddings with rotary position embeddings in attention (RoPE, Su et al.
2021, arXiv:2104.09864; learned absolute position embeddings with ``rope=False``), ``n_layer`` pre-LayerNorm blocks of
causal multi-head self-attention (``torch.nn.functional.scaled_dot_product_attention``)
and a 4x GELU MLP, a final LayerNorm and an output head tied to the token
embedding. It keeps a per-layer key/value cache for fast sampling.

The call convention is shared with the Hugging Face adapter (``_hf.py``) so the
policy and the trainer drive either the same way::

    logits, cache = model(input_ids, attention_mask=mask, position_ids=pos, cache=cache)

- ``input_ids``: ``[B, S]`` int64, the new tokens.
- ``attention_mask``: ``[B, P + S]`` (``P`` cached positions) with 1 for real
  tokens and 0 for padding; ``None`` means all real. Padding may sit anywhere
  (left padding for batched sampling, right padding for training).
- ``position_ids``: ``[B, S]`` int64; ``None`` means ``P .. P+S-1``.
- returns ``logits`` ``[B, S, vocab_size]`` fp32 and the updated cache
  (a list of ``(k, v)`` per layer, each ``[B, n_head, P + S, head_dim]``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["TinyGPT", "TinyGPTConfig"]

KVCache = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass
class TinyGPTConfig:
    """Shape of a :class:`TinyGPT`; the defaults (~0.8 M parameters) train on 2 CPU cores."""

    vocab_size: int = 259  # ByteTokenizer: 256 bytes + BOS/EOS/PAD
    block_size: int = 320  # longest sequence (prompt + completion), in tokens
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # attention heads per block
    n_embd: int = 128  # model width; must be divisible by n_head
    dropout: float = 0.0  # dropout in attention/MLP; 0 keeps RL sampling and training consistent
    rope: bool = True  # rotary position embeddings (relative offsets: copying learns fast) instead of learned ones
    rope_base: float = 10000.0  # RoPE frequency base (Su et al. 2021, arXiv:2104.09864)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable copy (stored in checkpoints)."""
        return asdict(self)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Apply RoPE to ``x`` ``[B, H, S, hd]`` with ``cos``/``sin`` ``[B, 1, S, hd/2]`` (half-split layout)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class _Block(nn.Module):
    def __init__(self, cfg: TinyGPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.fc_out = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.p_drop = cfg.dropout

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, past: tuple[torch.Tensor, torch.Tensor] | None,
        rot: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.n_head, d // self.n_head).transpose(1, 2) for t in (q, k, v))
        if rot is not None:
            q, k = _rotate(q, *rot), _rotate(k, *rot)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        p = self.p_drop if self.training else 0.0
        if mask is None:  # no padding, no cache: plain causal attention
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        y = y.transpose(1, 2).contiguous().view(b, s, d)
        x = x + self.drop(self.proj(y))
        x = x + self.drop(self.fc_out(F.gelu(self.fc(self.ln2(x)))))
        return x, (k, v)


class TinyGPT(nn.Module):
    """Causal byte-level transformer; see the module docstring for the call convention."""

    def __init__(self, config: TinyGPTConfig | None = None) -> None:
        super().__init__()
        cfg = config or TinyGPTConfig()
        if cfg.n_embd % cfg.n_head:
            raise ValueError(f"n_embd={cfg.n_embd} is not divisible by n_head={cfg.n_head}")
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = None if cfg.rope else nn.Embedding(cfg.block_size, cfg.n_embd)
        half = cfg.n_embd // cfg.n_head // 2
        inv_freq = 1.0 / cfg.rope_base ** (torch.arange(half, dtype=torch.float32) / half)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # weight tying (nanoGPT)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2 scaled init of residual projections
            if name.endswith(("proj.weight", "fc_out.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    @property
    def block_size(self) -> int:
        """Longest supported sequence, in tokens."""
        return self.config.block_size

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> tuple[torch.Tensor, KVCache]:
        """Logits ``[B, S, V]`` for ``input_ids`` ``[B, S]`` and the extended cache.

        Raises:
            ValueError: a position is >= ``block_size``, or mask/cache shapes disagree.
        """
        b, s = input_ids.shape
        past_len = 0 if cache is None else cache[0][0].shape[2]
        if position_ids is None:
            position_ids = torch.arange(past_len, past_len + s, device=input_ids.device).expand(b, s)
        if int(position_ids.max()) >= self.config.block_size:
            raise ValueError(f"position {int(position_ids.max())} exceeds block_size={self.config.block_size}")
        mask = None
        if attention_mask is not None or past_len:
            total = past_len + s
            if attention_mask is None:
                attention_mask = torch.ones(b, total, dtype=torch.bool, device=input_ids.device)
            if attention_mask.shape != (b, total):
                raise ValueError(f"attention_mask has shape {tuple(attention_mask.shape)}, expected {(b, total)}")
            q_idx = torch.arange(past_len, total, device=input_ids.device)[:, None]
            k_idx = torch.arange(total, device=input_ids.device)[None, :]
            causal = k_idx <= q_idx  # [S, total]
            keep = attention_mask.bool()[:, None, :] | (k_idx == q_idx)[None]  # a pad row sees itself: no NaN
            mask = (causal[None] & keep)[:, None]  # [B, 1, S, total]
        x = self.wte(input_ids)
        rot = None
        if self.wpe is not None:
            x = x + self.wpe(position_ids)
        else:
            inv_freq: torch.Tensor = self.inv_freq  # type: ignore[assignment]  # a registered buffer
            angles = position_ids[:, None, :, None].float() * inv_freq  # [B, 1, S, hd/2]
            rot = (angles.cos(), angles.sin())
        new_cache: KVCache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, None if cache is None else cache[i], rot)
            new_cache.append(kv)
        return self.head(self.ln_f(x)).float(), new_cache
