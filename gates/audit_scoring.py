"""The audit's checks of a task's scoring side: degenerate bands, units that
cannot be compared, literature splits, directional metrics that no hard gate
or schema bound holds in their good direction, and hard gates an artifact can
dodge by omitting an input.
"""
from __future__ import annotations

from typing import Any, Mapping

from mmverify.reading import paths
from mmverify.tasks import DIRECTIONAL

from .audit_model import Finding
from .compile import sub_schemas
from .model import Gate


def scoring_findings(task, gates: tuple[Gate, ...]) -> list[Finding]:
    """Every scoring-side finding of ``task`` (its compiled ``gates`` given)."""
    return [*_bands(task), *_incomparable(task), *_split(task), *_ungated(task, gates),
            *_optional_inputs(task, gates)]


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


def gate_bounds(gate: Gate, metric_path: paths.FieldPath, direction: str) -> bool:
    """Whether hard ``gate`` bounds the field at ``metric_path`` in the metric's good
    direction (up for higher_is_better, down for lower_is_better)."""
    up = direction == "higher_is_better"
    hits = [k for k, p in enumerate(gate.inputs) if paths.matches(p, metric_path)]
    if not hits:
        return False
    from .registry import FORM_TABLE

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
    """Whether the schema forces the field at ``path`` to be present and non-null:
    every schema on the way requires the next key (or holds enough items for
    the next index; one for ``[*]``), and the field's own schemas exclude null."""
    for k, seg in enumerate(path.segments):
        holders = sub_schemas(schema, paths.FieldPath("", path.segments[:k]))
        if not holders:
            return False
        for node in holders:
            if isinstance(seg, str):
                if seg not in node.get("required", ()):
                    return False
            elif node.get("minItems", 0) < (1 if seg == paths.WILDCARD else seg + 1):
                return False
    nodes = sub_schemas(schema, path)
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
