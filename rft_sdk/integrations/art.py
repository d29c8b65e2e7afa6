"""OpenPipe ART (``openpipe-art>=0.5``) against a tool server: ``rollout(model, scenario) -> art.Trajectory`` whose
reward is the endpoint grader's, and an optional RULER blend (:mod:`rft_sdk.integrations._art`, ``docs/art.md``).

::

    import art
    from rft_sdk.integrations.art import HostedScenario, rollout

    scenario = HostedScenario(item=line, base_url="http://127.0.0.1:8000", token=TOKEN)
    groups = await art.gather_trajectory_groups(
        art.TrajectoryGroup(rollout(model, scenario) for _ in range(4)) for line in lines)

Raises (on import):
    ImportError: ``art`` (``pip install openpipe-art``) or a module it imports is missing; the message names it.
"""

from __future__ import annotations

try:
    from ._art import HostedScenario, blend_ruler, rollout
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed packages
    raise ImportError(f"rft_sdk.integrations.art cannot import the module {exc.name!r} ({exc}); it needs "
                      "openpipe-art>=0.5: pip install openpipe-art (docs/art.md)", name=exc.name) from exc

__all__ = ["HostedScenario", "blend_ruler", "rollout"]
