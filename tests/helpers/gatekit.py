"""Shared helpers for the gate, audit and Lean tests: a synthetic "lab" task
written to a temporary anchors folder, a dragon-dance-like task, and the CLI."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

from tests.helpers.taskfactory import base_task, number_schema, paper, schema_for, write_task

from mmverify.reading.numbers import is_decimal_text
from mmverify.tasks import load_task

LAB_ID = "t-lab"


def lab_schema(extra: dict | None = None) -> dict:
    item = {"type": "object", "properties": {
        "key": {"type": "string"}, "value": number_schema("1"), "low": number_schema("1"),
        "high": number_schema("1")}}
    props = {name: number_schema("1") for name in ("x", "y", "z", "w", "n", "total")}
    props["label"] = {"type": "string"}
    props["items"] = {"type": "array", "items": item}
    props["nums"] = {"type": "array", "items": number_schema("1")}
    props.update(extra or {})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["result"],
            "properties": {"result": {"type": "object", "properties": props}}}


def lab_task(anchors: str, gates: list[dict], task_id: str = LAB_ID, **extra: Any):
    """A task whose schema describes result.{x,y,z,w,n,total,label,items[*],nums[*]}."""
    metrics = [{"id": "x", "path": "result.x", "unit": "1", "direction": "target_value", "weight": 1,
                "band": {"abs": "1"}}]
    panel = [paper("P1", {"x": "1"}, oracle=True)]
    write_task(anchors, base_task(task_id, metrics, panel, gates, **extra), lab_schema(), {"result": {"x": 1}})
    return load_task(task_id, anchors)


def with_gates(task, *specs: dict):
    """The same task with other gate specs (compiled afresh: the gate tuple changes)."""
    return dataclasses.replace(task, gates=tuple(specs))


def gate(gid: str, form: str, severity: str = "hard", level: str = "A", **fields: Any) -> dict:
    return {"id": gid, "form": form, "level": level, "severity": severity, "description": f"test gate {gid}",
            **fields}


class Str(str):
    """A string that stays a JSON string in :func:`data` even when it looks like a number."""


def data(**result: Any) -> dict:
    """Artifact data as the strict parser builds it: numbers, and decimal text, become
    Decimal (wrap a string in :class:`Str` to keep it a string)."""
    return {"result": _dec(result)}


def _dec(v: Any) -> Any:
    if isinstance(v, Str):
        return str(v)
    if isinstance(v, str):
        return Decimal(v) if is_decimal_text(v) else v
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if isinstance(v, Fraction):
        raise TypeError("use decimal text")
    if isinstance(v, dict):
        return {k: _dec(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_dec(x) for x in v]
    return v


def run_cli(*args: str, cwd: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("MMVERIFY_ANCHORS", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=300)


def write_json(path: str, obj: Any) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)
    return path


def no_floats(obj: Any) -> bool:
    if isinstance(obj, float):
        return False
    if isinstance(obj, dict):
        return all(no_floats(v) for v in obj.values())
    if isinstance(obj, list):
        return all(no_floats(v) for v in obj)
    return True


TID = "t-dragon"

GATES = [
    {"id": "q5.handle_speed_limit", "form": "identity", "level": "B", "severity": "hard",
     "expr": "v_head * ratio_max <= 2", "vars": {"v_head": "result.speed", "ratio_max": "result.ratio"},
     "description": "statement Q5: every handle at most 2 m/s; the oracle reaches 1.246266"},
    {"id": "q5.ratio_at_least_one", "form": "range", "level": "B", "severity": "hard",
     "path": "result.ratio", "min": "1", "description": "ratio >= 1"},
    {"id": "q1.handles_integer", "form": "integer", "level": "A", "severity": "hard",
     "path": "result.handles", "description": "whole handles"},
    {"id": "q3.pitch_soft_cap", "form": "range", "level": "C", "severity": "soft",
     "path": "result.pitch", "max": "0.5", "description": "soft cap (panel says 0.4)"},
]

PANEL = [
    paper("A016", {"speed": "1.246266", "pitch": "0.4", "handles": "224"}, oracle=True,
          context={"result.ratio": "1.604793"},
          audit={"speed": {"original": "1.406276", "reason": "1.406276 x 1.604793 > 2",
                           "gate": "q5.handle_speed_limit"}}),
    paper("B002", {"speed": "1.318842", "pitch": "0.4375"}, excluded={"handles": "figure_only"},
          context={"result.ratio": "1.507113"}),
]


def dragon_task(anchors: str, gates=None, panel=None, schema_extra=None, metric_extra=None, oracle_extra=None,
                **extra) -> str:
    """A dragon-dance-like task (speed up, pitch down, exact handles; ratio as context)."""
    metrics = [
        {"id": "speed", "path": "result.speed", "unit": "m/s", "direction": "higher_is_better", "weight": 2,
         "band": {"rel": "0.12"}},
        {"id": "pitch", "path": "result.pitch", "unit": "m", "direction": "lower_is_better", "weight": 1,
         "band": {"rel": "0.05"}},
        {"id": "handles", "path": "result.handles", "unit": "count", "direction": "exact_value", "weight": 1},
    ]
    fields = {"speed": number_schema("m/s", minimum=0), "pitch": number_schema("m", minimum=0),
              "handles": {"type": "integer", "x-unit": "count", "minimum": 0}, "ratio": number_schema("1")}
    for m in metrics:
        m.update((metric_extra or {}).get(m["id"], {}))
    fields.update(schema_extra or {})
    oracle = {"problem_id": "2024-A", "result": {"speed": 1.246266, "pitch": 0.4, "handles": 224, "ratio": 1.604793}}
    oracle["result"].update(oracle_extra or {})
    task = base_task(TID, metrics, PANEL if panel is None else panel, GATES if gates is None else gates, **extra)
    write_task(anchors, task, schema_for(fields), oracle)
    return anchors
