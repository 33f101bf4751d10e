"""Drafts for a task's author: a new task folder, and an artifact schema drafted
from an example artifact. Pure functions returning text or JSON-able data; the
``new-task`` and ``schema-from`` commands write them.

Every decision left to the author is a string holding ``TODO(author)``
(:data:`mmverify.gates.authoring.PLACEHOLDER`); ``mmverify audit`` lists each
one until it is gone.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from mmverify.gates.authoring import PLACEHOLDER

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
UNIT_NOTE = f"{PLACEHOLDER}: unit"
RANGE_NOTE = f"{PLACEHOLDER}: statement range (set minimum/maximum and delete this note, or say why none)"


def _todo(what: str) -> str:
    return f"{PLACEHOLDER}: {what}"


# ================================================================ new task

def task_files(task_id: str) -> dict[str, str]:
    """File name -> text of a new task folder: one metric, one gate, a panel of
    one (oracle) paper; it loads and passes its own contracts as written."""
    metric, path = "q1.answer", "experiment_result.q1.answer"
    unit = UNIT_NOTE
    task = {
        "$comment": _todo("set suite, year, problem and headline, then delete this comment"),
        "id": task_id,
        "suite": _todo("suite (e.g. CUMCM)"),
        "year": 2026,
        "problem": _todo("problem letter"),
        "title": _todo("short title"),
        "headline": True,
        "provenance": {"source": _todo("where the statement and the panel come from")},
        "metrics": [{
            "id": metric, "path": path, "unit": unit, "direction": "target_value", "weight": 1,
            "band": {"rel": "0.1"},
            "description": _todo("what the metric measures (direction and band are justified in README.md)"),
        }],
        "gates": [{
            "id": "q1.answer_not_negative", "form": "range", "level": "A", "severity": "hard",
            "path": path, "min": "0",
            "description": _todo("quote the statement sentence behind this bound"),
        }],
        "panel": [{
            "paper_id": "P1", "title": _todo("paper title"), "award": "O", "oracle": True,
            "provenance": {"source": _todo("the paper, and how its value was read or reproduced")},
            "values": {metric: "1.5"},
        }],
    }
    schema = {
        "$schema": SCHEMA_DIALECT,
        "title": _todo("task title - result artifact"),
        "type": "object",
        "required": ["experiment_result"],
        "properties": {
            "task_id": {"type": "string"},
            "experiment_result": {
                "type": "object",
                "required": ["q1"],
                "properties": {"q1": {
                    "type": "object",
                    "required": ["answer"],
                    "properties": {"answer": {"type": "number", "x-unit": unit, "x-range": RANGE_NOTE}},
                }},
            },
        },
    }
    oracle = {"task_id": task_id, "experiment_result": {"q1": {"answer": Decimal("1.5")}}}
    readme = f"""# {task_id} — {_todo("contest, year, problem, title")}

**Task.** {_todo("the statement in a few sentences, with the numbers the gates use")}

## Metrics (1)

| id | path | direction | weight | band | why |
|---|---|---|---|---|---|
| {metric} | {path} | target_value | 1 | rel 0.1 | {_todo("why this direction and band; for a one-sided metric, what bounds it in its good direction")} |

## Gates (1, hard)

| id | form | level | severity | statement sentence |
|---|---|---|---|---|
| q1.answer_not_negative | range | A | hard | {_todo("quote the statement")} |

## Panel and audits

| paper | award | reports | excluded (reason) | audit records |
|---|---|---|---|---|
| P1 | O | {metric} | - | - |

## Data decisions

{_todo("how each panel value was read, and every correction with its evidence")}
"""
    problem = f"# {_todo('statement title')}\n\n{_todo('the statement as the agent reads it')}\n"
    return {
        "task.json": to_text(task),
        "artifact.schema.json": to_text(schema),
        "oracle.json": to_text(oracle),
        "README.md": readme,
        "problem.md": problem,
    }


def index_entry(task_id: str) -> dict[str, Any]:
    return {"id": task_id, "suite": _todo("suite (e.g. CUMCM)"), "year": 2026, "problem": _todo("problem letter"),
            "headline": True}


# ================================================================ schema from an example

def draft_schema(example: Any, title: str | None = None) -> dict[str, Any]:
    """A JSON Schema drafted from a parsed example artifact (exact decimals).

    It keeps the shape only: types, required keys, list item shapes, and on
    every number an ``x-unit`` and an ``x-range`` placeholder. No value of the
    example is copied (no description, enum, const, example, default, bound or
    list length carries one); object keys are the field names, not values."""
    schema: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "title": title or _todo("task title - result artifact")}
    schema.update(_shape(example))
    return schema


def _shape(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, (int, Decimal)):
        return {"type": _number_type(value), "x-unit": UNIT_NOTE, "x-range": RANGE_NOTE}
    if isinstance(value, str):
        return {"type": "string"}
    if value is None:
        return {"description": _todo("the example holds null here: give this field its type")}
    if isinstance(value, list):
        if not value:
            return {"type": "array", "items": {"description": _todo("the example's list is empty: describe its items")}}
        return {"type": "array", "items": _merge([_shape(v) for v in value])}
    if isinstance(value, dict):
        return {"type": "object", "required": sorted(value), "properties": {k: _shape(v) for k, v in value.items()}}
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _number_type(value: int | Decimal) -> str:
    """``integer`` for a whole number written without decimals (``312``),
    ``number`` for one written with them (``25.0``, ``2.5``, ``1E+1``): the
    example's author says which fields are counts by how the oracle writes them."""
    if isinstance(value, int):
        return "integer"
    return "integer" if value.is_finite() and value.as_tuple().exponent == 0 else "number"


def _merge(shapes: list[dict[str, Any]]) -> dict[str, Any]:
    """One schema for the items of a list: objects merge key by key (a key is
    required when every item has it); items of different kinds become ``anyOf``."""
    flat = [member for s in shapes for member in (s["anyOf"] if "anyOf" in s else [s])]
    if any(s.get("type") == "number" for s in flat):    # 25 and 25.5 in one list: a measure
        flat = [dict(s, type="number") if s.get("type") == "integer" else s for s in flat]
    kinds: dict[str, list[dict[str, Any]]] = {}
    for s in flat:
        kinds.setdefault(s.get("type") or json.dumps(s, sort_keys=True), []).append(s)
    merged = []
    for kind, group in kinds.items():
        if kind == "object":
            keys: dict[str, list[dict[str, Any]]] = {}
            for s in group:
                for k, sub in s["properties"].items():
                    keys.setdefault(k, []).append(sub)
            required = sorted(k for k in keys if all(k in s["required"] for s in group))
            merged.append({"type": "object", "required": required,
                           "properties": {k: _merge(subs) for k, subs in keys.items()}})
        elif kind == "array":
            items = [s["items"] for s in group]
            merged.append({"type": "array", "items": _merge(items)})
        else:
            merged.append(group[0])
    return merged[0] if len(merged) == 1 else {"anyOf": merged}


def to_text(doc: Any) -> str:
    """JSON text with exact decimals written as they were read."""
    return _dump(doc, 0) + "\n"


def _dump(value: Any, depth: int) -> str:
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, (list, dict)) for v in value):
            return "[" + ", ".join(_dump(v, 0) for v in value) + "]"
        return "[\n" + ",\n".join(inner + _dump(v, depth + 1) for v in value) + "\n" + pad + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{\n" + ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, depth + 1)}"
                                  for k, v in value.items()) + "\n" + pad + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")
