"""Suite-wide test setup.

Triton reads ``TRITON_INTERPRET`` when kernels are defined, so it is set here,
before any test module imports ``triton``: on a machine without a GPU the
Triton kernels then run on CPU tensors through Triton's interpreter and are
compared against the pure-torch references. Set ``TRITON_INTERPRET=0`` in the
environment to test the compiled path on a GPU.

Order: the files holding a ``slow`` test are collected first. ``make test``
runs ``pytest -n 3 --dist loadfile --no-loadscope-reorder``: each file goes
whole to one worker, in collection order, so the long files (NeMo Gym's
servers, the doctor's twin suites, the trainers) start at once and the short
ones fill in behind them; pytest-xdist's default order (most tests first)
started them last and ended the run on one worker.

Threads: ``OMP_NUM_THREADS`` defaults to 1 here, before any test imports
torch (subprocesses inherit it). Three workers on two cores, each with a torch
thread pool of two, oversubscribe the cores: the policy and model tensors of
these tests are small, and a pool only adds contention (the TRL trainer loop
took 57 s with the default pool and 26-30 s with one thread). Set it in the
environment to test another value.

Loggers: a test that leaves an ``rft_sdk`` logger disabled errors at its own teardown. ``logging.config``'s
``dictConfig`` and ``fileConfig`` disable every logger that exists unless told otherwise; a tool run
in-process that did so (import-linter's CLI) silenced the package's warnings for the rest of its worker, and
the tests that read them failed far from the cause, in whichever file xdist put next.
"""

import logging
import os

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files with a ``slow`` test first, each file's tests and the files' order otherwise kept."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture(autouse=True)
def _rft_sdk_loggers_stay_enabled():
    """Fail the test that disabled an ``rft_sdk`` logger, not the later one that reads its records."""
    yield
    manager = logging.Logger.manager
    disabled = sorted(
        name
        for name, logger in list(manager.loggerDict.items())
        if name.split(".")[0] == "rft_sdk" and isinstance(logger, logging.Logger) and logger.disabled
    )
    if disabled:
        for name in disabled:
            logging.getLogger(name).disabled = False  # the next tests start clean
        pytest.fail(f"this test left rft_sdk loggers disabled (a dictConfig/fileConfig in-process?): {disabled}")
