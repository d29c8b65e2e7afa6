"""``rft doctor``: a pre-flight check of the four principles of a successful agent RFT run.

1. **gradeable** — the grader is deterministic, error-free, accepts the gold and
   every valid alternative path;
2. **production-like** — the dataset looks like production traffic;
3. **learnable** — samples of one item score differently (there is signal);
4. **unhackable** — nothing that fails the task earns reward (FAIL); shortcuts
   that achieve it wastefully are reported (WARN).

Each runs against the customer's live endpoints through the emulator
(``rft_sdk.emulator``; needs the ``emulate`` extra). See ``docs/doctor.md``.

Typical use::

    from rft_sdk.doctor import run_doctor, print_doctor, write_doctor_report
    report = await run_doctor("train.jsonl", "job.json", production_log="prod.jsonl")
    print_doctor(report); write_doctor_report("runs/doctor", report)
"""

from ._alternatives import ALTERNATIVES_FIELD, AlternativeReplay, check_alternatives, read_alternatives
from ._doctor import PRINCIPLES, DoctorReport, run_doctor
from ._drift import js_distance, ks_statistic, psi_categorical, psi_numeric
from ._gradeable import check_gradeable
from ._learnable import check_learnable, learnable_from_results
from ._probes import (
    BUDGET_FIELD,
    HACK,
    INTENTS,
    READ_PREFIXES,
    SHORTCUT,
    VALID,
    GoldPlanProbe,
    ProbeContext,
    TextProbe,
    declared_budget,
    is_write_tool,
    probe_applies,
    probe_intent,
    skip_reason,
)
from ._production import ProductionLogError, check_production_like, load_production_log
from ._report import doctor_table, print_doctor, probe_table, write_doctor_report
from ._result import Finding, PrincipleResult
from ._severity import HACK_SHARE, HACK_THRESHOLD, judge_probe
from ._suite import AlteredWrites, AnswerSpaceDump, CrossItemReplay, ToolSpam, WorkThenDump, default_probes
from ._unhackable import check_unhackable

__all__ = [
    "ALTERNATIVES_FIELD",
    "BUDGET_FIELD",
    "HACK",
    "HACK_SHARE",
    "HACK_THRESHOLD",
    "INTENTS",
    "PRINCIPLES",
    "READ_PREFIXES",
    "SHORTCUT",
    "VALID",
    "AlteredWrites",
    "AlternativeReplay",
    "AnswerSpaceDump",
    "CrossItemReplay",
    "DoctorReport",
    "Finding",
    "GoldPlanProbe",
    "PrincipleResult",
    "ProbeContext",
    "ProductionLogError",
    "TextProbe",
    "ToolSpam",
    "WorkThenDump",
    "check_alternatives",
    "check_gradeable",
    "check_learnable",
    "check_production_like",
    "check_unhackable",
    "declared_budget",
    "default_probes",
    "doctor_table",
    "is_write_tool",
    "js_distance",
    "judge_probe",
    "ks_statistic",
    "learnable_from_results",
    "load_production_log",
    "print_doctor",
    "probe_applies",
    "probe_intent",
    "probe_table",
    "psi_categorical",
    "psi_numeric",
    "read_alternatives",
    "run_doctor",
    "skip_reason",
    "write_doctor_report",
]
