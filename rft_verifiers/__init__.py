"""The verifiers 0.4 taskset id ``rft-verifiers`` (or ``rft_verifiers``): a tool server's hosted dataset.

verifiers 0.4 loads a taskset by a top-level import name (``verifiers.v1.utils.loaders``); this package
is that name for :mod:`rft_sdk.integrations._verifiers_v1`::

    RFT_AUTH_TOKEN=... vf-eval rft-verifiers --env.taskset.dataset retail_test.jsonl \\
        --env.taskset.task.url http://127.0.0.1:8000 --client.base-url http://127.0.0.1:9000/v1 -m MODEL

Needs verifiers >= 0.4 (``pip install "rft-sdk[verifiers]"``); see ``docs/verifiers.md``.
"""

from rft_sdk.integrations.verifiers import (
    HostedData,
    HostedHarness,
    HostedState,
    HostedTask,
    HostedTaskConfig,
    HostedTaskset,
    HostedTasksetConfig,
    HostedToolset,
)

__all__ = ["HostedData", "HostedHarness", "HostedState", "HostedTask", "HostedTaskConfig", "HostedTaskset",
           "HostedTasksetConfig", "HostedToolset"]
