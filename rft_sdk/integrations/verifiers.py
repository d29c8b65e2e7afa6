"""A ``verifiers`` environment for a tool server: ``pip install "rft-sdk[verifiers]"``.

Two verifiers APIs, chosen by the installed version (``docs/verifiers.md``):

* **verifiers 0.4** (``verifiers.v1``: tasksets and harnesses), loaded by 0.4's own entry points::

      RFT_AUTH_TOKEN=... vf-eval rft_sdk.integrations.verifiers \\
          --env.taskset.dataset retail_test.jsonl --env.taskset.task.url http://127.0.0.1:8000 \\
          --client.base-url http://127.0.0.1:9000/v1 -m MODEL -r 4 --no-push

  This module then exports :class:`~._verifiers_v1.HostedTaskset` (and its task, state, toolset and
  default harness): :mod:`rft_sdk.integrations._verifiers_v1`.
* **verifiers 0.1.x** (the classic ``vf.StatefulToolEnv``/``vf.Rubric`` API, which 0.4 removed)::

      env = vf.load_environment("rft_sdk.integrations.verifiers", base_url="http://127.0.0.1:8000",
                                token=TOKEN, eval_dataset="retail_test.jsonl")

  :func:`~._verifiers.load_environment`, :class:`~._verifiers.ToolServerEnv`: :mod:`._verifiers`.

Either way each rollout gets its own ``trace_id``; tool calls and the grade go over the hosted wire
to the same server a hosted job calls. verifiers 0.2 and 0.3 are not supported (ImportError).

Raises (on import):
    ImportError: verifiers (or a module it needs) is missing — the message names the missing module —
        or the installed verifiers is neither 0.1.x nor >= 0.4.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

_INSTALL = 'pip install "rft-sdk[verifiers]" (docs/verifiers.md)'


def _installed() -> tuple[int, int]:
    try:
        text = version("verifiers")
    except PackageNotFoundError:
        raise ImportError(f"rft_sdk.integrations.verifiers needs the 'verifiers' package, which is not installed: "
                          f"{_INSTALL}", name="verifiers") from None
    parts = (text.split("+")[0].split(".") + ["0", "0"])[:2]
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except ValueError:  # pragma: no cover - a non-PEP 440 local build
        return (0, 4)


_VERSION = _installed()
if _VERSION >= (0, 4):
    try:
        from ._verifiers_v1 import (
            HostedData,
            HostedHarness,
            HostedState,
            HostedTask,
            HostedTaskConfig,
            HostedTaskset,
            HostedTasksetConfig,
            HostedToolset,
        )
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed packages
        raise ImportError(f"rft_sdk.integrations.verifiers (verifiers {'.'.join(map(str, _VERSION))}) cannot "
                          f"import the module {exc.name!r}: {exc}; reinstall with {_INSTALL}",
                          name=exc.name) from exc
    # verifiers 0.4 loads a taskset by import name: `__all__` exports exactly one Taskset (and one Harness).
    __all__ = ["HostedData", "HostedHarness", "HostedState", "HostedTask", "HostedTaskConfig", "HostedTaskset",
               "HostedTasksetConfig", "HostedToolset"]
elif _VERSION < (0, 2):
    try:
        from ._verifiers import ITEM_KEY, GraderRubric, ToolServerEnv, hosted_rows, load_environment
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed packages
        raise ImportError(f"rft_sdk.integrations.verifiers (verifiers {'.'.join(map(str, _VERSION))}) cannot "
                          f"import the module {exc.name!r}: {exc}; reinstall with {_INSTALL}",
                          name=exc.name) from exc
    __all__ = ["ITEM_KEY", "GraderRubric", "ToolServerEnv", "hosted_rows", "load_environment"]
else:
    raise ImportError(f"rft_sdk.integrations.verifiers supports verifiers 0.1.x (classic API) and >= 0.4 "
                      f"(verifiers.v1); {'.'.join(map(str, _VERSION))} is installed: {_INSTALL}")
