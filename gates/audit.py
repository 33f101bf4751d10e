"""``mmverify audit``: the engine audits its own references.

Design notes: docs/architecture.md, `gates/audit.py`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from mmverify.reading import paths
from mmverify.reading.artifact import ArtifactError, parse_file
from mmverify.tasks import TaskLoadError, default_anchors_dir, load_index, load_task

from .compile import compile_gates
from .forms import evaluate_gates
from .model import Gate, GateInstance, GateReport

if TYPE_CHECKING:
    from .audit_model import AuditReport, Finding, TaskAudit

# the records, the paper's artifact and the scoring-side checks live in their
# own modules, loaded when an audit runs (a score of a task's own oracle needs
# only oracle_findings); their names stay importable from here (__getattr__ below)
__all__ = ["SCHEMA_VERSION", "SEVERITIES", "AuditReport", "Finding", "TaskAudit", "audit_anchors",  # noqa: F822
           "audit_task", "audit_task_id", "gate_bounds", "oracle_findings", "paper_artifact", "schema_bounds"]


# ============================================================== entry points

def audit_anchors(anchors_dir: str | None = None) -> AuditReport:
    """Audit every task listed by the anchors folder (pure apart from reading it)."""
    from .audit_model import AuditReport

    anchors_dir = anchors_dir or default_anchors_dir()
    # an unreadable anchors folder or index is the caller's TaskLoadError, not a task row
    ids = [t["id"] for t in load_index(anchors_dir)]
    return AuditReport(anchors_dir, tuple(audit_task_id(tid, anchors_dir) for tid in ids))


def audit_task_id(task_id: str, anchors_dir: str) -> TaskAudit:
    from .audit_model import Finding, TaskAudit

    try:
        task = load_task(task_id, anchors_dir)
        compile_gates(task)
    except TaskLoadError as exc:
        return TaskAudit(task_id, False, findings=(Finding("task_error", task_id, "task", None, "problem", str(exc)),))
    return audit_task(task)


def audit_task(task) -> TaskAudit:
    from .audit_model import Finding, TaskAudit
    from .audit_scoring import scoring_findings
    from .paper_artifact import paper_artifact

    gates = compile_gates(task)
    by_id = {g.id: g for g in gates}
    out: list[Finding] = []
    add = out.append
    try:
        oracle = parse_file(task.oracle_path).data
    except ArtifactError as exc:  # the loader reads it first; kept for robustness
        add(Finding("task_error", task.id, "task", None, "problem", f"oracle unreadable: {exc.message}"))
        return TaskAudit(task.id, False, findings=tuple(out))

    # -- the oracle artifact ----------------------------------------------
    oracle_report = evaluate_gates(task, oracle)
    oracle_audits = [(p, rec) for p in task.oracle_papers for rec in _records(p)]
    for inst in oracle_report.instances:
        if inst.verdict == "fail":
            why = _audited_by(task, inst, oracle_audits)
            if inst.scored:
                sev = "audited" if why else "problem"
            else:
                sev = "audited" if why else "info"
            add(Finding("oracle_gate_failure", task.id, inst.name, None, sev,
                        f"{inst.severity} gate: {inst.detail}" + (f" [audit record: {why}]" if why else "")))
        elif inst.verdict == "gap":
            add(Finding("oracle_gate_gap", task.id, inst.name, None, "problem" if inst.scored else "info",
                        f"{inst.severity} gate cannot be checked on the oracle: {inst.detail}"))
    for err in _schema_errors(task, oracle):
        add(Finding("oracle_schema", task.id, err.field, None, "problem", err.problem))

    # -- every paper ------------------------------------------------------
    oracle_index = {(i.gate_id, i.index): i for i in oracle_report.instances}
    for paper in task.panel:
        data, supplied, unapplied = paper_artifact(task, oracle, paper)
        for text in unapplied:
            add(Finding("context_unapplied", task.id, text, paper.paper_id, "info",
                        "context value could not be placed in the paper's artifact"))
        report = evaluate_gates(task, data)
        records = [(paper, rec) for rec in _records(paper)]
        for inst in report.instances:
            if inst.verdict != "fail" or not (set(inst.paths) & supplied):
                continue
            same = oracle_index.get((inst.gate_id, inst.index))
            if same is not None and same.values == inst.values and same.verdict == inst.verdict:
                continue  # already reported on the oracle artifact
            why = _audited_by(task, inst, records)
            kind = "infeasible_anchor" if inst.hard else \
                "replay_refuted_anchor" if inst.severity == "claim" else "anchor_soft_failure"
            sev = "audited" if why else ("problem" if inst.scored else "info")
            add(Finding(kind, task.id, inst.name, paper.paper_id, sev,
                        inst.detail + (f" [audit record: {why}]" if why else "")))
        oracle_fields = {e.field for e in _schema_errors(task, oracle)}
        for err in _schema_errors(task, data):
            if err.field in oracle_fields or not _field_supplied(err.field, supplied):
                continue
            why = _audited_field(task, err.field, records)
            add(Finding("schema_violation", task.id, err.field, paper.paper_id, "audited" if why else "problem",
                        err.problem + (f" [audit record: {why}]" if why else "")))
        out.extend(_audit_records(task, by_id, oracle, paper))

    # -- the scoring side -------------------------------------------------
    out.extend(scoring_findings(task, gates))
    from .leaks import find_schema_leaks

    for leak in find_schema_leaks(task):
        add(Finding("anchor_leak", task.id, leak.metric, leak.paper, "problem",
                    f"panel value {leak.value} appears in agent-facing schema text at {leak.where}"))
    from .guessable import guess_findings

    out.extend(guess_findings(task, gates))
    from .authoring import authoring_findings

    out.extend(authoring_findings(task, gates))
    return TaskAudit(task.id, True, gates=len(gates), hard_gates=sum(1 for g in gates if g.hard),
                     papers=len(task.panel), oracle_counts=oracle_report.counts, findings=tuple(out))


def _schema_errors(task, data: Any):
    from mmverify.pipeline.validate import validate_artifact

    return validate_artifact(task.artifact_schema, data, limit=200)


def _field_supplied(field_: str, supplied: set[str]) -> bool:
    return any(s == field_ or s.startswith(field_ + ".") or s.startswith(field_ + "[")
               or field_.startswith(s + ".") or field_.startswith(s + "[") for s in supplied)


# ============================================================ audit records

def _anchor_shown(paper, mid: str) -> str:
    text = paper.value_text.get(mid)
    return text if isinstance(text, str) else _show_original(text)


def _records(paper) -> list[tuple[str, Mapping[str, Any]]]:
    return sorted(paper.audit.items())


def oracle_findings(task, report: GateReport) -> dict[str, str]:
    """For the task's own oracle: every failing gate instance with the word for
    it, ``audited`` (an audit record documents it) or ``known finding`` (a soft
    gate the published answer fails, reported by ``mmverify audit`` as info and
    written in the task's README). Keys are instance names."""
    records = [(p, rec) for p in task.oracle_papers for rec in _records(p)]
    out = {}
    for inst in report.instances:
        if inst.verdict == "fail":
            why = _audited_by(task, inst, records)
            out[inst.name] = f"audited finding (audit record {why})" if why else \
                "known finding on the published answer (see the task README; mmverify audit lists it)"
    return out


def _audited_by(task, inst: GateInstance, records) -> str | None:
    """The audit record (paper/metric) that documents this failing instance, if any."""
    for paper, (mid, rec) in records:
        if rec.get("gate") == inst.gate_id:
            return f"{paper.paper_id}/{mid}"
        metric = task.metric(mid)
        if any(paths.matches(metric.path, p) for p in inst.paths):
            return f"{paper.paper_id}/{mid}"
    return None


def _audited_field(task, field_: str, records) -> str | None:
    for paper, (mid, _rec) in records:
        if paths.matches(task.metric(mid).path, field_):
            return f"{paper.paper_id}/{mid}"
    return None


def _audit_records(task, by_id: Mapping[str, Gate], oracle: Any, paper) -> list[Finding]:
    from .audit_model import Finding
    from .paper_artifact import paper_artifact

    out: list[Finding] = []
    for mid, rec in _records(paper):
        named = rec.get("gate")
        if named and named not in by_id:
            out.append(Finding("audit_unknown_gate", task.id, mid, paper.paper_id, "problem",
                               f"audit record names gate {named!r}, which the task does not declare"))
            named = None
        if "original" not in rec:
            continue
        metric = task.metric(mid)
        data, _supplied, _ = paper_artifact(task, oracle, paper, originals=[mid])
        report = evaluate_gates(task, data)
        broken = [i for i in report.instances if i.verdict == "fail"
                  and any(paths.matches(metric.path, p) for p in i.paths)]
        schema = [e for e in _schema_errors(task, data) if paths.matches(metric.path, e.field)]
        shown = _show_original(rec["original"])
        replayed = rec.get("corrected_by") == "replay"
        for inst in broken:
            if replayed and inst.severity == "claim":
                # corrected by machine: the replay of the statement refutes the paper's value
                out.append(Finding("replay_correction", task.id, inst.name, paper.paper_id, "audited",
                                   f"paper reported {shown}; replay {_anchor_shown(paper, mid)}; corrected "
                                   f"({inst.severity} gate: {inst.detail})"))
                continue
            out.append(Finding("audit_justified", task.id, inst.name, paper.paper_id, "audited",
                               f"original {mid} = {shown} breaks the {inst.severity} gate: {inst.detail}"))
        if replayed and not any(i.severity == "claim" for i in broken):
            out.append(Finding("audit_not_reproduced", task.id, mid, paper.paper_id, "problem",
                               f"audit record for {mid} says the replay corrected it, but no claim gate refutes "
                               f"the original value {shown}"))
        for err in schema:
            out.append(Finding("audit_justified", task.id, err.field, paper.paper_id, "audited",
                               f"original {mid} = {shown} is outside the schema: {err.problem}"))
        if named and not any(i.gate_id == named for i in broken):
            out.append(Finding("audit_not_reproduced", task.id, named, paper.paper_id, "problem",
                               f"audit record for {mid} names gate {named!r}, but the original value {shown} "
                               "does not break it"))
        elif not broken and not schema:
            out.append(Finding("audit_not_gate_backed", task.id, mid, paper.paper_id, "info",
                               f"original value {shown} breaks no gate or schema bound; the correction rests on "
                               f"its written reason: {rec.get('reason', '')}"))
    return out


def _show_original(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return f"[{len(value)} values]"
    return str(value)


# Names still reachable from here, each loaded from its module on first use.
_ELSEWHERE = {"SCHEMA_VERSION": "audit_model", "SEVERITIES": "audit_model", "AuditReport": "audit_model",
              "Finding": "audit_model", "TaskAudit": "audit_model", "gate_bounds": "audit_scoring",
              "schema_bounds": "audit_scoring", "scoring_findings": "audit_scoring",
              "paper_artifact": "paper_artifact", "render_markdown": "audit_render", "render_table": "audit_render"}


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
