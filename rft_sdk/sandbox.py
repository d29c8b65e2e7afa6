"""Per-rollout sandboxes (public names; implementation in ``rft_sdk._sandbox``).

::

    from rft_sdk.sandbox import SandboxPool, SandboxLimits

    pool = SandboxPool("/var/tmp/rft-sandboxes", limits=SandboxLimits(timeout_s=20))

    @server.tool
    def run_tests(*, rollout: Rollout) -> str:
        box = pool.for_rollout(rollout, template="repo_template/")
        return box.run(["python", "-m", "pytest", "-q"]).text()

    @server.grader
    def grade(ctx):
        try:
            ...  # run the checks in pool.get(ctx.trace_id)
        finally:
            pool.release(ctx.trace_id)

See ``docs/sandbox.md`` for what is enforced and how replicas share sandboxes.
"""

from ._sandbox import (
    MAX_OUTPUT_BYTES,
    CommandResult,
    ContainerBackend,
    LocalBackend,
    Sandbox,
    SandboxBackend,
    SandboxError,
    SandboxLimits,
    SandboxPathError,
    SandboxPool,
    network_isolation_available,
)

__all__ = [
    "MAX_OUTPUT_BYTES",
    "CommandResult",
    "ContainerBackend",
    "LocalBackend",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxPathError",
    "SandboxPool",
    "network_isolation_available",
]
