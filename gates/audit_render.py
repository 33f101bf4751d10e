"""The audit report as a text table and as Markdown (``mmverify audit``,
``--format md``); its JSON is :meth:`~.audit_model.AuditReport.as_dict`.
"""
from __future__ import annotations

from .audit_model import SEVERITIES, AuditReport


_SEV = {"problem": "PROBLEM", "audited": "audited", "info": "info"}


def render_table(report: AuditReport) -> str:
    lines = [f"audit of {len(report.tasks)} task(s)", ""]
    head = f"{'task':<36} {'gates':>5} {'hard':>4} {'oracle inst':>11} {'pass':>5} {'fail':>4} {'gap':>4}  " \
           f"{'problem':>7} {'audited':>7} {'info':>4}"
    lines += [head, "-" * len(head)]
    for t in report.tasks:
        c = t.oracle_counts
        cells = (f"{t.gates:>5} {t.hard_gates:>4} {c['total']:>11} {c['pass']:>5} {c['fail']:>4} {c['gap']:>4}"
                 if c else f"{'-':>5} {'-':>4} {'-':>11} {'-':>5} {'-':>4} {'-':>4}")
        lines.append(f"{t.task_id:<36} {cells}  {t.count('problem'):>7} {t.count('audited'):>7} {t.count('info'):>4}")
    totals = report.as_dict()["totals"]
    lines.append("-" * len(head))
    lines.append(f"{'total':<36} {'':>5} {'':>4} {totals['oracle_gate_instances']:>11}  "
                 f"tasks with a hard gate: {totals['tasks_with_hard_gate']}/{totals['tasks']}")
    for sev in SEVERITIES:
        found = [f for f in report.findings if f.severity == sev]
        if not found:
            continue
        lines += ["", f"{sev} findings ({len(found)})"]
        for f in found:
            who = f"{f.subject}" + (f" / {f.paper_id}" if f.paper_id else "")
            lines.append(f"  {_SEV[sev]:<7} {f.task_id}  {f.kind}  {who}: {f.detail}")
    lines += ["", f"{len(report.problems)} unaudited problem(s)"]
    return "\n".join(lines) + "\n"


def render_markdown(report: AuditReport) -> str:
    lines = ["| task | gates | hard | oracle instances | pass | fail | gap | problem | audited | info |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for t in report.tasks:
        c = t.oracle_counts
        cells = [str(t.gates), str(t.hard_gates)] + ([str(c["total"]), str(c["pass"]), str(c["fail"]), str(c["gap"])]
                                                     if c else ["-"] * 4)
        lines.append("| " + " | ".join([t.task_id, *cells, str(t.count("problem")), str(t.count("audited")),
                                        str(t.count("info"))]) + " |")
    lines.append(f"| **total** | | | {report.oracle_instances} | | | | {len(report.problems)} | | |")
    if report.findings:
        lines += ["", "| severity | task | kind | subject | paper | detail |", "|---|---|---|---|---|---|"]
        for sev in SEVERITIES:
            for f in report.findings:
                if f.severity == sev:
                    lines.append("| " + " | ".join(c.replace("|", "\\|") for c in (
                        sev, f.task_id, f.kind, f.subject, f.paper_id or "", f.detail)) + " |")
    return "\n".join(lines) + "\n"
