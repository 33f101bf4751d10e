"""Shared pieces of the replay tests: the bundled anchors, an artifact as the
strict parser reads it, and the gate verdicts of an artifact. The ``task``
fixture (the test module's ``TASK``) is in ``tests/replay/conftest.py``."""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from mmverify.gates import evaluate_gates
from mmverify.reading.artifact import Artifact, parse_bytes

ANCHORS = Path(__file__).resolve().parents[2] / "anchors"


def oracle_json(task_id: str) -> dict:
    """The task's oracle as plain JSON (floats): tests edit a copy and hand it back through :func:`parsed`."""
    return json.loads((ANCHORS / task_id / "oracle.json").read_text(encoding="utf-8"))


def parsed(obj: Any) -> Artifact:
    """``obj`` written as JSON text and read back by the strict parser (exact
    decimals); a Decimal in ``obj`` is written as its nearest float."""
    return parse_bytes(json.dumps(obj, default=_float, ensure_ascii=False).encode())


def _float(x: Any) -> float:
    if isinstance(x, Decimal):
        return float(x)
    raise TypeError(type(x))


def verdicts(task: Any, obj: Any) -> dict[str, str]:
    """Gate id -> verdict of the artifact ``obj`` (the last instance's, for a gate with several)."""
    return {i.gate_id: i.verdict for i in evaluate_gates(task, parsed(obj).data).instances}


def report_verdicts(task: Any, data: Any) -> tuple[dict[str, str], Any]:
    """Gate id -> verdict of parsed artifact ``data``, and the gate report."""
    report = evaluate_gates(task, data)
    return {i.gate_id: i.verdict for i in report.instances}, report
