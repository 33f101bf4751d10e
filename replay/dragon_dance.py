"""Replay of CUMCM 2024 A (bench dragon): every number from the statement's geometry.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2024-a-dragon-dance"
# the statement quantities: none depends on the artifact
STATEMENT = (
    "q2.terminal_time_s",
    "q3.minimum_pitch_m",
    "q4.base_turn_length_m",
    "q4.shortest_turn_length_m",
    "q5.max_speed_ratio",
    "q5.max_head_speed_mps",
)
# and the check of the Q1 table the artifact reports, against the statement's
TABLE_ERROR = "q1.table_max_error"
DERIVED = STATEMENT + (TABLE_ERROR,)
REFERENCE_FILE = "statement_reference.json"
PLACES = {"q2.terminal_time_s": 4, "q3.minimum_pitch_m": 6, "q4.base_turn_length_m": 6,
          "q4.shortest_turn_length_m": 6, "q5.max_speed_ratio": 6, "q5.max_head_speed_mps": 6}
TABLE_PLACES = 6                 # the statement asks for positions and speeds to 6 decimals
TABLE_FIELDS = ("x_m", "y_m", "speed_mps")
TABLE_PATH = "experiment_result.q1.table"


def load_official(data_dir: str) -> Mapping[str, Any]:
    """The statement quantities, read from ``data/statement_reference.json``
    (the output of :func:`dragon_dance_geometry.statement_quantities`), and
    Q1's reported table as exact values rounded to 6 places, keyed by
    (second, handle)."""
    import json
    import os

    with open(os.path.join(data_dir, REFERENCE_FILE), encoding="utf-8") as fh:
        raw = json.load(fh)["values"]
    out: dict[Any, Any] = {name: float(raw[name]) for name in STATEMENT if name in raw}
    table: dict[tuple[int, int], tuple[Fraction, ...]] = {}
    for name, text in raw.items():
        if not name.startswith("q1.t"):
            continue
        t, h, field_ = name[len("q1.t"):].split(".", 2)
        row = table.setdefault((int(t), int(h[1:])), [None] * len(TABLE_FIELDS))
        row[TABLE_FIELDS.index(field_)] = Fraction(Decimal(f"{float(text):.{TABLE_PLACES}f}"))
    out["q1.table"] = {k: tuple(v) for k, v in table.items()}
    return out


def exact(name: str, x: float) -> Fraction:
    """``x`` rounded to the documented places of ``name``, as an exact Fraction."""
    return Fraction(Decimal(f"{x:.{PLACES[name]}f}"))


def replay(data: Mapping[str, Any], official: Mapping[str, Any]) -> Derived:
    """The statement quantities, and the largest deviation of the artifact's Q1
    table from the statement's (a gap, with its reason, when the artifact has
    no usable table)."""
    values = {name: exact(name, official[name]) for name in STATEMENT if name in official}
    error, why = table_error(data, official["q1.table"])
    if error is not None:
        values[TABLE_ERROR] = error
    return Derived(values, {TABLE_ERROR: why} if why else {})


def table_error(data: Any, reference: Mapping[tuple[int, int], tuple[Fraction, ...]]
                ) -> tuple[Fraction | None, str | None]:
    """(max over the rows and fields of |claimed - replayed|, None), or (None,
    why not). The table must hold every (second, handle) the statement asks
    the paper to report, once each, and nothing else; its numbers are read
    exactly from the artifact's decimals, never converted to floats."""
    rows = data.get("experiment_result", {}) if isinstance(data, dict) else {}
    rows = rows.get("q1", {}) if isinstance(rows, dict) else {}
    rows = rows.get("table") if isinstance(rows, dict) else None
    if rows is None:
        return None, f"no Q1 table at {TABLE_PATH}"
    if not isinstance(rows, list):
        return None, f"{TABLE_PATH} is not a list"
    seen: set[tuple[int, int]] = set()
    worst = Fraction(0)
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            return None, f"row {k} is not an object"
        key = (_whole(row.get("t_s")), _whole(row.get("handle")))
        if None in key:
            return None, f"row {k}: t_s and handle must be whole numbers"
        if key not in reference:
            return None, f"row {k}: (t_s {key[0]}, handle {key[1]}) is not in the statement's Q1 table"
        if key in seen:
            return None, f"row {k}: (t_s {key[0]}, handle {key[1]}) given twice"
        seen.add(key)
        for name, want in zip(TABLE_FIELDS, reference[key]):
            got = row.get(name)
            if type(got) is not Decimal or not got.is_finite():
                return None, f"row {k}: {name} is not a finite number"
            worst = max(worst, abs(Fraction(got) - want))
    if len(seen) != len(reference):
        return None, f"the Q1 table has {len(seen)} of the statement's {len(reference)} rows"
    return worst, None


def _whole(v: Any) -> int | None:
    if type(v) is Decimal and v.is_finite() and v == v.to_integral_value() and abs(v) < 10 ** 6:
        return int(v)
    return None
