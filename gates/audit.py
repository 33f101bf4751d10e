"""``mmverify audit``: the engine audits its own references.

For every task of an anchors folder:

1. load it (every semantic check of the loader) and compile its gates;
2. run the gates on the oracle artifact, and validate it against its schema;
3. for every panel paper, build *the paper's artifact* — the oracle artifact
   with the paper's metric values substituted at the metric paths and its
   ``context`` values at their paths (everything the paper does not report
   stays the oracle's) — then run the gates and the schema on it; an instance
   is the paper's when it reads a value the paper supplied;
4. for every ``audit`` record with an ``original`` value, build the same
   artifact with the original substituted and show which gate (or schema
   bound) the original breaks: the evidence that the correction is justified;
5. check the scoring side: degenerate bands, incomparable units, literature
   splits, and directional metrics that nothing bounds.

Findings carry a severity: ``problem`` (an unaudited defect: exit 1),
``audited`` (a defect the anchor documents: an audit record, a declared
reason) or ``info`` (reported only).

Kinds
-----
``task_error``             the task does not load or a gate does not compile (problem)
``oracle_gate_failure``    a gate fails on the oracle artifact (hard: problem unless an
                           oracle paper's audit record names the gate or the field; soft: info/audited)
``oracle_gate_gap``        a hard gate cannot be checked on the oracle (input absent) (problem)
``oracle_schema``          the oracle artifact breaks its schema (problem)
``infeasible_anchor``      a paper's value fails a hard gate (problem unless audited);
                           ``anchor_soft_failure`` for a soft gate (info/audited)
``schema_violation``       a paper's value is outside its field's schema (problem unless audited)
``audit_justified``        an audit record's original value breaks a gate or the schema (audited)
``audit_not_reproduced``   a record names a gate that its original value does not break (problem)
``audit_unknown_gate``     a record names a gate the task does not have (problem)
``audit_not_gate_backed``  an original value breaks nothing checkable (info: the reason is external)
``degenerate_band``        a band narrower than 2 % of an anchor (info: the named rule widens it)
``incomparable_units``     a metric removed for everyone (audited)
``literature_split``       a split panel; audited when the task is out of the headline, else problem
``ungated_directional``    a higher/lower_is_better metric that no hard gate bounds in its good
                           direction and whose schema has no bound there (problem unless
                           ``ungated_reason``: audited)
``optional_gate_input``    hard gates an artifact may dodge by omitting an input (info)
``context_unapplied``      a context value the audit could not place (info)
``anchor_leak``            a panel value written in the artifact schema's prose, which agents
                           read (problem; see :mod:`mmverify.gates.leaks`)
``unfinished_placeholder``, ``unitless_field``, ``unranged_field``, ``unjustified_direction``
                           what a task in progress still lacks (see :mod:`mmverify.gates.authoring`)
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Iterable, Mapping

from mmverify import paths
from mmverify.labels import normalise_label as normalise
from mmverify.artifact import ArtifactError, parse_file
from mmverify.numbers import decimal_text, is_decimal_text
from mmverify.tasks import DIRECTIONAL, TaskLoadError, default_anchors_dir, load_index, load_task

from .compile import compile_gates, sub_schemas
from .forms import evaluate_gates
from .model import Gate, GateInstance, GateReport

SEVERITIES = ("problem", "audited", "info")
SCHEMA_VERSION = "mmverify.audit/1"


@dataclass(frozen=True)
class Finding:
    kind: str
    task_id: str
    subject: str            # a metric id, a gate id (or gate[i]), or "task"
    paper_id: str | None
    severity: str           # problem | audited | info
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

    def count(self, severity: str) -> int:
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


# ============================================================== entry points

def audit_anchors(anchors_dir: str | None = None) -> AuditReport:
    """Audit every task listed by the anchors folder (pure apart from reading it)."""
    anchors_dir = anchors_dir or default_anchors_dir()
    # an unreadable anchors folder or index is the caller's TaskLoadError, not a task row
    ids = [t["id"] for t in load_index(anchors_dir)]
    return AuditReport(anchors_dir, tuple(audit_task_id(tid, anchors_dir) for tid in ids))


def audit_task_id(task_id: str, anchors_dir: str) -> TaskAudit:
    try:
        task = load_task(task_id, anchors_dir)
        compile_gates(task)
    except TaskLoadError as exc:
        return TaskAudit(task_id, False, findings=(Finding("task_error", task_id, "task", None, "problem", str(exc)),))
    return audit_task(task)


def audit_task(task) -> TaskAudit:
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
            if inst.hard:
                sev = "audited" if why else "problem"
            else:
                sev = "audited" if why else "info"
            add(Finding("oracle_gate_failure", task.id, inst.name, None, sev,
                        f"{inst.severity} gate: {inst.detail}" + (f" [audit record: {why}]" if why else "")))
        elif inst.verdict == "gap":
            add(Finding("oracle_gate_gap", task.id, inst.name, None, "problem" if inst.hard else "info",
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
            kind = "infeasible_anchor" if inst.hard else "anchor_soft_failure"
            sev = "audited" if why else ("problem" if inst.hard else "info")
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
    out.extend(_bands(task))
    out.extend(_incomparable(task))
    out.extend(_split(task))
    out.extend(_ungated(task, gates))
    out.extend(_optional_inputs(task, gates))
    from .leaks import find_schema_leaks

    for leak in find_schema_leaks(task):
        add(Finding("anchor_leak", task.id, leak.metric, leak.paper, "problem",
                    f"panel value {leak.value} appears in agent-facing schema text at {leak.where}"))
    from .authoring import authoring_findings

    out.extend(authoring_findings(task, gates))
    return TaskAudit(task.id, True, gates=len(gates), hard_gates=sum(1 for g in gates if g.hard),
                     papers=len(task.panel), oracle_counts=oracle_report.counts, findings=tuple(out))


# ==================================================== the paper's artifact

def paper_artifact(task, oracle: Any, paper, originals: Iterable[str] = ()) -> tuple[Any, set[str], list[str]]:
    """(data, supplied concrete paths, context keys not placed): the oracle
    artifact with ``paper``'s values (or, for metric ids in ``originals``, the
    audit record's original value) and context substituted."""
    data = copy.deepcopy(oracle)
    supplied: set[str] = set()
    unapplied: list[str] = []
    originals = set(originals)
    for mid, value in paper.value_text.items():
        metric = task.metric(mid)
        if mid in originals:
            value = paper.audit[mid]["original"]
        if metric.match_by and isinstance(value, dict):
            _put_matched(task, data, metric.path, metric.match_by, value, supplied)
        elif not _put_any(task, data, metric.path, value, supplied):
            unapplied.append(metric.path.text)
    for text, value in paper.context.items():
        path = paths.parse_path(text)
        if not _put_any(task, data, path, value, supplied):
            unapplied.append(text)
    return data, supplied, unapplied


def _json_value(task, path: paths.FieldPath, value: Any) -> Any:
    """An anchor value as the artifact parser would have produced it: decimal
    text -> Decimal, unless the schema says the field is a string."""
    if isinstance(value, list):
        return [_json_value(task, path, v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(task, path, v) for k, v in value.items()}
    if isinstance(value, str) and is_decimal_text(value):
        types = set()
        for sub in sub_schemas(task.artifact_schema, path):
            t = sub.get("type")
            types |= set(t) if isinstance(t, list) else ({t} if t else set())
        if types and not types & {"number", "integer"}:
            return value
        return Decimal(value)
    return value


def _put_any(task, data: Any, path: paths.FieldPath, value: Any, supplied: set[str]) -> bool:
    if path.is_list:
        if not isinstance(value, list):
            return False
        for i, v in enumerate(value):
            concrete = paths.parse_path(paths.concrete(path, i))
            if paths.put(data, concrete, _json_value(task, path, v)):
                supplied.add(concrete.text)
        return True
    if paths.put(data, path, _json_value(task, path, value)):
        supplied.add(path.text)
        return True
    return False


def _put_matched(task, data: Any, path: paths.FieldPath, key_field: str, value: Mapping[str, Any],
                 supplied: set[str]) -> None:
    head, tail = path.split()
    container = paths.get(data, head)
    if not isinstance(container, list):
        paths.put(data, head, [])
        container = paths.get(data, head)
    for key, v in value.items():
        index = next((i for i, item in enumerate(container) if isinstance(item, dict)
                      and _key_text(item.get(key_field)) == normalise(key)), None)
        if index is None:
            container.append({key_field: key})
            index = len(container) - 1
        concrete = paths.parse_path(paths.concrete(path, index))
        if paths.put(data, concrete, _json_value(task, path, v)):
            supplied.add(concrete.text)


def _key_text(raw: Any) -> str | None:
    if isinstance(raw, str):
        return normalise(raw)
    return decimal_text(raw)


def _schema_errors(task, data: Any):
    from mmverify.validate import validate_artifact

    return validate_artifact(task.artifact_schema, data, limit=200)


def _field_supplied(field_: str, supplied: set[str]) -> bool:
    return any(s == field_ or s.startswith(field_ + ".") or s.startswith(field_ + "[")
               or field_.startswith(s + ".") or field_.startswith(s + "[") for s in supplied)


# ============================================================ audit records

def _records(paper) -> list[tuple[str, Mapping[str, Any]]]:
    return sorted(paper.audit.items())


def _matches(pattern: paths.FieldPath, concrete: str) -> bool:
    try:
        c = paths.parse_path(concrete)
    except paths.PathError:
        return False
    if len(c.segments) != len(pattern.segments):
        return False
    for a, b in zip(pattern.segments, c.segments):
        if a == paths.WILDCARD and isinstance(b, int):
            continue
        if a != b:
            return False
    return True


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
        if any(_matches(metric.path, p) for p in inst.paths):
            return f"{paper.paper_id}/{mid}"
    return None


def _audited_field(task, field_: str, records) -> str | None:
    for paper, (mid, _rec) in records:
        if _matches(task.metric(mid).path, field_):
            return f"{paper.paper_id}/{mid}"
    return None


def _audit_records(task, by_id: Mapping[str, Gate], oracle: Any, paper) -> list[Finding]:
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
                  and any(_matches(metric.path, p) for p in i.paths)]
        schema = [e for e in _schema_errors(task, data) if _matches(metric.path, e.field)]
        shown = _show_original(rec["original"])
        for inst in broken:
            out.append(Finding("audit_justified", task.id, inst.name, paper.paper_id, "audited",
                               f"original {mid} = {shown} breaks the {inst.severity} gate: {inst.detail}"))
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


# ============================================================ scoring side

def _bands(task) -> list[Finding]:
    from mmverify.scoring.rules import band_width

    out = []
    for metric in task.metrics:
        if metric.band is None or metric.direction == "exact_value":
            continue
        for paper in task.panel:
            if metric.id not in paper.values:
                continue
            pv = paper.values[metric.id]
            anchors = [x for _, x in pv] if metric.match_by else (list(pv) if metric.is_list else [pv])
            fired = [r.rule for a in anchors if not isinstance(a, str)
                     for r in [band_width(metric, a, paper.paper_id).rule] if r is not None]
            if fired:
                first = next(band_width(metric, a, paper.paper_id).rule for a in anchors
                             if not isinstance(a, str) and band_width(metric, a, paper.paper_id).rule)
                more = f" ({len(fired)} of {len(anchors)} anchors)" if len(anchors) > 1 else ""
                out.append(Finding("degenerate_band", task.id, metric.id, paper.paper_id, "info",
                                   first.detail + more))
    return out


def _incomparable(task) -> list[Finding]:
    from mmverify.scoring.rules import incomparable

    out = []
    for metric in task.metrics:
        rule = incomparable(task, metric)
        if rule is not None:
            out.append(Finding("incomparable_units", task.id, metric.id, None, "audited", rule.detail))
    return out


def _split(task) -> list[Finding]:
    split = task.literature_split
    if not split:
        return []
    metrics = ", ".join(split.get("metrics", ())) or "-"
    if task.headline:
        return [Finding("literature_split", task.id, "task", None, "problem",
                        f"literature split on {metrics} but the task is in the headline: {split['summary']}")]
    return [Finding("literature_split", task.id, "task", None, "audited",
                    f"split on {metrics}, left out of the headline ({task.headline_reason}): {split['summary']}")]


def _covers(gate_path: paths.FieldPath, metric_path: paths.FieldPath) -> bool:
    if len(gate_path.segments) != len(metric_path.segments):
        return False
    for g, m in zip(gate_path.segments, metric_path.segments):
        if g == paths.WILDCARD and isinstance(m, int):
            continue
        if g != m:
            return False
    return True


def gate_bounds(gate: Gate, metric_path: paths.FieldPath, direction: str) -> bool:
    """Whether hard ``gate`` bounds the field at ``metric_path`` in the metric's good
    direction (up for higher_is_better, down for lower_is_better)."""
    up = direction == "higher_is_better"
    hits = [k for k, p in enumerate(gate.inputs) if _covers(p, metric_path)]
    if not hits:
        return False
    from .formtable import FORM_TABLE

    return FORM_TABLE[gate.form].bounds_field(gate, hits, up)


def schema_bounds(task, metric_path: paths.FieldPath, direction: str) -> bool:
    keys = ("maximum", "exclusiveMaximum") if direction == "higher_is_better" else ("minimum", "exclusiveMinimum")
    subs = sub_schemas(task.artifact_schema, metric_path)
    return bool(subs) and all(any(k in s for k in keys + ("enum", "const")) for s in subs)


def _ungated(task, gates: tuple[Gate, ...]) -> list[Finding]:
    out = []
    for metric in task.metrics:
        if metric.direction not in DIRECTIONAL:
            continue
        by_gate = [g.id for g in gates if g.hard and gate_bounds(g, metric.path, metric.direction)]
        if by_gate or schema_bounds(task, metric.path, metric.direction):
            continue
        side = "above" if metric.direction == "higher_is_better" else "below"
        if metric.ungated_reason:
            out.append(Finding("ungated_directional", task.id, metric.id, None, "audited",
                               f"{metric.direction} and bounded {side} by no hard gate or schema bound; "
                               f"reason: {metric.ungated_reason}"))
        else:
            out.append(Finding("ungated_directional", task.id, metric.id, None, "problem",
                               f"{metric.direction} metric at {metric.path.text} is bounded {side} by no hard gate "
                               "and no schema bound: an overclaimed value scores 1.0 (add a gate, a schema "
                               "bound or an ungated_reason)"))
    return out


def _required(schema: Mapping[str, Any], path: paths.FieldPath) -> bool:
    """Whether the schema forces the field at ``path`` to be present and non-null."""
    nodes: list[Any] = [schema]
    for seg in path.segments:
        nxt = []
        for node in nodes:
            if not isinstance(node, dict):
                return False
            if isinstance(seg, str):
                if seg not in node.get("required", ()):
                    return False
                nxt.append(node.get("properties", {}).get(seg))
            else:
                need = 1 if seg == paths.WILDCARD else seg + 1
                if node.get("minItems", 0) < need and not (
                        seg != paths.WILDCARD and len(node.get("prefixItems") or ()) > seg
                        and node.get("minItems", 0) >= need):
                    return False
                if seg == paths.WILDCARD:
                    nxt.extend(node.get("prefixItems") or [])
                    nxt.append(node.get("items"))
                else:
                    prefix = node.get("prefixItems")
                    nxt.append(prefix[seg] if prefix and seg < len(prefix) else node.get("items"))
        nodes = [n for n in nxt if isinstance(n, dict)]
        if not nodes:
            return False
    for node in nodes:
        t = node.get("type")
        if t is None or t == "null" or (isinstance(t, list) and "null" in t):
            return False
    return True


def _optional_inputs(task, gates: tuple[Gate, ...]) -> list[Finding]:
    dodgeable = []
    for g in gates:
        if not g.hard:
            continue
        optional = [p.text for p in g.inputs if not _required(task.artifact_schema, p)]
        if optional:
            dodgeable.append(g.id)
    if not dodgeable:
        return []
    shown = ", ".join(dodgeable[:6]) + (f" and {len(dodgeable) - 6} more" if len(dodgeable) > 6 else "")
    return [Finding("optional_gate_input", task.id, "task", None, "info",
                    f"{len(dodgeable)} of {sum(g.hard for g in gates)} hard gate(s) read a field the schema lets "
                    f"an artifact omit or set to null (the gate then reports a gap, not a fail): {shown}")]


# ================================================================ rendering

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
