"""The paper's artifact: the task's oracle artifact with one panel paper's
values substituted at the metric paths and its ``context`` values at their
paths (everything the paper does not report stays the oracle's). The audit
checks it against the gates and the schema; the Lean obligations are built
from it.
"""
from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any, Iterable, Mapping

from mmverify.reading import paths
from mmverify.reading.labels import normalise_label as normalise
from mmverify.reading.numbers import decimal_text, is_decimal_text

from .compile import sub_schemas


def anchored_artifacts(task) -> list[tuple[str, Any]]:
    """``(label, data)`` of the oracle artifact and of each panel paper's
    artifact (:func:`paper_artifact`), as the audit and the Lean files name
    them (``oracle``, ``panel paper <id>``)."""
    from mmverify.reading.artifact import parse_file

    oracle = parse_file(task.oracle_path).data
    return [("oracle", oracle)] + [(f"panel paper {p.paper_id}", paper_artifact(task, oracle, p)[0])
                                   for p in task.panel]


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
