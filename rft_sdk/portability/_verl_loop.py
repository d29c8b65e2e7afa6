"""verl 0.9's own agent loop, run without a GPU: ``ToolAgentLoop.run`` with a scripted token-level model and
verl's ``NaiveRewardManager`` (the ``.venv-verl`` light install: ``docs/verl.md``).

What is verl's own code here: ``ToolAgentLoop`` (as ``rft_sdk.integrations.verl.HostedToolAgentLoop``, instantiated
from the agent-loop config by ``hydra.utils.instantiate`` as ``AgentLoopWorker`` does, driven by its ``run``
state machine: Continuous Token prompt building, the ``hermes`` tool parser, ``_call_tool``'s
create → execute(agent_data) → release per call), the tools from ``initialize_tools_from_config`` on the YAML
``rft_sdk.integrations.verl.tool_config_yaml`` writes, the reward function loaded by ``load_extern_object`` and
called by ``verl.experimental.reward_loop.reward_manager.naive.NaiveRewardManager.run_single`` on a ``DataProto``
built the way ``AgentLoopWorker`` builds it (``responses``, ``attention_mask``, ``tool_extra_fields``).

What stands in for what verl would start (vLLM/SGLang, Ray, a model checkpoint):

- :class:`ScriptedServerManager`: the ``server_manager`` interface the loop calls
  (``generate(request_id=, prompt_ids=, sampling_params=, ...) -> verl.workers.rollout.replica.TokenOutput``);
  it decodes the prompt, finds the dataset item by its user message and answers the item's next gold call as a
  hermes ``<tool_call>`` (Qwen's format), or its reference answer, followed by ``<|im_end|>``;
- :func:`chatml_tokenizer`: a byte-level ``PreTrainedTokenizerFast`` built in memory (no checkpoint download)
  with a ChatML chat template that renders tools and tool calls as Qwen2.5's does; one token per byte.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from ._target import replay_actions

__all__ = ["CHATML_TEMPLATE", "ScriptedServerManager", "chatml_tokenizer", "verl_agent_loop_rollouts"]

#: ChatML with tools (the shape of Qwen2.5's template): a system turn listing the tools, ``<tool_call>`` JSON in
#: assistant turns, tool results as ``<tool_response>`` in a user turn
CHATML_TEMPLATE = (  # no whitespace control and no newline right after a tag (HF renders with trim_blocks)
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}{{ '\\n\\n' }}{% endif %}"
    "# Tools\n<tools>{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}{{ '\\n' }}</tools><|im_end|>"
    "{{ '\\n' }}{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first and tools %}"
    "{% elif message.role == 'assistant' %}<|im_start|>assistant\n{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}<tool_call>\n"
    "{\"name\": {{ call.function.name | tojson }}, \"arguments\": {{ call.function.arguments | tojson }}}"
    "\n</tool_call>{% endfor %}<|im_end|>{{ '\\n' }}"
    "{% elif message.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ message.content }}\n"
    "</tool_response><|im_end|>{{ '\\n' }}"
    "{% else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>{{ '\\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def chatml_tokenizer() -> Any:
    """A ``transformers.PreTrainedTokenizerFast``: byte-level BPE without merges (every byte one token, so any
    text round-trips), special tokens ``<|im_start|>``, ``<|im_end|>`` (also EOS and pad), chat template
    :data:`CHATML_TEMPLATE`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    core = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(sorted(alphabet))}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    fast: Any = PreTrainedTokenizerFast  # untyped in transformers
    tokenizer = fast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|im_end|>",
                     additional_special_tokens=["<|im_start|>"])
    tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer


class ScriptedServerManager:
    """verl's ``server_manager`` interface, scripted: each ``generate`` returns the next turn of the item whose
    first user message the prompt contains (turn = assistant turns already in the prompt): a gold call
    (:func:`~._target.replay_actions`) as ``<tool_call>{"name", "arguments"}</tool_call>``, then the item's
    ``reference_answer``; each followed by ``<|im_end|>`` as a model stops. ``requests`` counts calls per item."""

    def __init__(self, tokenizer: Any, items: list[dict[str, Any]]) -> None:
        self.tokenizer, self.items = tokenizer, items
        self.users = [next(str(m["content"]) for m in item["messages"] if m.get("role") == "user") for item in items]
        self.requests = [0] * len(items)

    async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        text = self.tokenizer.decode(prompt_ids)
        matches = [i for i, user in enumerate(self.users) if f"<|im_start|>user\n{user}<|im_end|>" in text]
        if len(matches) != 1:
            raise ValueError(f"request {request_id}: the prompt names {len(matches)} dataset items, not one")
        index = matches[0]
        self.requests[index] += 1
        turn = text.count("<|im_start|>assistant\n") - 1  # the generation prompt opens one more
        calls = replay_actions(self.items[index])
        if turn < len(calls):
            call = calls[turn]
            reply = "<tool_call>\n" + json.dumps({"name": call["name"], "arguments": call.get("arguments") or {}}) \
                + "\n</tool_call>"
        else:
            reply = str(self.items[index]["reference_answer"])
        ids = self.tokenizer.encode(reply, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[0.0] * len(ids), stop_reason="completed")


async def verl_agent_loop_rollouts(base_url: str, token: str | None, grader: str | None,
                                   items: list[dict[str, Any]], rollouts: int = 1) -> list[dict[str, Any]]:
    """``rollouts`` trajectories per item, all in flight, each one ``ToolAgentLoop.run`` (see the module
    docstring), rewarded by ``NaiveRewardManager.run_single`` calling :func:`rft_sdk.integrations.verl.compute_score`.

    Returns ``[{"trace_id", "reward", "metrics", "task_id", "num_turns", "loop", "solution_str", "output_text"}]``
    (items in order, ``rollouts`` each): ``solution_str`` is what verl's reward manager decoded (all turns),
    ``output_text`` what ``HostedToolAgentLoop`` recorded and the grader scored.
    """
    import asyncio

    import hydra
    import torch
    import yaml
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.tools.tool_registry import initialize_tools_from_config
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.utils.import_utils import load_extern_object

    from ..integrations.verl import agent_loop_config_yaml, tool_config_yaml, verl_row

    os.environ.update({"RFT_VERL_URL": base_url, "RFT_AUTH_TOKEN": token or "", "RFT_VERL_GRADER": grader or ""})
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        handle.write(tool_config_yaml(base_url, token=token))
    try:
        tools = initialize_tools_from_config(handle.name)
    finally:
        os.unlink(handle.name)
    # the agent-loop registry as AgentLoopWorker fills it from `rollout.agent.agent_loop_config_path`
    registry = {entry["name"]: OmegaConf.create(entry) for entry in yaml.safe_load(agent_loop_config_yaml())}
    limit = 1 << 20  # tokens are bytes here: no prompt/response cut
    config = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {
            "prompt_length": limit, "response_length": limit, "full_determinism": False,
            "multi_turn": {"max_user_turns": 64, "max_assistant_turns": 64, "max_parallel_calls": 1,
                           "max_tool_response_length": limit, "tool_response_truncate_side": "middle",
                           "format": "hermes"}}},
        "data": {}, "reward": {"reward_manager": {"name": "naive"}}})
    tokenizer = chatml_tokenizer()
    model = ScriptedServerManager(tokenizer, items)
    # the reward function as verl loads `reward.custom_reward_function.path=pkg://...`, `name=compute_score`
    compute_score = load_extern_object("pkg://rft_sdk.integrations.verl", "compute_score")
    reward = NaiveRewardManager(config, tokenizer, compute_score)

    async def trajectory(row: dict[str, Any]) -> dict[str, Any]:
        # one agent loop per trajectory, instantiated as AgentLoopWorker._run_agent_loop does
        loop = hydra.utils.instantiate(config=registry[row["agent_name"]], trainer_config=DictConfigWrap(config),
                                       server_manager=model, tokenizer=tokenizer, processor=None, hf_model_type=None,
                                       dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
                                       tools=ToolListWrap(tools))
        output = await loop.run({"temperature": 1.0}, raw_prompt=row["prompt"], data_source=row["data_source"],
                                reward_model=row["reward_model"], tools_kwargs=row["extra_info"]["tools_kwargs"],
                                extra_info=row["extra_info"])
        response = torch.tensor(output.response_ids, dtype=torch.long)
        data = DataProto.from_dict(
            tensors={"responses": response[None],  # no padding: every position is attended
                     "attention_mask": torch.ones(1, len(output.prompt_ids) + len(response), dtype=torch.long)},
            non_tensors={"data_source": [row["data_source"]], "reward_model": [row["reward_model"]],
                         "extra_info": [dict(row["extra_info"])], "tool_extra_fields": [output.extra_fields]})
        scored = await reward.run_single(data)
        info = dict(scored["reward_extra_info"])
        info.pop("score", None)
        return {"trace_id": output.extra_fields.get("rft_trace_id"), "reward": scored["reward_score"],
                "metrics": info, "num_turns": output.num_turns, "loop": type(loop).__name__,
                "solution_str": tokenizer.decode(output.response_ids, skip_special_tokens=True),
                "output_text": output.extra_fields.get("rft_output_text"),
                "task_id": json.loads(row["extra_info"]["rft_item"]).get("task_id")}

    rows = [verl_row(item, [tool.name for tool in tools]) for item in items for _ in range(rollouts)]
    return list(await asyncio.gather(*(trajectory(row) for row in rows)))
