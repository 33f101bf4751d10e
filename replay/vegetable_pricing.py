"""Replay of CUMCM 2023 C (vegetable pricing and replenishment): the statement's
plan rules and the profit arithmetic of the plans an artifact hands in.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import gzip
import io
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2023-c-vegetable-pricing"
Q3_NAMES = ("q3.plan_items", "q3.plan_duplicate_items", "q3.plan_unsellable_items", "q3.plan_below_min_display",
            "q3.plan_oversold_items", "q3.plan_profit_yuan")
Q2_NAMES = ("q2.plan_missing_cells", "q2.plan_duplicate_cells", "q2.plan_unknown_cells", "q2.plan_oversold_cells",
            "q2.plan_profit_yuan")
DERIVED = Q3_NAMES + Q2_NAMES
STATEMENT: tuple[str, ...] = ()          # every value depends on the artifact's plan
SELLABLE_FROM, SELLABLE_TO = "2023-06-24", "2023-06-30"
WEEK = tuple(f"2023-07-0{d}" for d in range(1, 8))
MIN_DISPLAY_KG = Fraction(5, 2)          # statement Q3: minimum display quantity 2.5 kg
MAX_ROWS = 1000
MAX_ABS = Decimal(10) ** 9               # no quantity or price of this task comes near it
Q3_FIELDS = ("replenishment_kg", "price_yuan_per_kg", "expected_sales_kg")
Q2_FIELDS = ("replenishment_kg", "price_yuan_per_kg", "unit_cost_yuan_per_kg", "expected_sales_kg")


@dataclass(frozen=True)
class Official:
    categories: Mapping[str, str]                 # item code -> category name
    item_loss: Mapping[str, Fraction]             # item code -> loss rate (a fraction, 0.0439 for 4.39 %)
    category_loss: Mapping[str, Fraction]         # category name -> loss rate (a fraction)
    july1_cost: Mapping[str, Fraction]            # sellable item -> last wholesale price of 06-24..06-30
    july1_cost_date: Mapping[str, str]            # sellable item -> the date of that price


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def load_official(data_dir: str) -> Official:
    def read(name: str) -> list[dict[str, str]]:
        with open(os.path.join(data_dir, name), "rb") as fh:
            return _rows(fh.read())

    items = read("items.csv")
    categories = {r["item_code"]: r["category_name"] for r in items}
    item_loss = {r["item_code"]: Fraction(r["loss_rate_pct"]) / 100 for r in read("item_loss_rates.csv")}
    category_loss = {r["category_name"]: Fraction(r["loss_rate_pct"]) / 100 for r in read("category_loss_rates.csv")}
    cost: dict[str, Fraction] = {}
    cost_date: dict[str, str] = {}
    with gzip.open(os.path.join(data_dir, "wholesale_prices.csv.gz"), "rt", encoding="utf-8", newline="") as fh:
        next(fh)                                  # header: date,item_code,wholesale_yuan_per_kg
        for line in fh:
            date = line[:10]
            if SELLABLE_FROM <= date <= SELLABLE_TO:
                _d, item, price = line.rstrip("\n").split(",")
                if date >= cost_date.get(item, ""):
                    cost[item], cost_date[item] = Fraction(price), date
    if set(item_loss) != set(categories) or set(category_loss) != set(categories.values()) or not cost:
        raise ValueError("vegetable data: attachments 1, 3 and 4 disagree")
    return Official(categories, item_loss, category_loss, cost, cost_date)


# ------------------------------------------------------------------ parsing

def _quantity(v: Any) -> Fraction | None:
    """A finite JSON number in [0, MAX_ABS], exactly; else None."""
    if type(v) is not Decimal or not v.is_finite() or v < 0 or v > MAX_ABS:
        return None
    return Fraction(v)


def _code(v: Any) -> str | None:
    """An item code: a string of digits, or a whole JSON number."""
    if isinstance(v, str):
        v = v.strip()
        return v if v.isdigit() and len(v) <= 20 else None
    if type(v) is Decimal and v.is_finite() and v == v.to_integral_value() and 0 <= v < Decimal(10) ** 20:
        return str(int(v))
    return None


def _plan_rows(data: Any, field: str) -> tuple[list[Any] | None, str]:
    rep = data.get("reproduced") if isinstance(data, dict) else None
    raw = rep.get(field) if isinstance(rep, dict) else None
    if raw is None:
        return None, f"no witness at reproduced.{field}"
    if not isinstance(raw, list) or not raw:
        return None, f"reproduced.{field} is not a non-empty list of rows"
    if len(raw) > MAX_ROWS:
        return None, f"reproduced.{field} has more than {MAX_ROWS} rows"
    return raw, ""


def _numbers(row: Any, fields: tuple[str, ...]) -> tuple[Fraction, ...] | None:
    if not isinstance(row, dict):
        return None
    out = tuple(_quantity(row.get(f)) for f in fields)
    return None if any(x is None for x in out) else out  # type: ignore[return-value]


# --------------------------------------------------------------------- Q3

@dataclass(frozen=True)
class Q3Row:
    item: str
    replenishment: Fraction
    price: Fraction
    sales: Fraction


def parse_q3(data: Any) -> tuple[list[Q3Row] | None, str]:
    raw, why = _plan_rows(data, "july1_plan")
    if raw is None:
        return None, why
    rows = []
    for i, r in enumerate(raw):
        item = _code(r.get("item_code")) if isinstance(r, dict) else None
        nums = _numbers(r, Q3_FIELDS)
        if item is None or nums is None:
            return None, (f"reproduced.july1_plan[{i}] is malformed: item_code (digits) and "
                          f"{', '.join(Q3_FIELDS)} (numbers >= 0) are required")
        rows.append(Q3Row(item, *nums))
    return rows, ""


def q3_values(rows: list[Q3Row], official: Official) -> tuple[dict[str, Fraction], dict[str, str]]:
    codes = [r.item for r in rows]
    distinct = set(codes)
    unsellable = sorted(c for c in distinct if c not in official.july1_cost)
    values = {
        "q3.plan_items": Fraction(len(distinct)),
        "q3.plan_duplicate_items": Fraction(len(codes) - len(distinct)),
        "q3.plan_unsellable_items": Fraction(len(unsellable)),
        "q3.plan_below_min_display": Fraction(sum(1 for r in rows if r.replenishment < MIN_DISPLAY_KG)),
    }
    gaps: dict[str, str] = {}
    if any(c not in official.item_loss for c in distinct):
        gaps["q3.plan_oversold_items"] = "the plan names item codes attachment 1 does not list"
    else:
        values["q3.plan_oversold_items"] = Fraction(sum(
            1 for r in rows if r.sales > r.replenishment * (1 - official.item_loss[r.item])))
    if unsellable:
        gaps["q3.plan_profit_yuan"] = (f"no wholesale price in {SELLABLE_FROM}..{SELLABLE_TO} for "
                                       f"{len(unsellable)} item(s) of the plan: not sellable then")
    else:
        values["q3.plan_profit_yuan"] = sum(
            (r.price * r.sales - official.july1_cost[r.item] * r.replenishment for r in rows), Fraction(0))
    return values, gaps


# --------------------------------------------------------------------- Q2

@dataclass(frozen=True)
class Q2Row:
    date: str
    category: str
    replenishment: Fraction
    price: Fraction
    unit_cost: Fraction
    sales: Fraction


def parse_q2(data: Any) -> tuple[list[Q2Row] | None, str]:
    raw, why = _plan_rows(data, "week_plan")
    if raw is None:
        return None, why
    rows = []
    for i, r in enumerate(raw):
        date = r.get("date") if isinstance(r, dict) else None
        cat = r.get("category") if isinstance(r, dict) else None
        nums = _numbers(r, Q2_FIELDS)
        if not isinstance(date, str) or not isinstance(cat, str) or nums is None or nums[2] == 0:
            return None, (f"reproduced.week_plan[{i}] is malformed: date and category (strings), "
                          f"{', '.join(Q2_FIELDS)} (numbers >= 0, unit cost > 0) are required")
        rows.append(Q2Row(date.strip(), cat.strip(), *nums))
    return rows, ""


def q2_values(rows: list[Q2Row], official: Official) -> tuple[dict[str, Fraction], dict[str, str]]:
    known = [r for r in rows if r.date in WEEK and r.category in official.category_loss]
    cells = [(r.date, r.category) for r in known]
    values = {
        "q2.plan_missing_cells": Fraction(len(WEEK) * len(official.category_loss) - len(set(cells))),
        "q2.plan_duplicate_cells": Fraction(len(cells) - len(set(cells))),
        "q2.plan_unknown_cells": Fraction(len(rows) - len(known)),
        "q2.plan_oversold_cells": Fraction(sum(
            1 for r in known if r.sales > r.replenishment * (1 - official.category_loss[r.category]))),
        "q2.plan_profit_yuan": sum((r.price * r.sales - r.unit_cost * r.replenishment for r in rows), Fraction(0)),
    }
    return values, {}


def replay(data: Mapping[str, Any], official: Official) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    rows3, why3 = parse_q3(data)
    if rows3 is None:
        gaps.update({n: why3 for n in Q3_NAMES})
    else:
        v, g = q3_values(rows3, official)
        values.update(v)
        gaps.update(g)
    rows2, why2 = parse_q2(data)
    if rows2 is None:
        gaps.update({n: why2 for n in Q2_NAMES})
    else:
        v, g = q2_values(rows2, official)
        values.update(v)
        gaps.update(g)
    return Derived(values, gaps)
