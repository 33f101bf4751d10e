"""Replay of MCM 2025 C (Olympic medal table): the Paris 2024 counts the answer reports.

The answer's projections for 2028 are model outputs and stay closeness-scored.
What the official data determine are the Paris 2024 results each projected
country is compared with ("which countries will most likely improve, and
which will do worse than in 2024"): ``actual_2024_total`` and
``actual_2024_gold`` of every item of ``monte_carlo_summary_top_total``.
``data/medals_2024.csv`` holds COMAP's 2024 rows of ``summerOly_medal_counts.csv``
with each country's IOC code (see ``data/PROVENANCE.md``).

Derived: ``q1.actual_2024_max_error``, the largest |claimed - official| over
the items that report a 2024 count (exact integers); a gap, with the reason,
when an item names a code the 2024 table does not hold, is malformed, or no
item reports a count.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "mcm-2025-c-olympic-medals"
DERIVED = ("q1.actual_2024_max_error",)
LIST = "monte_carlo_summary_top_total"
FIELDS = (("actual_2024_total", "total"), ("actual_2024_gold", "gold"))


def load_official(data_dir: str) -> Mapping[str, Any]:
    """IOC code -> {"gold", "total"} of the Paris 2024 medal table."""
    import csv
    import os

    table: dict[str, dict[str, int]] = {}
    with open(os.path.join(data_dir, "medals_2024.csv"), encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["NOC"] in table:
                raise ValueError(f"code {row['NOC']} twice in medals_2024.csv")
            table[row["NOC"]] = {"gold": int(row["gold"]), "total": int(row["total"])}
    return {"medals_2024": table}


def replay(data: Mapping[str, Any], official: Mapping[str, Any]) -> Derived:
    error, why = max_error(data, official["medals_2024"])
    if error is None:
        return Derived({}, {DERIVED[0]: why})
    return Derived({DERIVED[0]: error}, {})


def max_error(data: Any, table: Mapping[str, Mapping[str, int]]) -> tuple[Fraction | None, str]:
    items = data.get(LIST) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None, f"no list at {LIST}"
    worst: Fraction | None = None
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            return None, f"{LIST}[{k}] is not an object"
        claimed = [(name, item.get(name)) for name, _ in FIELDS]
        if all(v is None for _, v in claimed):
            continue
        code = item.get("NOC")
        if not isinstance(code, str) or code not in table:
            return None, f"{LIST}[{k}]: NOC {code!r} is not a code of the Paris 2024 medal table"
        for (name, value), (_, column) in zip(claimed, FIELDS):
            if value is None:
                continue
            if type(value) is not Decimal or not value.is_finite():
                return None, f"{LIST}[{k}].{name} is not a finite number"
            gap = abs(Fraction(value) - table[code][column])
            worst = gap if worst is None else max(worst, gap)
    if worst is None:
        return None, f"no item of {LIST} reports a 2024 count"
    return worst, ""
