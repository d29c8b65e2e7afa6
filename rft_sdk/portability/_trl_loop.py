"""TRL's own ``GRPOTrainer`` environment loop, run on CPU with a scripted policy (trl 1.16, transformers 5).

What is TRL's own code here, unchanged: ``GRPOTrainer(model, processing_class, args=GRPOConfig(...),
train_dataset=hosted_dataset(items), environment_factory=ToolServerEnvironment(...),
reward_funcs=[environment.grader_reward])`` and ``trainer.train()`` for one optimizer step. In that step TRL's
``RepeatSampler`` draws ``num_generations`` rollouts of every item; the trainer draws one
:class:`~rft_sdk.integrations.trl.RolloutEnvironment` per rollout from its pool and calls ``reset(**row)``; it
renders every prompt with the environment's tool methods as the tool schema (TRL's Qwen2.5 chat template, which TRL
finds prefix-preserving and so keeps); generates with ``transformers``' ``generate`` (sampling at TRL's default
temperature 1.0); parses each turn with ``trl.chat_template_utils.parse_response`` (TRL's Qwen response template,
set by ``add_response_schema``); calls the tool methods the model named with the arguments it wrote; appends each
result as TRL renders tool turns (``_get_tool_suffix_ids``) and generates again until a turn has no tool call; calls
``grader_reward`` with the rollouts' environments, computes the group advantages, and takes the optimizer step
through the fused LM-head loss it patches into the model.

What is scripted: the model, and only the model. :func:`scripted_policy` is a ``transformers`` causal LM
(``PreTrainedModel`` + ``GenerationMixin``) whose backbone, instead of attention layers, reads the token ids it is
given and puts, at every position, the *script's* next token into its hidden state (a one-hot vector of the
vocabulary, times :data:`SCRIPT_SCALE`); its LM head is a trainable ``vocab x vocab`` linear layer initialised to
the identity (the parameters GRPO's step updates). The script of a sequence: the dataset item whose user message
its prompt holds; for its k-th assistant turn (counted by ``<|im_start|>assistant\\n`` markers) the item's k-th call
(:func:`~._target.replay_actions`: the gold calls, or all but the last) as Qwen's ``<tool_call>`` JSON, then the
item's ``reference_answer``, each followed by ``<|im_end|>``; anywhere else ``<|im_end|>``. The logit margin of
:data:`SCRIPT_SCALE` makes sampling pick the script's token (any other token has probability < 1e-25 per step).
The tokenizer (:func:`byte_tokenizer`) is byte-level, built in memory (no download): one token per byte, so any text
round-trips; it carries TRL's own Qwen2.5 chat template. Nothing is downloaded and no network is used.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

from ._target import replay_actions

__all__ = ["SCRIPT_SCALE", "byte_tokenizer", "scripted_policy", "trl_trainer_rollouts"]

#: the scripted next token's logit (every other token's is 0 before the trainable head's update)
SCRIPT_SCALE = 64.0
_ASSISTANT = "<|im_start|>assistant\n"


def byte_tokenizer() -> Any:
    """A ``PreTrainedTokenizerFast`` with TRL's Qwen2.5 chat template (``trl.chat_template_utils.qwen2_5_chat_template``):
    byte-level BPE without merges (every byte one token), special tokens ``<|im_start|>`` and ``<|im_end|>`` (also
    EOS and pad), left padding. Vocabulary: 256 bytes + 2."""
    from trl.chat_template_utils import qwen2_5_chat_template

    from ._verl_loop import chatml_tokenizer

    tokenizer = chatml_tokenizer()
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.padding_side = "left"
    return tokenizer


def _script_turns(tokenizer: Any, item: dict[str, Any]) -> list[list[int]]:
    turns = ["<tool_call>\n" + json.dumps({"name": call["name"], "arguments": call.get("arguments") or {}})
             + "\n</tool_call>" for call in replay_actions(item)]
    turns.append(str(item["reference_answer"]))
    return [tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id] for text in turns]


def _user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in messages if m.get("role") == "user")


def _policy_classes() -> tuple[type, type]:
    """``(ScriptedLMConfig, ScriptedLM)``: built on first use (``torch``/``transformers`` are imported
    only by a caller that plays TRL)."""
    import numpy as np
    import torch
    from torch import nn
    from transformers import GenerationMixin, PretrainedConfig, PreTrainedModel
    from transformers.modeling_outputs import BaseModelOutput, CausalLMOutput

    class ScriptedLMConfig(PretrainedConfig):  # type: ignore[no-untyped-call]
        model_type = "rft_scripted_policy"

        def __init__(self, vocab_size: int = 258, max_position_embeddings: int = 1 << 20, **kwargs: Any) -> None:
            self.vocab_size = vocab_size
            self.hidden_size = vocab_size
            self.max_position_embeddings = max_position_embeddings  # no position limit: TRL's tool loop reads it
            super().__init__(**kwargs)

    class Script(nn.Module):
        """The backbone: token ids → the script's next token per position, one-hot times the scale."""

        def __init__(self, tokenizer: Any, items: list[dict[str, Any]]) -> None:
            super().__init__()
            self.tokenizer, self.items = tokenizer, items
            self.vocab = len(tokenizer)
            self.eos = int(tokenizer.eos_token_id)
            self.im_start = int(tokenizer.convert_tokens_to_ids("<|im_start|>"))
            self.marker = np.array(tokenizer.encode(_ASSISTANT, add_special_tokens=False))
            self.users = [f"<|im_start|>user\n{_user(item['messages'])}" for item in items]
            self.turns = [_script_turns(tokenizer, item) for item in items]
            self.prompts: dict[bytes, int] = {}  # memo: prompt ids → item index (a pure function of the ids)

        def _item(self, prompt: Any) -> int:
            key = prompt.tobytes()
            if key not in self.prompts:
                text = self.tokenizer.decode(prompt.tolist())
                matches = [i for i, user in enumerate(self.users) if user in text]
                if len(matches) != 1:
                    raise ValueError(f"the prompt names {len(matches)} dataset items, not one")
                self.prompts[key] = matches[0]
            return self.prompts[key]

        def targets(self, row: Any, keep: int) -> Any:
            """The script's next token after each of the last ``keep`` positions of ``row`` (all when 0)."""
            out = np.full(len(row), self.eos, dtype=np.int64)
            starts = np.flatnonzero(row == self.im_start)
            width = len(self.marker)
            fits = starts[starts + width <= len(row)]
            turn_starts = fits[(row[fits[:, None] + np.arange(width)] == self.marker).all(axis=1)] + width
            if starts.size and turn_starts.size:
                turns = self.turns[self._item(row[starts[0]:turn_starts[0] - width])]
                for k, begin in enumerate(turn_starts[:len(turns)].tolist()):
                    script = turns[k][:len(row) - begin + 1]  # position p predicts token p + 1
                    out[begin - 1:begin - 1 + len(script)] = script
            return out[len(row) - keep:] if keep else out

        def forward(self, input_ids: Any = None, attention_mask: Any = None, logits_to_keep: int = 0,
                    **kwargs: Any) -> Any:
            rows = input_ids.cpu().numpy()
            keep = int(logits_to_keep) if isinstance(logits_to_keep, int) else 0
            picked = torch.from_numpy(np.stack([self.targets(row, keep) for row in rows]))
            hidden = torch.zeros(*picked.shape, self.vocab, dtype=torch.float32, device=input_ids.device)
            hidden.scatter_(-1, picked.unsqueeze(-1).to(input_ids.device), SCRIPT_SCALE)
            return BaseModelOutput(last_hidden_state=hidden)

    class ScriptedLM(PreTrainedModel, GenerationMixin):  # type: ignore[no-untyped-call]
        """See the module docstring: the script as backbone, a trainable identity-initialised LM head."""

        config_class = ScriptedLMConfig
        base_model_prefix = "model"
        main_input_name = "input_ids"

        def __init__(self, config: Any, tokenizer: Any, items: list[dict[str, Any]]) -> None:
            super().__init__(config)
            self.model = Script(tokenizer, items)
            self.lm_head = nn.Linear(config.vocab_size, config.vocab_size, bias=False)
            self.post_init()  # type: ignore[no-untyped-call]
            with torch.no_grad():
                self.lm_head.weight.copy_(torch.eye(config.vocab_size))

        def _init_weights(self, module: Any) -> None:  # the identity head is set after post_init
            return

        def get_output_embeddings(self) -> Any:
            return self.lm_head

        def forward(self, input_ids: Any = None, attention_mask: Any = None, logits_to_keep: int = 0,
                    **kwargs: Any) -> Any:
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                logits_to_keep=logits_to_keep).last_hidden_state
            return CausalLMOutput(logits=self.lm_head(hidden))

    return ScriptedLMConfig, ScriptedLM


def scripted_policy(tokenizer: Any, items: list[dict[str, Any]]) -> Any:
    """The scripted policy for ``items`` (see the module docstring), float32 on CPU."""
    config_class, policy_class = _policy_classes()
    config = config_class(vocab_size=len(tokenizer), eos_token_id=tokenizer.eos_token_id,
                          pad_token_id=tokenizer.pad_token_id)
    model = policy_class(config, tokenizer, items)
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(  # type: ignore[no-untyped-call]
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, use_cache=False)
    return model


def trl_trainer_rollouts(base_url: str, token: str | None, grader: str | None, items: list[dict[str, Any]],
                         generations: int = 4, seed: int = 0, environment: Any = None) -> dict[str, Any]:
    """One ``GRPOTrainer`` optimizer step (``trainer.train()``, ``max_steps=1``) over ``items`` x ``generations``
    rollouts, generated as one batch (see the module docstring); ``environment``: the
    :class:`~rft_sdk.integrations.trl.ToolServerEnvironment` to train with (default: one for ``base_url``, ``token``,
    ``grader``, closed at the end).

    Returns:
        ``{"rollouts", "seconds", "global_step", "log"}``: ``rollouts`` one dict per rollout in TRL's order,
        ``{"trace_id", "index", "task_id", "reward", "completion", "metrics", "tool_calls"}``: ``reward`` and ``completion``
        (the messages TRL parsed and built: assistant turns with the ``tool_calls`` it parsed, the tool turns it
        appended) as TRL recorded them (``GRPOTrainer._logs``) beside the ``trace_id`` the reward function logged
        (``log_extra``), ``index`` (in ``items``) and ``task_id`` of the item whose user message TRL's logged prompt
        holds (items need distinct user messages), ``metrics`` and
        ``tool_calls`` the grader's sub-scores and the calls sent (``ToolServerEnvironment.records``);
        ``seconds`` the wall time of ``trainer.train()``; ``log`` TRL's logged metrics of the step.

    Raises:
        RuntimeError: TRL did not record one reward per rollout.
        ValueError: ``generations`` < 2 (GRPO's group), or two items with the same user message.
    """
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer  # type: ignore[attr-defined]  # trl's lazy module

    from ..integrations.trl import ToolServerEnvironment, hosted_dataset

    users = [_user(item["messages"]) for item in items]
    if len(set(users)) != len(users):
        raise ValueError("items with the same user message cannot be told apart by a policy that sees only the "
                         "prompt; play them in separate runs")
    own = environment is None
    if own:
        environment = ToolServerEnvironment(base_url, token=token, grader=grader, timeout_s=120.0)
    count = len(items) * generations
    micro = next(b for b in (8, 4, 2, 1) if count % b == 0)  # the training forward in micro-batches (memory)
    longest = max(len(replay_actions(item)) for item in items)
    threads = torch.get_num_threads()
    try:
        with tempfile.TemporaryDirectory(prefix="rft-trl-loop-") as out:
            args = GRPOConfig(
                output_dir=out, max_steps=1, per_device_train_batch_size=micro,
                gradient_accumulation_steps=count // micro, num_generations=generations,
                max_completion_length=1 << 16, max_tool_calling_iterations=longest + 1, learning_rate=1e-6,
                logging_steps=1, save_strategy="no", report_to="none", use_cpu=True, bf16=False, seed=seed,
                dataloader_num_workers=0, disable_tqdm=True, generation_kwargs={"use_cache": False},
                activation_checkpointing=False)  # no layers to checkpoint (TRL turns it on by default)
            tokenizer = byte_tokenizer()
            trainer = GRPOTrainer(model=scripted_policy(tokenizer, items), processing_class=tokenizer, args=args,
                                  train_dataset=hosted_dataset(items), environment_factory=environment,
                                  reward_funcs=[environment.grader_reward])
            trainer.remove_callback(PrinterCallback)  # it prints every log dict to stdout (the caller's table)
            torch.set_num_threads(1)  # the policy's tensors are rows x 258: a thread pool only adds contention
            start = time.perf_counter()
            trainer.train()
            seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
        if own:
            environment.close()
    logs: Any = trainer._logs  # TRL's per-rollout record of the batch (prompt, completion, rewards, logged extras)
    rewards = list(logs["rewards"]["grader_reward"])
    trace_ids = list(logs["extra"]["trace_id"])
    completions = list(logs["completion"])
    if not len(rewards) == len(trace_ids) == len(completions) == count:
        raise RuntimeError(f"TRL recorded {len(rewards)} rewards, {len(trace_ids)} trace_ids and "
                           f"{len(completions)} completions for {count} rollouts")
    records = {r.trace_id: r for r in environment.records}
    by_user = {_user(item["messages"]): index for index, item in enumerate(items)}
    rollouts = []
    for trace_id, reward, prompt, completion in zip(trace_ids, rewards, logs["prompt"], completions):
        record, index = records[trace_id], by_user[_user(prompt)]
        rollouts.append({"trace_id": trace_id, "index": index, "task_id": items[index].get("task_id"),
                         "reward": reward, "completion": completion, "metrics": record.subscores,
                         "tool_calls": record.tool_calls})
    entry = next((e for e in trainer.state.log_history if "loss" in e), {})
    return {"rollouts": rollouts, "seconds": seconds, "global_step": trainer.state.global_step, "log": entry}
