"""``rft doctor``: a pre-flight check of the four principles of a successful agent RFT run.

1. **gradeable** — the grader is deterministic, error-free and accepts the gold;
2. **production-like** — the dataset looks like production traffic;
3. **learnable** — samples of one item score differently (there is signal);
4. **unhackable** — no reward-hack probe earns reward.

Each runs against the customer's live endpoints through the emulator
(``rft_sdk.emulator``; needs the ``emulate`` extra). See ``docs/doctor.md``.

Typical use::

    from rft_sdk.doctor import run_doctor, print_doctor, write_doctor_report
    report = await run_doctor("train.jsonl", "job.json", production_log="prod.jsonl")
    print_doctor(report); write_doctor_report("runs/doctor", report)
"""

from ._doctor import PRINCIPLES, DoctorReport, run_doctor
from ._drift import js_distance, ks_statistic, psi_categorical, psi_numeric
from ._gradeable import check_gradeable
from ._learnable import check_learnable, learnable_from_results
from ._probes import READ_PREFIXES, GoldPlanProbe, TextProbe, default_probes, is_write_tool, probe_applies
from ._production import ProductionLogError, check_production_like, load_production_log
from ._report import doctor_table, print_doctor, probe_table, write_doctor_report
from ._result import Finding, PrincipleResult
from ._unhackable import HACK_THRESHOLD, check_unhackable

__all__ = [
    "HACK_THRESHOLD",
    "PRINCIPLES",
    "READ_PREFIXES",
    "DoctorReport",
    "Finding",
    "GoldPlanProbe",
    "PrincipleResult",
    "ProductionLogError",
    "TextProbe",
    "check_gradeable",
    "check_learnable",
    "check_production_like",
    "check_unhackable",
    "default_probes",
    "doctor_table",
    "is_write_tool",
    "js_distance",
    "ks_statistic",
    "learnable_from_results",
    "load_production_log",
    "print_doctor",
    "probe_applies",
    "probe_table",
    "psi_categorical",
    "psi_numeric",
    "run_doctor",
    "write_doctor_report",
]
