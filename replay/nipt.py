"""Replay of CUMCM 2025 C (NIPT): the data statistics of a BMI grouping.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2025-c-nipt"

MAX_EXCLUDED = 1000
MAX_GROUPS = 4              # groups replayed per position: the panel scores four
MAX_LIST = 10               # groups a grouping may have (the partition is checked over all of them)
THRESHOLD = Fraction(4, 100)
RULES = ("first", "last", "mean", "min", "max")
SIDES = ("right", "left")
BMI_RANGE = (Decimal(0), Decimal(100))
WEEK_RANGE = (Decimal(0), Decimal(45))
PLACES = 6                  # derived BMIs and shares are rounded to 6 decimals

STATEMENT = ("data.male_rows", "data.male_mothers")     # the attachment alone: no witness involved

DERIVED = tuple(
    ["data.male_rows", "data.male_mothers", "grouping.partition_ok"]
    + [f"g{i}.{what}" for i in range(MAX_GROUPS) for what in ("count", "bmi_min", "bmi_max", "reached_share")]
)


@dataclass(frozen=True)
class Mother:
    """One male-fetus mother: her tests as (gestational days, BMI, Y fraction), sorted."""

    code: str
    tests: tuple[tuple[int, Fraction, Fraction], ...]

    def bmi(self, rule: str) -> Fraction:
        bmis = [b for _, b, _ in self.tests]
        if rule in ("first", "last"):
            day = self.tests[0][0] if rule == "first" else self.tests[-1][0]
            at = [b for d, b, _ in self.tests if d == day]
            return sum(at, Fraction(0)) / len(at)
        if rule == "mean":
            return sum(bmis, Fraction(0)) / len(bmis)
        return min(bmis) if rule == "min" else max(bmis)

    def reached_by(self, days: Fraction) -> bool:
        return any(d <= days and y >= THRESHOLD for d, _, y in self.tests)


@dataclass(frozen=True)
class Official:
    rows: int
    mothers: tuple[Mother, ...]          # sorted by code
    by_rule: Mapping[str, tuple[Fraction, ...]]   # each mother's grouping BMI per rule, in ``mothers`` order


def load_official(data_dir: str) -> Official:
    """``male_rows.csv``: mother_code, blood_draw, gest_week_text, gest_days, bmi, y_concentration."""
    tests: dict[str, list[tuple[int, Fraction, Fraction]]] = {}
    rows = 0
    with open(os.path.join(data_dir, "male_rows.csv"), newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            tests.setdefault(r["mother_code"], []).append(
                (int(r["gest_days"]), Fraction(r["bmi"]), Fraction(r["y_concentration"])))
            rows += 1
    mothers = tuple(Mother(code, tuple(sorted(t))) for code, t in sorted(tests.items()))
    return Official(rows, mothers, {rule: tuple(m.bmi(rule) for m in mothers) for rule in RULES})


def _number(v: Any, lo: Decimal, hi: Decimal) -> Fraction | None:
    """A finite JSON number (never a bool) in [lo, hi], as a Fraction, else None."""
    if isinstance(v, bool) or not isinstance(v, (Decimal, int)):
        return None
    d = Decimal(v)
    if not d.is_finite() or not lo <= d <= hi:
        return None
    return Fraction(d)


def rounded(x: Fraction) -> Fraction:
    """``x`` rounded half-even to ``PLACES`` decimals, exactly (a terminating decimal)."""
    return Fraction(round(x * 10 ** PLACES), 10 ** PLACES)


def _inside(b: Fraction, lower: Fraction, upper: Fraction, side: str) -> bool:
    return lower < b <= upper if side == "right" else lower <= b < upper


def replay(data: Mapping[str, Any], official: Official) -> Derived:
    values: dict[str, Fraction] = {
        "data.male_rows": Fraction(official.rows),
        "data.male_mothers": Fraction(len(official.mothers)),
    }
    gaps: dict[str, str] = {}
    group_names = [n for n in DERIVED if n.startswith("g") and not n.startswith("grouping")]
    timing = data.get("bmi_timing")
    grouping = timing.get("grouping") if isinstance(timing, dict) else None
    groups = timing.get("groups") if isinstance(timing, dict) else None
    why = None
    if grouping is None:
        why = "witness absent: bmi_timing.grouping"
    elif not isinstance(grouping, dict) or grouping.get("per_mother_bmi") not in RULES \
            or grouping.get("closed") not in SIDES:
        why = (f"witness malformed: bmi_timing.grouping needs per_mother_bmi in {list(RULES)} and closed in "
               f"{list(SIDES)}")
    elif not isinstance(groups, list) or not 1 <= len(groups) <= MAX_LIST:
        why = f"witness malformed: bmi_timing.groups is not a list of 1-{MAX_LIST} groups"
    if why:
        gaps.update({n: why for n in group_names + ["grouping.partition_ok"]})
        return Derived(values, gaps)
    rule, side = grouping["per_mother_bmi"], grouping["closed"]
    excluded = grouping.get("excluded_mothers", [])
    codes = {m.code: k for k, m in enumerate(official.mothers)}
    if not isinstance(excluded, list) or len(excluded) > MAX_EXCLUDED \
            or any(not isinstance(c, str) or c not in codes for c in excluded) or len(set(excluded)) != len(excluded):
        why = "witness malformed: grouping.excluded_mothers is not a list of distinct mother codes of the attachment"
        gaps.update({n: why for n in group_names + ["grouping.partition_ok"]})
        return Derived(values, gaps)
    out = {codes[c] for c in excluded}
    bmis = [None if k in out else b for k, b in enumerate(official.by_rule[rule])]
    bounds: list[tuple[Fraction, Fraction] | None] = []
    for i, g in enumerate(groups):
        names = [f"g{i}.{w}" for w in ("count", "bmi_min", "bmi_max", "reached_share")]
        lo = _number(g.get("bmi_lower"), *BMI_RANGE) if isinstance(g, dict) else None
        hi = _number(g.get("bmi_upper"), *BMI_RANGE) if isinstance(g, dict) else None
        if lo is None or hi is None or not lo < hi:
            bounds.append(None)
            if i >= MAX_GROUPS:
                continue
            gaps.update({n: f"witness malformed: bmi_timing.groups[{i}] needs bmi_lower < bmi_upper, numbers in "
                            f"[0, 100]" for n in names})
            continue
        bounds.append((lo, hi))
        if i >= MAX_GROUPS:
            continue
        members = [k for k, b in enumerate(bmis) if b is not None and _inside(b, lo, hi, side)]
        values[names[0]] = Fraction(len(members))
        if members:
            values[names[1]] = rounded(min(bmis[k] for k in members))
            values[names[2]] = rounded(max(bmis[k] for k in members))
        else:
            gaps[names[1]] = gaps[names[2]] = gaps[names[3]] = f"bmi_timing.groups[{i}]: no mother in the interval"
            continue
        week = _number(g.get("recommended_week"), *WEEK_RANGE)
        if week is None:
            gaps[names[3]] = f"bmi_timing.groups[{i}].recommended_week is not a number in [0, 45]"
            continue
        reached = sum(1 for k in members if official.mothers[k].reached_by(7 * week))
        values[names[3]] = rounded(Fraction(reached, len(members)))
    for i in range(len(groups), MAX_GROUPS):
        gaps.update({f"g{i}.{w}": f"bmi_timing.groups[{i}] absent"
                     for w in ("count", "bmi_min", "bmi_max", "reached_share")})
    if any(b is None for b in bounds):
        gaps["grouping.partition_ok"] = "a group's bounds are malformed"
    else:
        chained = all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
        covered = all(sum(1 for lo, hi in bounds if _inside(b, lo, hi, side)) == 1 for b in bmis if b is not None)
        values["grouping.partition_ok"] = Fraction(int(chained and covered))
    return Derived(values, gaps)
