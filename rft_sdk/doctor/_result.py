"""The result of one principle: a verdict, its evidence and advice.

Every check returns a :class:`PrincipleResult`; ``passed`` is ``True``,
``False``, or ``None`` for "not checked" (never a silent pass).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Finding", "PrincipleResult"]


@dataclass
class Finding:
    """One observation with the advice attached to it.

    Attributes:
        severity: ``"fail"`` (makes the principle fail), ``"warn"`` or ``"info"``.
        message: what was measured, with the figure.
        advice: what to do about it.
    """

    severity: str
    message: str
    advice: str = ""

    def to_dict(self) -> dict[str, str]:
        """``{"severity", "message", "advice"}``."""
        return {"severity": self.severity, "message": self.message, "advice": self.advice}


@dataclass
class PrincipleResult:
    """The verdict on one principle.

    Attributes:
        name: ``gradeable``, ``production_like``, ``learnable`` or ``unhackable``.
        passed: ``True``/``False``; ``None`` when it was not checked.
        summary: one line for the terminal table.
        evidence: JSON-ready figures behind the verdict (merged into ``doctor.json``).
        findings: observations with advice.
    """

    name: str
    passed: bool | None
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """``{"passed", "summary", <evidence...>, "findings": [...]}`` (the ``doctor.json`` shape)."""
        return {"passed": self.passed, "summary": self.summary, **self.evidence,
                "findings": [f.to_dict() for f in self.findings]}
