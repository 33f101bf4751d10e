"""The score report: one frozen value per (task, artifact), rendered as
deterministic JSON, a plain-text table or Markdown.

Every number traces back to the metric spec (direction, band), the panel value
(anchor per paper) and the rule that produced it. Exact values are reported as
``p/q`` text beside their rounded floats. "Not scored" (no paper votes) is kept
apart from a zero.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Mapping

from mmverify.reading.numbers import fraction_text, report_float
from mmverify.pipeline.statuses import FORCED_FAIL, STATUSES, Status
from mmverify.render.tables import fixed, printable, text_table

if TYPE_CHECKING:
    from mmverify.scoring.rules import Ruleset

SCHEMA_VERSION = "mmverify.report/1"


@dataclass(frozen=True)
class Report:
    """The result of scoring one artifact against one task: status, O-EVAL
    (exact), the gate report, the panel score and the ruleset used. ``as_dict``
    and ``to_json`` give the deterministic JSON form (``mmverify.report/1``)."""

    task_id: str
    task_info: Mapping[str, Any]
    source: str | None
    sha256: str | None
    status: Status
    oeval: Fraction | None
    error: Mapping[str, str] | None = None
    schema_errors: tuple = ()
    gates: Any = None          # mmverify.gates.GateReport or None
    panel: Any = None          # mmverify.scoring.panel.PanelScore or None
    ruleset: Ruleset = "verified"  # the named ruleset scores were computed under
    findings: Mapping[str, str] | None = None   # the task's own oracle: gate instance -> audited finding

    @property
    def closeness(self) -> Fraction | None:
        """The panel O-EVAL before any gate zeroing (None if not computed)."""
        return self.panel.oeval if self.panel is not None else None

    @property
    def forced_fail(self) -> bool:
        return self.status in FORCED_FAIL

    @property
    def reward(self) -> float:
        return float(self.oeval) if self.oeval is not None else 0.0

    def verified_share(self):
        """Which part of the score a replay decided
        (:class:`mmverify.scoring.verified.VerifiedShare`), or None when the
        panel or the gates were not run."""
        if self.panel is None or self.gates is None:
            return None
        from mmverify.scoring.verified import verified_share

        return verified_share(self.panel, self.gates)

    # ----------------------------------------------------------------- JSON
    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "task": dict(self.task_info, id=self.task_id),
            "artifact": {"source": self.source, "sha256": self.sha256},
            "status": self.status,
            "status_meaning": STATUSES[self.status],
            "ruleset": self.ruleset,
            "oeval": report_float(self.oeval),
            "oeval_exact": fraction_text(self.oeval) if self.oeval is not None else None,
            "error": dict(self.error) if self.error else None,
            "schema_errors": [e.as_dict() for e in self.schema_errors],
            "gates": self.gates.as_dict() if self.gates is not None else None,
        }
        if self.findings:
            out["audited_findings"] = dict(sorted(self.findings.items()))
        if self.panel is not None:
            out["closeness_oeval"] = report_float(self.panel.oeval)
            share = self.verified_share()
            judged = share.judgements if share is not None else {}
            out["metrics"] = [_metric_dict(m, judged.get(m.metric_id)) for m in self.panel.metrics]
            if share is not None:
                out["replay_judged"] = share.as_dict()
            out["papers"] = [
                {"paper": p.paper_id, "award": p.award, "oracle": p.oracle, "reported": list(p.reported),
                 "votes": p.r is not None, "R": report_float(p.r),
                 "R_exact": fraction_text(p.r) if p.r is not None else None}
                for p in self.panel.papers
            ]
            out["non_voting_papers"] = [p.paper_id for p in self.panel.papers if p.r is None]
            out["rules"] = [r.as_dict() for r in self.panel.rules]
            out["removed_metrics"] = [
                {"metric": m.metric_id, "rule": m.removed.rule, "detail": m.removed.detail}
                for m in self.panel.metrics if m.removed is not None
            ]
            out["exclusions"] = [
                {"paper": pm.paper_id, "metric": m.metric_id, "reason": pm.reason}
                for m in self.panel.metrics for pm in m.per_paper if pm.status == "excluded"
            ]
        return out

    def to_json(self) -> str:
        return dumps(self.as_dict())


def dumps(obj: Any) -> str:
    """Deterministic JSON text: sorted keys, fixed separators, trailing newline.

    The text of ``json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False,
    allow_nan=False)``, written by :func:`_write` (json's own indenting writer is
    its slow pure-Python one); anything but plain dicts, lists, tuples, strings,
    ints, finite floats, booleans and None under string keys is left to json,
    which renders it or raises exactly as before."""
    parts: list[str] = []
    try:
        _write(obj, "\n", parts.append)
    except (_Unusual, RecursionError, TypeError):   # TypeError: keys that do not sort
        return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return "".join(parts) + "\n"


class _Unusual(Exception):
    """A value :func:`_write` leaves to json."""


_json_string = json.encoder.encode_basestring   # json's own (C) string writer for ensure_ascii=False
_INF = float("inf")


def _scalar(o: Any) -> str | None:
    """The JSON text of a plain scalar (as json writes it), None for a container."""
    t = type(o)
    if t is str:
        return _json_string(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if t is int:
        return int.__repr__(o)
    if t is float:
        if o != o or o == _INF or o == -_INF:
            raise _Unusual        # json raises ValueError for it (allow_nan=False)
        return float.__repr__(o)
    return None


def _write(o: Any, newline: str, out: Callable[[str], None]) -> None:
    """``o`` as json's indent-2 writer lays it out, ``newline`` being the line
    break and indent of its level: items on their own lines, keys sorted."""
    text = _scalar(o)
    if text is not None:
        out(text)
        return
    t = type(o)
    if t is dict:
        if not o:
            out("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for k, v in sorted(o.items()):
            if type(k) is not str:
                raise _Unusual        # json turns such keys into text, or raises
            text = _scalar(v)
            if text is not None:
                out(sep + _json_string(k) + ": " + text)
            else:
                out(sep + _json_string(k) + ": ")
                _write(v, inner, out)
            sep = "," + inner
        out(newline + "}")
    elif t is list or t is tuple:
        if not o:
            out("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for v in o:
            text = _scalar(v)
            if text is not None:
                out(sep + text)
            else:
                out(sep)
                _write(v, inner, out)
            sep = "," + inner
        out(newline + "]")
    else:
        raise _Unusual


def dumps_line(obj: Any) -> str:
    """Deterministic one-line JSON (for JSON Lines), without the newline."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _metric_dict(m, judgement: str | None = None) -> dict[str, Any]:
    return {
        "id": m.metric_id, "path": m.path, "unit": m.unit, "direction": m.direction, "judgement": judgement,
        "weight": fraction_text(m.weight), "band": m.band, "value": m.value,
        "read_status": m.read_status, "read_detail": m.read_detail,
        "removed": m.removed.as_dict() if m.removed else None,
        "papers": [
            {"paper": pm.paper_id, "status": pm.status, "anchor": pm.anchor,
             "band_width": fraction_text(pm.band_width) if pm.band_width is not None else None,
             "r": report_float(pm.r), "r_exact": fraction_text(pm.r) if pm.r is not None else None,
             "reason": pm.reason, "audited": pm.audited, "correction": pm.correction,
             "rules": [r.as_dict() for r in pm.rules],
             "items": [
                 {"key": it.key, "value": it.value, "anchor": it.anchor, "status": it.status,
                  "band_width": fraction_text(it.band_width) if it.band_width is not None else None,
                  "r": report_float(it.r)}
                 for it in pm.items
             ]}
            for pm in m.per_paper
        ],
    }


# ----------------------------------------------------------------- text / md

def _short(value: Any, width: int = 14) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, dict)):
        text = f"[{len(value)} items]"
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 1] + "~"


_ARROWS = {"higher_is_better": "up", "lower_is_better": "down", "target_value": "target", "exact_value": "exact"}


def _rows(report: Report) -> list[list[str]]:
    rows = []
    share = report.verified_share()
    judged = share.judgements if share is not None else {}
    for m in report.panel.metrics:
        for pm in m.per_paper:
            if pm.status == "excluded":
                note = f"excluded: {pm.reason}"
            elif pm.status == "removed":
                note = "removed: incomparable_units"
            elif pm.status != "scored":
                note = pm.status
            else:
                note = ", ".join(sorted({r.rule for r in pm.rules}))
            if pm.correction:
                note = (note + "; " if note else "") + pm.correction
            elif pm.audited:
                note = (note + "; " if note else "") + "audited anchor"
            rows.append([m.metric_id, _ARROWS[m.direction], _short(m.value), judged.get(m.metric_id, "-"),
                         pm.paper_id, _short(pm.anchor),
                         fixed(pm.band_width, 4) if pm.band_width is not None else "-", fixed(pm.r, 4), note])
    return rows


_HEAD = ["metric", "dir", "value", "judged", "paper", "anchor", "w", "r", "note"]


def _header_lines(report: Report) -> list[str]:
    info = report.task_info
    lines = [f"task     {report.task_id} ({info.get('suite')} {info.get('year')} {info.get('problem')})",
             f"artifact {report.source or '-'}" + (f"  sha256 {report.sha256[:12]}" if report.sha256 else ""),
             f"status   {report.status}: {STATUSES[report.status]}",
             "O-EVAL   " + (f"{float(report.oeval):.4f}  (exact {fraction_text(report.oeval)})"
                            if report.oeval is not None else "not scored")]
    share = report.verified_share() if report.status in ("scored", "infeasible") else None
    if share is not None and share.total_weight:
        lines.append(f"replay   {fraction_text(share.verified_weight)} of {fraction_text(share.total_weight)} "
                     f"metric weight verified by a replay ({float(share.share):.0%}); verified credit "
                     + (f"{float(share.verified_credit):.4f}" if share.verified_credit is not None else "-"))
    if report.status == "infeasible" and report.closeness is not None:
        lines.append(f"         closeness before the gate zero: {float(report.closeness):.4f}")
    if report.error:
        lines.append(f"error    {report.error['code']}: {report.error['message']}")
    for e in report.schema_errors:
        lines.append(f"schema   {e.field}: {e.problem}{effect_note(e.effect)}")
    return lines


def effect_note(effect: Mapping[str, Any] | None) -> str:
    """What a schema violation does to the score, in words (see mmverify.pipeline.violations)."""
    if not effect:
        return ""
    kind = effect["kind"]
    if kind == "warning":
        return " (warning: no scored field or gate reads it)"
    parts = []
    if effect["scored_fields"]:
        parts.append("scores 0 at " + ", ".join(effect["scored_fields"]))
    if effect["gates"]:
        parts.append("read by gate " + ", ".join(effect["gates"]))
    if kind == "invalid":
        return " (all-or-nothing schema: the artifact is invalid)"
    return " (" + "; ".join(parts) + ")"


def _gate_lines(report: Report) -> list[str]:
    if report.gates is None:
        return []
    lines = report.gates.summary_lines()
    if report.findings:
        # the task's own oracle: each failing gate instance is a documented finding
        # (an audit record names it, or a soft gate the published answer fails), not an alarm
        marked = []
        for line in lines:
            name = line[12:].split(": ", 1)[0] if line.startswith("  FAIL") else None
            marked.append(line + f"  [{report.findings[name]}]" if name in report.findings else line)
        lines = marked
    return lines


def render_table(report: Report) -> str:
    lines = _header_lines(report)
    if report.panel is not None:
        lines.append("")
        lines += text_table(_HEAD, _rows(report))
        lines.append("")
        lines.append("paper      award  oracle  |S_p|  R")
        for p in report.panel.papers:
            lines.append(f"{p.paper_id:<10} {p.award:<6} {'yes' if p.oracle else 'no':<7} "
                         f"{len(p.reported):<6} {fixed(p.r, 4) if p.r is not None else 'does not vote'}")
        for r in report.panel.rules:
            lines.append(f"rule {r.rule} [{r.metric_id}{'/' + r.paper_id if r.paper_id else ''}]: {r.detail}")
    gl = _gate_lines(report)
    if gl:
        lines.append("")
        lines.extend(gl)
    return "\n".join(map(printable, lines)) + "\n"


def render_markdown(report: Report) -> str:
    lines = [f"### {report.task_id}", ""]
    lines += [f"- {line.strip()}" for line in _header_lines(report)]
    if report.panel is not None:
        lines += ["", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
        for r in _rows(report):
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        lines += ["", "| paper | award | oracle | \\|S_p\\| | R |", "|---|---|---|---|---|"]
        for p in report.panel.papers:
            lines.append(f"| {p.paper_id} | {p.award} | {'yes' if p.oracle else 'no'} | {len(p.reported)} | "
                         f"{fixed(p.r, 4) if p.r is not None else 'does not vote'} |")
        if report.panel.rules:
            lines.append("")
            lines += [f"- rule `{r.rule}` ({r.metric_id}): {r.detail}" for r in report.panel.rules]
    gl = _gate_lines(report)
    if gl:
        lines += [""] + [f"- {g.strip()}" for g in gl]
    return "\n".join(map(printable, lines)) + "\n"


def render(report: Report, fmt: str) -> str:
    if fmt == "json":
        return report.to_json()
    if fmt == "md":
        return render_markdown(report)
    return render_table(report)
