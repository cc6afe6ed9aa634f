"""What a finished run's reports are written from: a plain value (no plugin object, no pytest), built once by
``ReportRun.finish`` and handed to every writer (terminal, JSON, Markdown, HTML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .compare import Comparison, GateResult


@dataclass(frozen=True)
class RunOutcome:
    comparison: Comparison | None = None
    gates: tuple[GateResult, ...] = ()
    exit_status: int | None = None
    case_failures: int = 0
    other_failures: int = 0
    not_run: tuple[str, ...] = ()  # node ids of selected cases that never reached a verdict
    #: the capability profile across suites (report/profile.py), compared with the baseline's; None when not built
    profile: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def missed_gates(self) -> list[GateResult]:
        return [gate for gate in self.gates if not gate.passed]

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.comparison.to_json() if self.comparison else None,
            "gates": [gate.to_json() for gate in self.gates],
            "exit_status": self.exit_status,
            "failures": {"cases": self.case_failures, "other": self.other_failures},
            "not_run": list(self.not_run),
            "profile": self.profile.to_json() if self.profile is not None else None,
        }
