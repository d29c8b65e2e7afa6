"""Per-rollout sandboxes (public names; implementation in the private modules of this package).

::

    from rft_sdk.sandbox import SandboxPool, SandboxLimits

    pool = SandboxPool(limits=SandboxLimits(timeout_s=20))

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

Commands run contained (bubblewrap: own tree only, unprivileged uid, pids
cgroup, private network with loopback up); ``pool.isolation`` says what this
host enforces. See ``docs/sandbox.md``.
"""

from ._sandbox import (
    MAX_OUTPUT_BYTES,
    CommandResult,
    ContainerBackend,
    IsolationReport,
    LocalBackend,
    Sandbox,
    SandboxBackend,
    SandboxError,
    SandboxLimits,
    SandboxPathError,
    SandboxPool,
    SandboxProcess,
    SandboxProvider,
    network_isolation_available,
    remove_stale_roots,
)

__all__ = [
    "MAX_OUTPUT_BYTES",
    "CommandResult",
    "ContainerBackend",
    "IsolationReport",
    "LocalBackend",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxPathError",
    "SandboxPool",
    "SandboxProcess",
    "SandboxProvider",
    "network_isolation_available",
    "remove_stale_roots",
]
