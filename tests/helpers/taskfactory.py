"""Build small, real task folders in a temporary anchors directory for tests.

The tasks are complete (task.json, artifact.schema.json, oracle.json) and go
through the same loader and validation as the bundled anchors.
"""
from __future__ import annotations

import json
import os
from typing import Any

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"


def number_schema(unit: str, **bounds: Any) -> dict:
    return {"type": "number", "x-unit": unit, **bounds}


def schema_for(fields: dict[str, dict], list_fields: dict[str, dict] | None = None) -> dict:
    """Artifact schema: ``result.<name>`` scalar fields and ``result.<name>[*]`` lists of
    objects ``{"key": str, "value": number}``."""
    props: dict[str, Any] = dict(fields)
    for name, item in (list_fields or {}).items():
        props[name] = {"type": "array", "items": {"type": "object", "properties": {
            "key": {"type": "string"}, "value": item}}}
    return {"$schema": SCHEMA_URI, "type": "object", "required": ["result"],
            "properties": {"result": {"type": "object", "properties": props}}}


def write_task(anchors: str, task: dict, schema: dict, oracle: dict, index: bool = True) -> str:
    folder = os.path.join(anchors, task["id"])
    os.makedirs(folder, exist_ok=True)
    for name, obj in (("task.json", task), ("artifact.schema.json", schema), ("oracle.json", oracle)):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=2)
    if index:
        file = os.path.join(anchors, "index.json")
        entries = json.load(open(file))["tasks"] if os.path.exists(file) else []
        entries = [e for e in entries if e["id"] != task["id"]]
        entries.append({"id": task["id"], "suite": task["suite"], "year": task["year"],
                        "problem": task["problem"], "headline": task["headline"]})
        with open(file, "w", encoding="utf-8") as fh:
            json.dump({"schema_version": 1, "tasks": entries}, fh, indent=2)
    return folder


def base_task(task_id: str, metrics: list[dict], panel: list[dict], gates: list[dict] | None = None,
              **extra: Any) -> dict:
    task = {"id": task_id, "suite": "CUMCM", "year": 2024, "problem": "A", "title": f"test task {task_id}",
            "headline": True, "provenance": {"source": "unit test"}, "metrics": metrics,
            "gates": gates or [], "panel": panel}
    task.update(extra)
    return task


def paper(paper_id: str, values: dict, oracle: bool = False, **extra: Any) -> dict:
    return {"paper_id": paper_id, "award": "O", "oracle": oracle,
            "provenance": {"source": "unit test"}, "values": values, **extra}


# a hard identity gate for speed_task: speed times ratio at most 2 (the dragon's handle limit)
SPEED_LIMIT = {"id": "speed_limit", "form": "identity", "level": "B", "severity": "hard",
               "expr": "speed * ratio <= 2", "vars": {"speed": "result.speed", "ratio": "result.ratio"},
               "description": "every handle moves at most 2 m/s"}


def speed_task(anchors: str, task_id: str = "t-speed", band: dict | None = None, gates: list | None = None,
               extra_papers: list | None = None, **extra: Any) -> str:
    """A dragon-dance-like task: one higher-is-better speed, one lower-is-better pitch,
    one exact count."""
    metrics = [
        {"id": "speed", "path": "result.speed", "unit": "m/s", "direction": "higher_is_better",
         "weight": 2, "band": band or {"rel": "0.12"}},
        {"id": "pitch", "path": "result.pitch", "unit": "m", "direction": "lower_is_better",
         "weight": 1, "band": {"rel": "0.12"}},
        {"id": "handles", "path": "result.handles", "unit": "count", "direction": "exact_value", "weight": 1},
    ]
    panel = [paper("P1", {"speed": "1.246266", "pitch": "0.4", "handles": "224"}, oracle=True)]
    panel += extra_papers or []
    schema = schema_for({"speed": number_schema("m/s", minimum=0), "pitch": number_schema("m", minimum=0),
                         "handles": {"type": "integer", "x-unit": "count", "minimum": 0},
                         "ratio": number_schema("1")})
    oracle = {"problem_id": "2024-A", "result": {"speed": 1.246266, "pitch": 0.4, "handles": 224,
                                                  "ratio": 1.604793}}
    write_task(anchors, base_task(task_id, metrics, panel, gates, **extra), schema, oracle)
    return anchors
