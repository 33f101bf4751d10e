"""Authoring checks: what a task in progress still lacks.

Design notes: docs/architecture.md, `gates/authoring.py`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator, Mapping

from mmverify.reading import paths
from mmverify.tasks import DIRECTIONAL

from .audit_model import Finding, FindingSeverity

PLACEHOLDER = "TODO(author)"
FILES = ("task.json", "artifact.schema.json", "oracle.json", "README.md", "problem.md")
FIELD_KEYS = ("x-unit", "x-range")   # placeholders of number fields: reported per field, not as text

# the order in which an author fixes what the audit finds
GUIDE_ORDER = ("task_error", "unfinished_placeholder", "unitless_field", "unranged_field", "ungated_directional",
               "unjustified_direction", "anchor_leak", "pinned_metric", "printed_bound_in_band", "guessable_metric")
_HOW = {
    "task_error": "make the task load (the message names the file and field)",
    "unfinished_placeholder": f"replace each {PLACEHOLDER} with the real text or value",
    "unitless_field": "pin the unit of each number field (x-unit; a metric's unit must equal it)",
    "unranged_field": "pin each number field's statement range (minimum/maximum), or replace x-range "
                      "with the reason none follows from the statement",
    "ungated_directional": "bound each one-sided metric in its good direction (a hard gate, a schema bound "
                           "or a replay), or give ungated_reason",
    "unjustified_direction": "justify each one-sided metric's direction and band in a row of the README's "
                             "metrics table",
    "anchor_leak": "remove reference values from agent-facing text (artifact schema prose)",
    "pinned_metric": "remove the metric (the hard gates fix its value), or give guess_reason",
    "printed_bound_in_band": "narrow the band until the printed constant (and 10 % either side) scores "
                             "below 1/2, or give guess_reason",
    "guessable_metric": "tie the metric to the numbers behind it (supported_by), narrow its band, or give "
                        "guess_reason",
}


def _finding(kind: str, task_id: str, subject: str, severity: FindingSeverity, detail: str) -> Finding:
    return Finding(kind, task_id, subject, None, severity, detail)


# ============================================================ placeholders

def _json_strings(node: Any, where: str = "") -> Iterator[tuple[str, str, str | None]]:
    """(location, text, key) of every string (keys included) in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{where}/{key}"
            if PLACEHOLDER in key:
                yield here, key, None
            if isinstance(value, str):
                yield here, value, key
            else:
                yield from _json_strings(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            here = f"{where}/{i}"
            if isinstance(value, str):
                yield here, value, None
            else:
                yield from _json_strings(value, here)


def find_placeholders(directory: str) -> list[tuple[str, str, str]]:
    """(file, location, text) of every placeholder in a task folder; the
    ``x-unit``/``x-range`` notes of the artifact schema are left to the field checks."""
    out: list[tuple[str, str, str]] = []
    for name in FILES:
        file = os.path.join(directory, name)
        try:
            with open(file, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        if PLACEHOLDER not in text:
            continue
        if name.endswith(".json"):
            try:
                doc = json.loads(text)
            except ValueError:
                out.append((name, "(file)", "not valid JSON"))
                continue
            for where, s, key in _json_strings(doc):
                if PLACEHOLDER in s and not (name == "artifact.schema.json" and key in FIELD_KEYS):
                    out.append((name, where or "/", s))
        else:
            for n, line in enumerate(text.splitlines(), 1):
                if PLACEHOLDER in line:
                    out.append((name, f"line {n}", line.strip()))
    return out


# ============================================================ number fields

def number_fields(schema: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(artifact path, sub-schema) of every field the schema types as a number."""
    if not isinstance(schema, dict):
        return
    t = schema.get("type")
    types = set(t) if isinstance(t, list) else {t}
    if types & {"number", "integer"}:
        yield path or "(root)", schema
    for key, sub in (schema.get("properties") or {}).items():
        yield from number_fields(sub, f"{path}.{key}" if path else key)
    for i, sub in enumerate(schema.get("prefixItems") or ()):
        yield from number_fields(sub, f"{path}[{i}]")
    if isinstance(schema.get("items"), dict):
        yield from number_fields(schema["items"], f"{path}[*]")
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            yield from number_fields(sub, path)


def _gate_read(task, gates) -> set[str]:
    return {p.text for g in gates for p in g.inputs} | {m.path.text for m in task.metrics}


def field_findings(task, gates) -> list:
    read = _gate_read(task, gates)
    units, ranges = [], []
    for path, sub in number_fields(task.artifact_schema):
        unit = sub.get("x-unit")
        if isinstance(unit, str) and PLACEHOLDER in unit:
            units.append(_finding("unitless_field", task.id, path, "problem",
                                  "number field without a unit (x-unit is still a placeholder)"))
        elif unit is None and _normal(path) in read:
            units.append(_finding("unitless_field", task.id, path, "info",
                                  "number field read by a gate has no x-unit"))
        note = sub.get("x-range")
        if isinstance(note, str) and PLACEHOLDER in note:
            bounded = any(k in sub for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))
            ranges.append(_finding("unranged_field", task.id, path, "problem",
                                   "statement range not settled (x-range is still a placeholder"
                                   + ("; minimum/maximum are set: delete the note)" if bounded else ")")))
    return units + ranges


def _normal(path: str) -> str:
    try:
        return paths.parse_path(path).text
    except paths.PathError:
        return path


# ============================================================ justification rows

def _table_rows(readme: str) -> list[str]:
    """Table rows the author wrote (the generated one-sided review justifies nothing)."""
    from .review import BEGIN, END

    while BEGIN in readme:
        head, _, rest = readme.partition(BEGIN)
        readme = head + rest.partition(END)[2]
    return [line.replace("`", "") for line in readme.splitlines() if line.lstrip().startswith("|")]


def justification_findings(task) -> list:
    directional = [m for m in task.metrics if m.direction in DIRECTIONAL]
    if not directional:
        return []
    try:
        with open(os.path.join(task.directory, "README.md"), encoding="utf-8") as fh:
            rows = _table_rows(fh.read())
    except (OSError, UnicodeDecodeError):
        return [_finding("unjustified_direction", task.id, "README.md", "info",
                         f"no readable README.md: the direction of {len(directional)} one-sided metric(s) "
                         "is justified nowhere")]
    out = []
    for m in directional:
        if not any(_names(row, m.id) and m.direction in row for row in rows):
            out.append(_finding("unjustified_direction", task.id, m.id, "problem",
                                f"{m.direction} metric has no row in the README's metrics table naming it "
                                "and its direction (say why the direction, the band, and what bounds it)"))
    return out


def _names(row: str, metric_id: str) -> bool:
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    return any(c == metric_id or c.startswith(metric_id + " ") for c in cells)


# ============================================================ all, in order

def authoring_findings(task, gates) -> list:
    out = [_finding("unfinished_placeholder", task.id, f"{file} {where}", "problem",
                    f"unfinished: {_short(text)}") for file, where, text in find_placeholders(task.directory)]
    return out + field_findings(task, gates) + justification_findings(task)


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def render_guide(report, anchors_arg: str | None) -> str:
    """What is left, in the order to fix it, and the command that runs the contracts."""
    problems = list(report.problems)
    rank = {k: i for i, k in enumerate(GUIDE_ORDER)}
    ordered = sorted(problems, key=lambda f: rank.get(f.kind, len(GUIDE_ORDER)))
    lines = ["", "what is left, in the order to fix it"]
    if not ordered:
        lines.append("  nothing: every audit check passes")
    step, last = 0, None
    for f in ordered:
        if f.kind != last:
            step += 1
            last = f.kind
            lines.append(f"  {step}. {f.kind}: {_HOW.get(f.kind, 'fix the finding (see above)')}")
        lines.append(f"       {f.task_id}  {f.subject}")
    if anchors_arg is None:
        from mmverify.tasks import default_anchors_dir

        anchors_arg = os.path.relpath(default_anchors_dir())
    where = anchors_arg
    lines += ["", f"run the task's contracts: pytest --mmverify-anchors {where}"]
    return "\n".join(lines) + "\n"
