"""Findings of a validation (``rft validate``): what is wrong, on which lines, in which field, and the fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Finding", "Report", "Severity"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem: ``severity``, the 1-based ``lines`` it occurs on (``()``: the whole file or job),
    the dotted ``field``, what is wrong (``message``) and what to do (``fix``)."""

    severity: Severity
    lines: tuple[int, ...]
    field: str
    message: str
    fix: str = ""

    def where(self) -> str:
        """``"line 3"``, ``"lines 1-48"``, ``"lines 2, 5, 9"`` or ``"file"``."""
        if not self.lines:
            return "file"
        if len(self.lines) == 1:
            return f"line {self.lines[0]}"
        if list(self.lines) == list(range(self.lines[0], self.lines[-1] + 1)):
            return f"lines {self.lines[0]}-{self.lines[-1]}"
        shown = ", ".join(str(n) for n in self.lines[:8])
        return f"lines {shown}{f' ... ({len(self.lines)} lines)' if len(self.lines) > 8 else ''}"

    def __str__(self) -> str:
        fix = f"\n    fix: {self.fix}" if self.fix else ""
        return f"{self.severity}: {self.where()}, field {self.field}: {self.message}{fix}"

    def to_dict(self) -> dict[str, Any]:
        """``{"severity", "lines", "field", "message", "fix"}``."""
        return {"severity": self.severity, "lines": list(self.lines), "field": self.field,
                "message": self.message, "fix": self.fix}


@dataclass
class Report:
    """Findings of one validation; identical findings on several lines are merged (their ``lines``)."""

    target: str
    source: str
    lines: int = 0
    server: str | None = None
    #: gold lines played against the server by the dry run (``None``: no dry run)
    replayed: int | None = None
    #: ``[(1-based line, item)]`` whose gold is well-formed, for the dry run (not in ``to_dict``)
    gold: list[tuple[int, dict[str, Any]]] = field(default_factory=list, repr=False)
    _found: dict[tuple[str, str, str, str], list[int]] = field(default_factory=dict, repr=False)

    def add(self, severity: Severity, line: int | None, field_: str, message: str, fix: str = "") -> None:
        """Record a finding (``line`` 1-based, ``None`` for the whole file or job)."""
        lines = self._found.setdefault((severity, field_, message, fix), [])
        if line is not None and (not lines or lines[-1] != line):
            lines.append(line)

    @property
    def findings(self) -> list[Finding]:
        """Errors first, then warnings; each group by first line; a finding's lines in order (the dry run plays
        the lines concurrently, so they are recorded as they finish)."""
        out = [Finding(sev, tuple(sorted(set(lines))), f, msg, fix)  # type: ignore[arg-type]
               for (sev, f, msg, fix), lines in self._found.items()]
        return sorted(out, key=lambda x: (x.severity != "error", x.lines[:1] or (0,), x.field))

    @property
    def errors(self) -> list[Finding]:
        """Findings that make the run fail or break."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings worth fixing that do not stop a run."""
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """The ``rft validate --json`` shape: ``{"ok", "target", "source", "lines", "server",
        "gold_replayed", "errors", "warnings", "findings": [Finding.to_dict()]}``."""
        found = self.findings
        return {"ok": self.ok, "target": self.target, "source": self.source, "lines": self.lines,
                "server": self.server, "gold_replayed": self.replayed, "errors": sum(f.severity == "error" for f in found),
                "warnings": sum(f.severity == "warning" for f in found), "findings": [f.to_dict() for f in found]}

    def render(self) -> str:
        """Plain text: one block per finding, then a summary line."""
        found = self.findings
        checked = f" against {self.server}" if self.server else ""
        if self.replayed is not None:
            checked += f", {self.replayed} gold trajectories replayed"
        summary = (f"{self.source}: {self.lines} lines checked for {self.target}{checked}: "
                   f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        return "\n".join([*(str(f) for f in found), summary])
