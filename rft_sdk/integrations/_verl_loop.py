"""``HostedToolAgentLoop``: verl's ``ToolAgentLoop`` that also records the text the grader must see.

verl's reward managers hand the reward function ``solution_str`` = the decoded response of **all** turns (the
model's tool calls, every tool result, the final answer: ``NaiveRewardManager.run_single`` decodes the whole
``responses`` row). The hosted wire grades the final answer alone (``sample.output_text``), and a grader
scoring the transcript scores a different thing (the retail grader gives a gold trajectory 0.0 instead of 1.0).
This loop is ``ToolAgentLoop`` unchanged, plus: after every model turn it stores that turn's text without its
tool calls and without special tokens in ``agent_data.extra_fields["rft_output_text"]``; verl carries
``extra_fields`` to the reward function's ``extra_info``, and :func:`~._verl_config.compute_score` grades that
text. Registered with verl by the agent-loop config ``agent_loop_config_yaml()`` writes (verl's
``actor_rollout_ref.rollout.agent.agent_loop_config_path``) under the name ``rft_tool_agent``, the
``agent_name`` :func:`~._verl_config.verl_row` gives every row.
"""

from __future__ import annotations

from typing import Any

from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop

from ._verl_config import OUTPUT_KEY

__all__ = ["HostedToolAgentLoop"]


class HostedToolAgentLoop(ToolAgentLoop):
    """verl's ``ToolAgentLoop`` recording each model turn's text in ``extra_fields["rft_output_text"]`` (see the
    module docstring); the last turn's is what the trajectory is graded with, as on the hosted wire (a trajectory
    cut by verl's turn or length limit: that turn's text, its tool calls not run)."""

    async def _handle_generating_state(self, agent_data: AgentData, sampling_params: dict[str, Any],
                                       ignore_termination: bool = False) -> AgentState:
        state = await super()._handle_generating_state(agent_data, sampling_params, ignore_termination)
        active: dict[str, Any] = getattr(agent_data, "_active_tools", None) or self.tools or {}
        tools = [tool.tool_schema for tool in active.values()]
        content, _ = await self.tool_parser.extract_tool_calls(agent_data.response_ids, tools)
        ids = self.tokenizer.encode(content, add_special_tokens=False)  # special tokens' text back to their ids
        agent_data.extra_fields[OUTPUT_KEY] = self.tokenizer.decode(ids, skip_special_tokens=True)
        return state
