"""Build the policy model and save/load checkpoints (``torch.save`` of a plain dict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ._config import TrainConfig
from ._model import TinyGPT, TinyGPTConfig
from ._tokenizer import ByteTokenizer

__all__ = ["build_model", "load_checkpoint", "save_checkpoint"]


def build_model(cfg: TrainConfig) -> tuple[torch.nn.Module, Any]:
    """``(model, tokenizer)`` for ``cfg``: a checkpoint, a HF directory, or a fresh seeded TinyGPT.

    Raises:
        ImportError / FileNotFoundError / ValueError: see :func:`load_checkpoint` and ``load_hf_model``.
    """
    if cfg.init_checkpoint:
        return load_checkpoint(cfg.init_checkpoint)
    if cfg.hf_checkpoint:
        from ._hf import load_hf_model

        return load_hf_model(cfg.hf_checkpoint)
    tok = ByteTokenizer()
    torch.manual_seed(cfg.seed)
    model = TinyGPT(TinyGPTConfig(vocab_size=tok.vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer,
                                  n_head=cfg.n_head, n_embd=cfg.n_embd))
    return model, tok


def save_checkpoint(path: str | Path, model: torch.nn.Module, *, step: int, config: TrainConfig,
                    tokenizer: Any = None) -> Path:
    """Write ``{"kind", "model_config", "state_dict", "step", "train_config"}`` to ``path``.

    A HF-backed model is also saved with ``save_pretrained`` into ``<path stem>_hf/`` (recorded
    relative to ``path``, so the run folder can be moved), together with its Hugging Face
    tokenizer when ``tokenizer`` is an :class:`HFTokenizer` — without it, loading would fall
    back to the byte tokenizer. Returns ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(model, TinyGPT):
        payload: dict[str, Any] = {"kind": "tinygpt", "model_config": model.config.to_dict(),
                                   "state_dict": model.state_dict()}
    else:
        hf_dir = path.with_name(path.stem + "_hf")
        hf_model: Any = model.hf  # the HFCausalLM adapter's wrapped transformers model
        hf_model.save_pretrained(hf_dir)
        hf_tok = getattr(tokenizer, "tok", None)
        if hf_tok is not None:
            hf_tok.save_pretrained(hf_dir)
        payload = {"kind": "hf", "hf_dir": hf_dir.name}
    payload.update(step=step, train_config=config.to_dict())
    torch.save(payload, path)
    return path


def load_checkpoint(path: str | Path) -> tuple[torch.nn.Module, Any]:
    """``(model, tokenizer)`` from a file written by :func:`save_checkpoint`.

    Raises:
        FileNotFoundError: no such file. ValueError: not a checkpoint of this trainer.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("kind") not in ("tinygpt", "hf"):
        raise ValueError(f"{path} is not a checkpoint written by rft_sdk.train")
    if payload["kind"] == "hf":
        from ._hf import load_hf_model

        return load_hf_model(path.parent / payload["hf_dir"])  # relative to the checkpoint (absolute kept)
    model = TinyGPT(TinyGPTConfig(**payload["model_config"]))
    model.load_state_dict(payload["state_dict"])
    return model, ByteTokenizer()
