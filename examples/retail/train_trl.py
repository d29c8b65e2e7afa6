"""Train on the retail server with TRL's ``GRPOTrainer`` — a tiny local model, nothing downloaded.

The order-status task (``order_status_task.py``): each item asks for an order's
status; the tool is ``get_order_status``, the reward is the retail server's
``order_status`` grader. Each generation is one rollout with its own
``trace_id``; its tool calls and its grade go over HTTP to the real server
(``rft_sdk.integrations.trl.ToolServerEnvironment``).

The model is a randomly initialised 2-layer Qwen2 built from a config, the
tokenizer a byte-level BPE trained here on the task's own text and wrapped with
the Qwen2.5 chat template that TRL ships (so TRL parses ``<tool_call>`` blocks
with its known response template). Such a model rarely writes a valid tool
call, so ``--seed-first-call`` (on by default here) sends each item's first gold
action at ``reset`` (recorded under the rollout's ``trace_id`` like any call)
and shows its output to the model; the model still generates every completion,
and any tool call it does write is executed too.

Run (serves the retail example with ``rft serve`` unless ``--base-url`` is given)::

    python -m examples.retail.train_trl --steps 4

It prints steps/s, tool calls per rollout and the grader's mean reward.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Iterable
from typing import Any

__all__ = ["build_tiny_model", "build_tokenizer", "main", "train"]

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


def build_tokenizer(texts: Iterable[str], vocab_size: int = 1024) -> Any:
    """A byte-level BPE tokenizer trained on ``texts``, as a ``PreTrainedTokenizerFast``.

    Carries TRL's Qwen2.5 chat template (``trl.chat_template_utils.qwen2_5_chat_template``),
    Qwen's special tokens (``<|im_start|>``, ``<|im_end|>``, ``<|endoftext|>``: pad/eos)
    and the tool-call markers as added tokens. Left padding (``GRPOTrainer`` needs it).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        padding_side="left")
    tokenizer.add_tokens(ADDED_TOKENS)
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def build_tiny_model(tokenizer: Any, *, hidden_size: int = 64, layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised ``Qwen2ForCausalLM`` sized for ``tokenizer`` (float32, CPU)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model


def _corpus(items: list[dict[str, Any]], tool_definitions: list[dict[str, Any]]) -> list[str]:
    from trl.chat_template_utils import qwen2_5_chat_template

    texts = [qwen2_5_chat_template, json.dumps(tool_definitions), *(json.dumps(d) for d in tool_definitions)]
    for item in items:
        texts += [m["content"] for m in item["messages"]]
        texts += [json.dumps(a) for a in item.get("actions", [])] + [str(item.get("answer", ""))]
    return texts


def train(base_url: str, *, token: str | None = None, steps: int = 2, items: int = 16, generations: int = 2,
          prompts_per_step: int = 2, max_completion_length: int = 24, seed_first_call: bool = True,
          grader: str | None = None, output_dir: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Run ``GRPOTrainer`` for ``steps`` optimisation steps against the retail server at ``base_url``.

    Each step generates ``prompts_per_step * generations`` rollouts (one ``trace_id`` each);
    ``grader`` names the server's grader (default: ``order_status``).

    Returns:
        ``{"trainer", "environment" (the ToolServerEnvironment), "seconds" (wall time of
        trainer.train()), "steps_per_s", "rollouts", "tool_calls_per_rollout", "reward_mean"}``.
    """
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from rft_sdk.integrations.trl import ToolServerEnvironment, hosted_dataset

    from .order_status_task import GRADER_NAME, TOOL_NAME, build_items

    train_items, _ = build_items(seed=seed)
    train_items = train_items[:items]
    environment = ToolServerEnvironment(base_url, token=token, tools=[TOOL_NAME], grader=grader or GRADER_NAME,
                                        seed_first_call=seed_first_call, timeout_s=60.0)
    tokenizer = build_tokenizer(_corpus(train_items, environment.tool_definitions))
    model = build_tiny_model(tokenizer, seed=seed)
    batch = prompts_per_step * generations
    args = GRPOConfig(
        output_dir=output_dir or tempfile.mkdtemp(prefix="rft-trl-"), max_steps=steps,
        per_device_train_batch_size=batch, num_generations=generations, max_completion_length=max_completion_length,
        max_tool_calling_iterations=2, learning_rate=1e-4, temperature=1.0, logging_steps=1, save_strategy="no",
        report_to="none", use_cpu=True, bf16=False, seed=seed, dataloader_num_workers=0, disable_tqdm=True,
    )
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=hosted_dataset(train_items),
                          environment_factory=environment, reward_funcs=[environment.grader_reward])
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    records = list(environment.records)
    scores = [r.score for r in records if r.score is not None]
    return {"trainer": trainer, "environment": environment, "seconds": seconds, "steps_per_s": steps / seconds,
            "rollouts": len(records), "tool_calls_per_rollout": sum(r.tool_calls for r in records) / max(len(records), 1),
            "reward_mean": sum(scores) / max(len(scores), 1)}


def main(argv: list[str] | None = None) -> int:
    """CLI: serve the retail example (or use ``--base-url``), train, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=None, help="a running retail server (default: start one)")
    parser.add_argument("--token", default=os.environ.get("RFT_TOKEN"), help="bearer token (default $RFT_TOKEN)")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--generations", type=int, default=2)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--no-seed-first-call", dest="seed_first_call", action="store_false")
    args = parser.parse_args(argv)

    def run(base_url: str) -> dict[str, Any]:
        return train(base_url, token=args.token, steps=args.steps, generations=args.generations,
                     prompts_per_step=args.prompts_per_step, seed_first_call=args.seed_first_call)

    if args.base_url:
        result = run(args.base_url)
    else:
        from rft_sdk.testing import serve_process

        with serve_process("examples.retail.app:server") as url:
            result = run(url)
    result["environment"].close()
    print(f"steps: {args.steps}  wall: {result['seconds']:.2f} s  steps/s: {result['steps_per_s']:.3f}  "
          f"rollouts: {result['rollouts']}  tool calls/rollout: {result['tool_calls_per_rollout']:.2f}  "
          f"grader reward mean: {result['reward_mean']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
