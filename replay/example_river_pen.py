"""Replay of the worked example in docs/authoring.md (a sheep pen on a river).

Witness: ``experiment_result.q1.width_m`` (each of the two sides
perpendicular to the river) and ``experiment_result.q1.length_m`` (the side
along it, opposite the river). From them, exactly: the pen's area ``w * l``
and the fence the plan uses, ``2 w + l``. Nothing else is needed, so the
task has no official data.
"""
from __future__ import annotations

from typing import Any

from mmverify.reading.numbers import to_fraction

from .base import Derived

TASK_ID = "example-river-pen"
DERIVED = ("q1.area_m2", "q1.fence_m")


def load_official(data_dir: str) -> None:
    """Statement-only task: nothing to read."""
    return None


def replay(data: Any, official: None) -> Derived:
    q1 = (data.get("experiment_result") or {}).get("q1") if isinstance(data, dict) else None
    if not isinstance(q1, dict):
        return Derived({}, {n: "no q1 plan" for n in DERIVED})
    w, l = to_fraction(q1.get("width_m")), to_fraction(q1.get("length_m"))
    if w is None or l is None:
        return Derived({}, {n: "width_m and length_m are the witness" for n in DERIVED})
    return Derived({"q1.area_m2": w * l, "q1.fence_m": 2 * w + l})
