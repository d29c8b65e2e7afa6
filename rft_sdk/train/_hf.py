"""Optional: drive a local Hugging Face causal-LM checkpoint with the policy/trainer.

Needs ``transformers`` (the ``hf`` extra); nothing is downloaded
(``local_files_only=True``). The adapter gives the model the TinyGPT call
convention of ``_model.py``. If the directory has no tokenizer files, the
byte tokenizer is used (the model's vocabulary must then hold >= 259 ids).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from ._tokenizer import ByteTokenizer

__all__ = ["HFCausalLM", "HFTokenizer", "load_hf_model"]

_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json")


class HFCausalLM(nn.Module):
    """Wrap a ``transformers`` causal LM: ``(logits[B, S, V] fp32, cache) = model(ids, attention_mask=…, …)``.

    A key/value cache is built only when gradients are off (sampling).
    """

    needs_attention_mask = True

    def __init__(self, hf_model: Any) -> None:
        super().__init__()
        self.hf = hf_model

    @property
    def block_size(self) -> int:
        """``config.max_position_embeddings`` (or 2048 when the config lacks it)."""
        return int(getattr(self.hf.config, "max_position_embeddings", 2048))

    def forward(self, input_ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None, cache: Any = None) -> tuple[torch.Tensor, Any]:
        """See ``_model.py`` for shapes; ``cache`` is the model's ``past_key_values``."""
        out = self.hf(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                      past_key_values=cache, use_cache=not torch.is_grad_enabled())
        return out.logits.float(), out.past_key_values


class HFTokenizer:
    """A ``transformers`` tokenizer with the ``ByteTokenizer`` interface (no special tokens added by ``encode``)."""

    def __init__(self, tok: Any) -> None:
        if tok.eos_token_id is None:
            raise ValueError("the checkpoint's tokenizer has no eos token; the policy needs one to end a turn")
        self.tok = tok
        self.eos_id = int(tok.eos_token_id)
        self.bos_id = int(tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id)
        self.pad_id = int(tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
        self.vocab_size = len(tok)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without added special tokens."""
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: Any) -> str:
        """Text of ``ids`` with special tokens skipped."""
        return str(self.tok.decode(list(ids), skip_special_tokens=True))


def load_hf_model(path: str | Path) -> tuple[HFCausalLM, Any]:
    """Load ``(model, tokenizer)`` from a local checkpoint directory.

    Raises:
        ImportError: ``transformers`` is not installed (``pip install 'rft-sdk[hf]'``).
        FileNotFoundError: ``path`` is not a directory.
        ValueError: no tokenizer files and a vocabulary smaller than the byte tokenizer's.
    """
    try:
        import transformers
    except ImportError as exc:
        raise ImportError("loading a Hugging Face checkpoint needs transformers: pip install 'rft-sdk[hf]'") from exc
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no checkpoint directory at {path}")
    hf_model = transformers.AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    if any((path / f).exists() for f in _TOKENIZER_FILES):
        tokenizer: Any = HFTokenizer(transformers.AutoTokenizer.from_pretrained(path, local_files_only=True))
    else:
        tokenizer = ByteTokenizer()
        if hf_model.config.vocab_size < tokenizer.vocab_size:
            raise ValueError(f"{path} has no tokenizer and vocab_size={hf_model.config.vocab_size} < "
                             f"{tokenizer.vocab_size} needed by the byte tokenizer")
    return HFCausalLM(hf_model), tokenizer
