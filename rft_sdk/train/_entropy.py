"""Per-token entropy of the policy, computed in row chunks (no ``[B, T, V]`` log-softmax temporary).

For the logits ``z`` of one position at temperature ``T`` (``x = z / T``):
``H = -sum_v p_v log p_v = logsumexp(x) - sum_v p_v x_v`` with ``p = softmax(x)``
(since ``log p_v = x_v - logsumexp(x)`` and ``sum_v p_v = 1``). Rows are
processed ``chunk_rows`` at a time, so the only temporaries are
``[chunk_rows, V]``; the full ``[B, T, V]`` log-softmax the GRPO kernels avoid
is never built.
"""

from __future__ import annotations

import torch

__all__ = ["token_entropy"]


@torch.no_grad()
def token_entropy(logits: torch.Tensor, temperature: float = 1.0, *, chunk_rows: int = 1024) -> torch.Tensor:
    """Entropy in nats of ``softmax(logits / temperature)`` at every position.

    Args:
        logits: ``[..., V]`` (e.g. ``[B, T, V]``), any float dtype; not modified, no gradient taken.
        temperature: > 0.
        chunk_rows: positions processed at once (bounds the temporaries to ``[chunk_rows, V]`` fp32).

    Returns: ``[...]`` fp32 (``logits.shape[:-1]``).

    Raises:
        ValueError: ``temperature <= 0`` or ``chunk_rows < 1``.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    flat = logits.detach().reshape(-1, logits.shape[-1])
    out = torch.empty(flat.shape[0], dtype=torch.float32, device=logits.device)
    for start in range(0, flat.shape[0], chunk_rows):
        x = flat[start:start + chunk_rows].float() / temperature
        lse = torch.logsumexp(x, dim=-1)
        p = torch.softmax(x, dim=-1)
        out[start:start + chunk_rows] = lse - (p * x).sum(-1)
    return out.reshape(logits.shape[:-1])
