"""Local emulator of the hosted agent-RFT protocol (the service's side, offline).

Validates a dataset and job config by the hosted rules, rolls a policy out
against the customer's real tool and grader endpoints over HTTP (retries,
discards, size and time limits as the service applies them), and reports
reward, tool metrics and learnability. See ``docs/hosted-protocol.md``
and ``docs/ARCHITECTURE.md``.

Typical use::

    from rft_sdk.emulator import ReferenceReplayPolicy, emulate, print_summary
    run = await emulate("train.jsonl", "job.json", ReferenceReplayPolicy(), out_dir="runs/ref")
    print_summary(run.summary)

Layers: ``_types`` (ToolCall, PolicyStep, StepRecord) ← ``_contract`` (the
Policy protocol, check_step) ← ``_policy`` / ``_openai`` (concrete policies);
``_client`` (HTTP calls) ← ``_rollout`` (one rollout) ← ``_session`` (a
long-lived :class:`EmulatorSession` owning the HTTP clients; ``run_rollouts``)
← ``_emulate`` (validate, run, report). ``_report`` / ``_report_html`` write the
files a person reads; ``_discards`` decides when a run discarded too much
(``--max-discard-share``).
"""

from ._client import ClientSettings, EndpointClient, EndpointFailure, GradeResult, ToolCallResult
from ._contract import Policy, PolicyError, check_step, turns_taken
from ._dataset import DatasetError, DatasetIssue, load_dataset, validate_items
from ._emulate import EmulationRun, emulate
from ._job import (
    TARGETS,
    EndpointGrader,
    Hyperparameters,
    JobConfigError,
    JobTool,
    ReinforcementJob,
    load_job,
    samples_per_item,
    target_problems,
)
from ._metrics import TOKEN_ESTIMATE, estimate_tokens, summarize
from ._openai import OpenAICompatiblePolicy
from ._policy import NOISE, NoisyReplayPolicy, PerturbedReplayPolicy, ReferenceReplayPolicy, ScriptedPolicy
from ._ratelimit import RateLimiter
from ._report import comparison_table, print_comparison, print_summary, summary_table, write_report
from ._rollout import RolloutResult, build_sample
from ._session import EmulatorSession, run_rollouts
from ._types import PolicyStep, StepRecord, ToolCall, make_tool_call
from ._writes import gold_tool_names, learn_write_tools, served_writes

__all__ = [
    "NOISE",
    "ClientSettings",
    "DatasetError",
    "DatasetIssue",
    "EmulationRun",
    "EmulatorSession",
    "EndpointClient",
    "EndpointFailure",
    "EndpointGrader",
    "GradeResult",
    "Hyperparameters",
    "JobConfigError",
    "JobTool",
    "NoisyReplayPolicy",
    "OpenAICompatiblePolicy",
    "PerturbedReplayPolicy",
    "Policy",
    "PolicyError",
    "PolicyStep",
    "RateLimiter",
    "ReferenceReplayPolicy",
    "ReinforcementJob",
    "RolloutResult",
    "ScriptedPolicy",
    "StepRecord",
    "TARGETS",
    "TOKEN_ESTIMATE",
    "ToolCall",
    "ToolCallResult",
    "build_sample",
    "check_step",
    "comparison_table",
    "emulate",
    "estimate_tokens",
    "load_dataset",
    "gold_tool_names",
    "learn_write_tools",
    "load_job",
    "make_tool_call",
    "print_comparison",
    "print_summary",
    "run_rollouts",
    "samples_per_item",
    "served_writes",
    "summarize",
    "summary_table",
    "target_problems",
    "turns_taken",
    "validate_items",
    "write_report",
]
