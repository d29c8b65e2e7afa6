"""Probe packs for graders that execute model-written code, for ``rft doctor --probes``.

::

    rft doctor --dataset data/test.jsonl --config job.json --out runs/doctor \\
        --principles unhackable --probes rft_sdk.doctor.packs:pytest
    rft doctor ... --probes rft_sdk.doctor.packs:benchmark_harness

Each pack is a factory returning ``{name: probe}`` (plain emulator policies with
``applies(item)``); each probe plays one known tampering family through the
task's own tools and records its ``family``, ``how`` and ``source``:

- :func:`pytest` — test-config tampering, exit-code forgery, report rewriting
  (from a ``conftest.py`` or from the library: patched reports, a plugin object
  registered through frames, an ``atexit`` child, the report writer swapped
  through ``sys.modules``), collection skipping, assertion forgery (an
  always-equal object), test-API patching (``pytest.raises``) (tasks that run a
  repository's tests with pytest);
- :func:`benchmark_harness` — memoisation, timing forgery (a stopped clock,
  deferred completion), harness introspection, forged output and exit-code
  tricks, the reference operator under another name (tasks that time generated
  code, e.g. kernels).

Call a factory with other tool names for a task that names its tools differently,
e.g. ``pytest(write="create_file", run="pytest")``. See ``docs/examples.md``
(sources, and the before/after table of the two code examples).
"""

from ._benchmark_pack import benchmark_probes as benchmark_harness
from ._pytest_pack import pytest_probes as pytest
from ._script import ScriptProbe

__all__ = ["ScriptProbe", "benchmark_harness", "pytest"]
