"""A small GRPO trainer that learns through the customer's real tool and grader endpoints.

CPU-only, nothing downloaded: a byte-level :class:`TinyGPT` policy (or a local
Hugging Face checkpoint), rendered/parsed by ``_render``, sampled through the
emulator's rollout loop, trained with SFT and then GRPO (``kernels.grpo_loss``).
Entry points: :func:`train` (programmatic) and ``rft train`` (``cli.py``).
"""

from ._advantages import group_advantages
from ._batch import TokenBatch, completion_logits, make_batch
from ._checkpoint import build_model, load_checkpoint, save_checkpoint
from ._config import TrainConfig
from ._generate import Completion, generate
from ._hf import HFCausalLM, HFTokenizer, load_hf_model
from ._metrics import MetricsLog, plot_rewards
from ._model import TinyGPT, TinyGPTConfig
from ._policy import TorchPolicy
from ._render import ParsedOutput, format_call, parse_output, render_prompt, render_tools
from ._sft import DemonstrationPolicy, sft_train
from ._tokenizer import ByteTokenizer
from ._trainer import TrainResult, evaluate, train

__all__ = [
    "ByteTokenizer",
    "Completion",
    "DemonstrationPolicy",
    "HFCausalLM",
    "HFTokenizer",
    "MetricsLog",
    "ParsedOutput",
    "TinyGPT",
    "TinyGPTConfig",
    "TokenBatch",
    "TorchPolicy",
    "TrainConfig",
    "TrainResult",
    "build_model",
    "completion_logits",
    "evaluate",
    "format_call",
    "generate",
    "group_advantages",
    "load_checkpoint",
    "load_hf_model",
    "make_batch",
    "parse_output",
    "plot_rewards",
    "render_prompt",
    "render_tools",
    "save_checkpoint",
    "sft_train",
    "train",
]
