"""The audit's records: a finding, one task's audit, the whole report, and the
report's JSON form (``mmverify audit --json``). See :mod:`.audit` for the kinds
of finding and what each severity means.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, get_args

# problem: an unaudited defect (exit 1); audited: a defect the anchor documents;
# info: reported only
FindingSeverity = Literal["problem", "audited", "info"]
SEVERITIES: tuple[FindingSeverity, ...] = get_args(FindingSeverity)
SCHEMA_VERSION = "mmverify.audit/1"


@dataclass(frozen=True)
class Finding:
    kind: str
    task_id: str
    subject: str            # a metric id, a gate id (or gate[i]), or "task"
    paper_id: str | None
    severity: FindingSeverity
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "task": self.task_id, "subject": self.subject, "paper": self.paper_id,
                "severity": self.severity, "detail": self.detail}


@dataclass(frozen=True)
class TaskAudit:
    task_id: str
    loaded: bool
    gates: int = 0
    hard_gates: int = 0
    papers: int = 0
    oracle_counts: Mapping[str, Any] | None = None   # GateReport.counts on the oracle artifact
    findings: tuple[Finding, ...] = ()

    @property
    def oracle_instances(self) -> int | None:
        return self.oracle_counts["total"] if self.oracle_counts else None

    def count(self, severity: FindingSeverity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task_id, "loaded": self.loaded, "gates": self.gates, "hard_gates": self.hard_gates,
                "papers": self.papers, "oracle_gate_instances": self.oracle_instances,
                "oracle_counts": self.oracle_counts,
                "findings": [f.as_dict() for f in self.findings],
                "severity_counts": {s: self.count(s) for s in SEVERITIES}}


@dataclass(frozen=True)
class AuditReport:
    anchors_dir: str
    tasks: tuple[TaskAudit, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for t in self.tasks for f in t.findings)

    @property
    def problems(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "problem")

    @property
    def task_errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == "task_error")

    @property
    def oracle_instances(self) -> int:
        return sum(t.oracle_instances or 0 for t in self.tasks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tasks": [t.as_dict() for t in self.tasks],
            "totals": {
                "tasks": len(self.tasks), "loaded": sum(t.loaded for t in self.tasks),
                "tasks_with_hard_gate": sum(1 for t in self.tasks if t.hard_gates),
                "oracle_gate_instances": self.oracle_instances,
                "findings": {s: sum(t.count(s) for t in self.tasks) for s in SEVERITIES},
            },
        }
