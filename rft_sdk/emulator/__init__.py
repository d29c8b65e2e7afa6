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
"""

from ._client import ClientSettings, EndpointClient, EndpointFailure, GradeResult, ToolCallResult
from ._dataset import DatasetError, DatasetIssue, load_dataset, validate_items
from ._emulate import EmulationRun, emulate
from ._job import (
    EndpointGrader,
    Hyperparameters,
    JobConfigError,
    JobTool,
    ReinforcementJob,
    load_job,
    samples_per_item,
)
from ._metrics import TOKEN_ESTIMATE, estimate_tokens, summarize
from ._openai import OpenAICompatiblePolicy
from ._policy import (
    PerturbedReplayPolicy,
    Policy,
    PolicyError,
    PolicyStep,
    ReferenceReplayPolicy,
    ScriptedPolicy,
    check_step,
    make_tool_call,
    turns_taken,
)
from ._ratelimit import RateLimiter
from ._report import comparison_table, print_comparison, print_summary, summary_table, write_report
from ._rollout import RolloutResult, StepRecord, build_sample, run_rollouts

__all__ = [
    "ClientSettings",
    "DatasetError",
    "DatasetIssue",
    "EmulationRun",
    "EndpointClient",
    "EndpointFailure",
    "EndpointGrader",
    "GradeResult",
    "Hyperparameters",
    "JobConfigError",
    "JobTool",
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
    "TOKEN_ESTIMATE",
    "ToolCallResult",
    "build_sample",
    "check_step",
    "comparison_table",
    "emulate",
    "estimate_tokens",
    "load_dataset",
    "load_job",
    "make_tool_call",
    "print_comparison",
    "print_summary",
    "run_rollouts",
    "samples_per_item",
    "summarize",
    "summary_table",
    "turns_taken",
    "validate_items",
    "write_report",
]
