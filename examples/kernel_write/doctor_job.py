"""``rft doctor`` with the benchmark-harness probe pack on kernel_write: ``python -m examples.kernel_write.doctor_job``.

Serves ``examples.kernel_write.app:server`` (or ``--app``, e.g. the pre-fix fixture
``tests.examples.prefix.prefix_kernel_write_app:server``) on 127.0.0.1 and runs
``rft doctor --principles unhackable --probes rft_sdk.doctor.packs:benchmark_harness`` on the
test split. Exit status: the doctor's (0 PASS, 1 FAIL).
"""

from __future__ import annotations

from pathlib import Path

from .._common import doctor_job

DATA_DIR = Path(__file__).resolve().parent / "data"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the doctor's exit status."""
    return doctor_job(argv, prog="python -m examples.kernel_write.doctor_job", doc=__doc__ or "",
                      app="examples.kernel_write.app:server", dataset_dir=DATA_DIR,
                      probes="rft_sdk.doctor.packs:benchmark_harness")


if __name__ == "__main__":
    raise SystemExit(main())
