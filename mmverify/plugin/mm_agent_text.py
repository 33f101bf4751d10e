"""Opt-in, low-trust reading of numbers from MM-Agent's text (``--from-text``).

Design notes: docs/architecture.md, `mmverify/plugin/mm_agent_text.py`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from mmverify.reading import paths

LABELS_FILE = "mm_agent_labels.json"
TEXT_FIELDS = ("execution_result", "solution_interpretation")
MAX_LABEL = 200
_NUMBER = r"(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
_GAP = r"[ \t*_`]*(?:[:=≈]|\bis\b|\bwas\b|\bof\b|\bequals\b)?[ \t*_`~≈]*"


@dataclass(frozen=True)
class Label:
    label: str
    path: paths.FieldPath
    fields: tuple[str, ...]
    pattern: re.Pattern


@dataclass(frozen=True)
class Hit:
    path: str
    value: Decimal
    text: str
    entry: str       # "task 2" / "tasks[3]"
    field: str
    line: int
    label: str


def load_labels(task) -> tuple[tuple[Label, ...], str | None]:
    """The task's label patterns and the file they came from ((), None without a file).
    Raises TaskLoadError for a malformed file (it is anchor data)."""
    from mmverify.tasks import TaskLoadError, read_trusted_json, schema_at

    file = os.path.join(task.directory, LABELS_FILE)
    if not os.path.isfile(file):
        return (), None
    try:
        raw = read_trusted_json(file)
    except (OSError, ValueError) as exc:
        raise TaskLoadError(file, "(file)", f"unreadable: {exc}") from None
    if not isinstance(raw, dict) or set(raw) != {"labels"} or not isinstance(raw["labels"], list):
        raise TaskLoadError(file, "(top level)", 'must be {"labels": [...]}')
    out = []
    for i, item in enumerate(raw["labels"]):
        where = f"labels[{i}]"
        if not isinstance(item, dict) or not {"label", "path"} <= set(item) or set(item) - {"label", "path", "fields"}:
            raise TaskLoadError(file, where, "needs 'label' and 'path' (and optionally 'fields'), nothing else")
        label = item["label"]
        if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
            raise TaskLoadError(file, f"{where}.label", f"a non-empty string of at most {MAX_LABEL} characters")
        try:
            path = paths.parse_path(item["path"])
        except (paths.PathError, TypeError) as exc:
            raise TaskLoadError(file, f"{where}.path", str(exc)) from None
        sub = schema_at(task.artifact_schema, path)
        types = sub.get("type") if isinstance(sub, dict) else None
        types = types if isinstance(types, list) else [types]
        if path.is_list or not ({"number", "integer"} & set(types)):
            raise TaskLoadError(file, f"{where}.path", f"{path.text} is not a numeric field of the artifact schema")
        fields = item.get("fields", list(TEXT_FIELDS))
        if not isinstance(fields, list) or not fields or not set(fields) <= set(TEXT_FIELDS):
            raise TaskLoadError(file, f"{where}.fields", f"a non-empty subset of {list(TEXT_FIELDS)}")
        pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(label.strip()) + _GAP + _NUMBER
                             + r"(?P<after>[ \t]*%|[0-9A-Za-z_])?", re.IGNORECASE)
        out.append(Label(label=label.strip(), path=path, fields=tuple(fields), pattern=pattern))
    return tuple(out), file


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def find(labels: tuple[Label, ...], entries) -> tuple[list[Hit], list[dict[str, Any]]]:
    """Every labelled number in the text of the passed entries, and what was passed over."""
    from mmverify.plugin.mm_agent_layout import PASSED

    hits: list[Hit] = []
    skipped: list[dict[str, Any]] = []
    for e in entries:
        if e.status != PASSED:
            continue
        texts = {"execution_result": e.execution_result, "solution_interpretation": e.solution_interpretation}
        for lab in labels:
            for fname in lab.fields:
                for lineno, line in enumerate((texts[fname] or "").splitlines(), 1):
                    for m in lab.pattern.finditer(line):
                        if m.group("after"):
                            skipped.append({"path": lab.path.text, "entry": e.label, "field": fname,
                                            "line": lineno, "reason": f"{m.group(0).strip()!r}: a percentage "
                                            "or a number run into other characters; not converted"})
                            continue
                        value = _decimal(m.group("num"))
                        if value is None or not value.is_finite():
                            continue
                        hits.append(Hit(path=lab.path.text, value=value, text=m.group("num"), entry=e.label,
                                        field=fname, line=lineno, label=lab.label))
    return hits, skipped
