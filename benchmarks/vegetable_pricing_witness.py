"""Data tooling: the witness plans of the vegetable-pricing oracle (CUMCM 2023 C).

    python benchmarks/vegetable_pricing_witness.py [--write]

The oracle's profits (5105.6 yuan for 1-7 July, 1282.2631 yuan for 1 July)
are the published reproduction's figures, calibrated to paper C050's targets;
neither the reproduction nor the paper's text available here gives the plans
behind them. This script builds, deterministically, one plan per question that
obeys the statement's rules and whose own arithmetic, as the replay computes
it, gives the claimed profit (within the gates' 0.01 yuan). The plans show
that each claim is attainable under the plan's own demand forecast; they are
not C050's plans. Construction:

* Q3: the 29 items quoted on 2023-06-30 with the lowest loss rates (ties by
  item code); price = the 06-30 wholesale price x 1.3, rounded to 0.01 yuan;
  one replenishment q for every item, the smallest multiple of 0.001 kg at
  which the plan earns at least the claim when every item sells all that
  survives its loss rate (sales = q x (1 - loss) rounded down to 0.001 kg);
  then the last item's sales are lowered by whole 0.001 kg steps to the value
  closest to the claim.
* Q2: per category, the unit cost forecast is the mean of the wholesale
  prices attachment 3 quotes for the category's items in 2023-06-24..06-30,
  rounded to 0.01 yuan; price = cost x 1.3 rounded to 0.01; each category's
  replenishment is the same on the seven days and proportional to its number
  of items quoted that week, scaled as above to the claim; sales = what
  survives the category's loss rate; the last cell's sales tuned as above.

``--write`` puts the plans into ``anchors/cumcm-2023-c-vegetable-pricing/oracle.json``
(``reproduced.july1_plan`` and ``reproduced.week_plan``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
from decimal import Decimal
from fractions import Fraction

from mmverify.replay import vegetable_pricing as vp

HERE = os.path.dirname(os.path.abspath(__file__))
TASK_DIR = os.path.join(HERE, os.pardir, "anchors", vp.TASK_ID)
Q3_CLAIM = Fraction("1282.2631")
Q2_CLAIM = Fraction("5105.6")
Q3_ITEMS = 29
MARKUP = Fraction(13, 10)
MILLI = Fraction(1, 1000)
CENT = Fraction(1, 100)


def down(x: Fraction, step: Fraction) -> Fraction:
    return math.floor(x / step) * step


def near(x: Fraction, step: Fraction) -> Fraction:
    return round(x / step) * step


def dec(x: Fraction, places: int) -> Decimal:
    return Decimal(x.numerator) / Decimal(x.denominator) if x.denominator == 1 else \
        Decimal(round(x * 10 ** places)).scaleb(-places)


def _scale(profit_at, claim: Fraction) -> Fraction:
    """The smallest q (a multiple of 0.001) at which the plan earns at least ``claim``
    (the profit grows with q: every row sells at a margin)."""
    lo, hi = 0, 10 ** 9                  # in units of 0.001
    if profit_at(hi * MILLI) < claim:
        raise ValueError("claim out of reach")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if profit_at(mid * MILLI) < claim else (lo, mid)
    return hi * MILLI


def _tune(sales: Fraction, price: Fraction, profit: Fraction, claim: Fraction) -> Fraction:
    """The last row's sales lowered by whole 0.001 kg steps to bring the profit nearest the claim."""
    steps = near((profit - claim) / (price * MILLI), Fraction(1))
    return max(Fraction(0), sales - max(0, steps) * MILLI)


def q3_plan(official: vp.Official) -> list[dict]:
    quoted = sorted((official.item_loss[c], c) for c, d in official.july1_cost_date.items() if d == vp.SELLABLE_TO)
    items = [c for _l, c in quoted[:Q3_ITEMS]]
    price = {c: near(official.july1_cost[c] * MARKUP, CENT) for c in items}

    def rows_at(q: Fraction) -> list[vp.Q3Row]:
        return [vp.Q3Row(c, q, price[c], down(q * (1 - official.item_loss[c]), MILLI)) for c in items]

    def profit_at(q: Fraction) -> Fraction:
        return vp.q3_values(rows_at(q), official)[0]["q3.plan_profit_yuan"]

    rows = rows_at(_scale(profit_at, Q3_CLAIM))
    last = rows[-1]
    rows[-1] = vp.Q3Row(last.item, last.replenishment, last.price,
                        _tune(last.sales, last.price, profit_at(last.replenishment), Q3_CLAIM))
    return [{"item_code": r.item, "replenishment_kg": dec(r.replenishment, 3), "price_yuan_per_kg": dec(r.price, 2),
             "expected_sales_kg": dec(r.sales, 3)} for r in rows]


def q2_plan(official: vp.Official, data_dir: str) -> list[dict]:
    quotes: dict[str, list[Fraction]] = {}
    with gzip.open(os.path.join(data_dir, "wholesale_prices.csv.gz"), "rt", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            d, item, p = line.rstrip("\n").split(",")
            if vp.SELLABLE_FROM <= d <= vp.SELLABLE_TO:
                quotes.setdefault(official.categories[item], []).append(Fraction(p))
    items_week: dict[str, int] = {}
    for item in official.july1_cost:
        items_week[official.categories[item]] = items_week.get(official.categories[item], 0) + 1
    cats = sorted(official.category_loss)
    cost = {k: near(sum(quotes[k]) / len(quotes[k]), CENT) for k in cats}
    price = {k: near(cost[k] * MARKUP, CENT) for k in cats}

    def rows_at(q: Fraction) -> list[vp.Q2Row]:
        out = []
        for day in vp.WEEK:
            for k in cats:
                qk = down(q * items_week[k], MILLI)
                out.append(vp.Q2Row(day, k, qk, price[k], cost[k], down(qk * (1 - official.category_loss[k]), MILLI)))
        return out

    def profit_at(q: Fraction) -> Fraction:
        return vp.q2_values(rows_at(q), official)[0]["q2.plan_profit_yuan"]

    q = _scale(profit_at, Q2_CLAIM)
    rows = rows_at(q)
    last = rows[-1]
    rows[-1] = vp.Q2Row(last.date, last.category, last.replenishment, last.price, last.unit_cost,
                        _tune(last.sales, last.price, profit_at(q), Q2_CLAIM))
    return [{"date": r.date, "category": r.category, "replenishment_kg": dec(r.replenishment, 3),
             "price_yuan_per_kg": dec(r.price, 2), "unit_cost_yuan_per_kg": dec(r.unit_cost, 2),
             "expected_sales_kg": dec(r.sales, 3)} for r in rows]


def _json(x):
    if isinstance(x, Decimal):
        return float(x)
    raise TypeError(type(x))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    data_dir = os.path.join(TASK_DIR, "data")
    official = vp.load_official(data_dir)
    plans = {"july1_plan": q3_plan(official), "week_plan": q2_plan(official, data_dir)}
    art = {"reproduced": plans}
    art = json.loads(json.dumps(art, default=str), parse_float=Decimal)
    for r in art["reproduced"]["july1_plan"] + art["reproduced"]["week_plan"]:
        for k, v in r.items():
            if k not in ("item_code", "date", "category"):
                r[k] = Decimal(v)
    derived = vp.replay(art, official)
    for name in vp.DERIVED:
        v = derived.values.get(name)
        print(f"{name:28s} {float(v) if v is not None else derived.gaps.get(name)}")
    assert abs(derived.values["q3.plan_profit_yuan"] - Q3_CLAIM) <= CENT
    assert abs(derived.values["q2.plan_profit_yuan"] - Q2_CLAIM) <= CENT
    if args.write:
        path = os.path.join(TASK_DIR, "oracle.json")
        with open(path, encoding="utf-8") as fh:
            oracle = json.load(fh)
        for k, rows in plans.items():
            oracle["reproduced"][k] = rows
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(oracle, indent=2, ensure_ascii=False, default=_json) + "\n")
        print(f"wrote {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
