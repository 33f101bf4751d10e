"""Shared helpers for the gate and audit tests (a synthetic "lab" task written to
a temporary anchors folder), plus tests of the exact-number rendering."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

from taskfactory import base_task, number_schema, paper, write_task

from mmverify.gates.exact import show
from mmverify.numbers import is_decimal_text
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


# ------------------------------------------------------------------ tests

def test_show_is_exact_when_the_decimal_terminates():
    assert show(Fraction(1406276, 10**6) * Fraction(1604793, 10**6)) == "2.256781880868"
    assert show(Fraction(224)) == "224"
    assert show(Fraction(-1, 8)) == "-0.125"


def test_show_marks_a_truncated_value():
    assert show(Fraction(1, 3)) == "0.333333333333..."
    assert show(Fraction(-2, 3)).startswith("-0.666")
    assert show(Fraction(1, 30000)).endswith("...")
