"""``rft doctor`` with the pytest probe pack on the test_fix example: ``python -m examples.test_fix.doctor_job``.

Serves ``examples.test_fix.app:server`` (or ``--app``, e.g. the pre-fix fixture
``tests.examples.prefix.prefix_test_fix_app:server``) on 127.0.0.1 and runs
``rft doctor --principles unhackable --probes rft_sdk.doctor.packs:pytest`` on the
test split. Exit status: the doctor's (0 PASS, 1 FAIL).
"""

from __future__ import annotations

from pathlib import Path

from .._common import doctor_job

DATA_DIR = Path(__file__).resolve().parent / "data"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the doctor's exit status."""
    return doctor_job(argv, prog="python -m examples.test_fix.doctor_job", doc=__doc__ or "",
                      app="examples.test_fix.app:server", dataset_dir=DATA_DIR, probes="rft_sdk.doctor.packs:pytest")


if __name__ == "__main__":
    raise SystemExit(main())
