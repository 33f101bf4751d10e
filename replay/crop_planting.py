"""Replay of CUMCM 2024 C (crop planting), question 1.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2024-c-crop-planting"
CASES = ("waste", "discount")
DERIVED = tuple(f"q1.{case}_{what}" for case in CASES for what in ("profit_yuan", "plan_feasible"))
PLAN_FIELD = {"waste": "waste_plan", "discount": "discount_plan"}
YEARS = tuple(range(2024, 2031))
_YEAR_IDS = {y: y for y in YEARS}
MAX_PLACES = 6            # an area is a decimal with at most 6 places (1e-6 mu)
MICRO = 10 ** MAX_PLACES  # a parsed area is an integer number of 1e-6 mu
MIN_AREA = Fraction(3, 10)   # smallest planted row: the smallest row of the 2023 planting

OPEN_FIELD = ("flat_dry", "terrace", "hillside")
GRAINS = frozenset(range(1, 16))               # grains and grain legumes except rice
RICE = frozenset({16})
VEGETABLES = frozenset(range(17, 35))          # vegetables except the three below
AUTUMN_VEG = frozenset({35, 36, 37})           # Chinese cabbage, white and red radish
MUSHROOMS = frozenset(range(38, 42))
LEGUMES = frozenset({1, 2, 3, 4, 5, 17, 18, 19})

RULES = (
    "rows: year 2024-2030, a known plot, a known crop, 0 < area_mu <= plot area",
    "each planted (plot, year, season, crop) at least 0.3 mu ('not too small': the smallest 2023 row)",
    "crop on an allowed plot type and season (attachment 1 notes (1)-(7))",
    "per plot and season the planted areas sum to at most the plot area; on irrigated land "
    "single-season rice shares the plot with each vegetable season",
    "second season on irrigated land: one crop per plot (note (3))",
    "no crop repeated on a plot in consecutive seasons, 2023 included (continuous cropping)",
    "legumes on all of every plot's land in every 3-year window 2023-2025 ... 2028-2030: the legume "
    "areas of the window's seasons (2023 included) add up to at least the plot area",
)


def allowed_seasons(land_type: str) -> dict[str, frozenset[int]]:
    """Crops allowed per season on a plot type (attachment 1, notes (1)-(7))."""
    if land_type in OPEN_FIELD:
        return {"single": GRAINS}
    if land_type == "irrigated":
        return {"single": RICE, "first": VEGETABLES, "second": AUTUMN_VEG}
    if land_type == "greenhouse":
        return {"first": VEGETABLES, "second": MUSHROOMS}
    if land_type == "smart_greenhouse":
        return {"first": VEGETABLES, "second": VEGETABLES}
    raise ValueError(f"unknown land type {land_type!r}")


def previous_seasons(land_type: str, year: int, season: str) -> tuple[tuple[int, str], ...]:
    """The seasons right before (year, season) on a plot of this type."""
    if season == "second":
        return ((year, "first"), (year, "single")) if land_type == "irrigated" else ((year, "first"),)
    if land_type in OPEN_FIELD:
        return ((year - 1, "single"),)
    if land_type == "irrigated":
        return ((year - 1, "second"), (year - 1, "single"))
    return ((year - 1, "second"),)


@dataclass(frozen=True)
class Official:
    plots: Mapping[str, tuple[str, Fraction]]                         # plot -> (land type, area)
    crops: Mapping[int, tuple[str, str]]                              # id -> (name, type)
    stats: Mapping[tuple[int, str, str], tuple[Fraction, Fraction, Fraction]]  # (crop, type, season) -> yield, cost, price
    demand: Mapping[int, Fraction]                                    # crop -> expected sales (jin / year)
    planted_2023: Mapping[tuple[str, str], frozenset[int]]            # (plot, season) -> crops
    legume_area_2023: Mapping[str, Fraction]                          # plot -> legume area planted in 2023
    scaled: _Scaled = field(init=False, repr=False, compare=False)    # the same data as integers

    def __post_init__(self) -> None:
        object.__setattr__(self, "scaled", _Scaled.of(self))

    def admissible(self) -> int:
        """How many distinct (plot, year, season, crop) rows the statement allows."""
        per_year = sum(len(cs) for lt, _ in self.plots.values() for cs in allowed_seasons(lt).values())
        return per_year * len(YEARS)


@dataclass(frozen=True)
class _Scaled:
    """Official data as integers over common denominators, so that a plan's
    areas (integers over their own common denominator) meet them in integer
    arithmetic only; one Fraction is formed per result."""

    cap_micro: Mapping[str, int]                  # plot -> floor(area * MICRO): an area of n/MICRO fits iff n <= it
    cap_ratio: Mapping[str, tuple[int, int]]      # plot -> area as (numerator, denominator)
    crop_ids: Mapping[int, int]                   # crop -> itself (finds the int for an equal Decimal)
    allowed: Mapping[tuple[str, str], frozenset[int]]   # (plot, season) -> crops allowed there
    stats: Mapping[tuple[int, str, str], tuple[int, int, int]]   # yield * YIELD, cost * COST, price * PRICE
    demand: Mapping[int, int]                     # expected sales * YIELD
    yield_den: int                                # YIELD: a multiple of every yield's and demand's denominator
    cost_den: int                                 # COST
    price_den: int                                # PRICE
    legume_2023: Mapping[str, tuple[int, int]]    # plot -> 2023 legume area as (numerator, denominator)

    @classmethod
    def of(cls, o: Official) -> _Scaled:
        y = math.lcm(*(s[0].denominator for s in o.stats.values()), *(d.denominator for d in o.demand.values()))
        c = math.lcm(*(s[1].denominator for s in o.stats.values()))
        p = math.lcm(*(s[2].denominator for s in o.stats.values()))
        return cls(
            cap_micro={plot: area.numerator * MICRO // area.denominator for plot, (_lt, area) in o.plots.items()},
            cap_ratio={plot: (area.numerator, area.denominator) for plot, (_lt, area) in o.plots.items()},
            crop_ids={crop: crop for crop in o.crops},
            allowed={(plot, season): cs for plot, (lt, _a) in o.plots.items()
                     for season, cs in allowed_seasons(lt).items()},
            stats={k: (_times(yi, y), _times(co, c), _times(pr, p)) for k, (yi, co, pr) in o.stats.items()},
            demand={crop: _times(d, y) for crop, d in o.demand.items()},
            yield_den=y, cost_den=c, price_den=p,
            legume_2023={plot: (a.numerator, a.denominator) for plot, a in o.legume_area_2023.items()})


def _times(value: Fraction, multiple: int) -> int:
    """``value * multiple`` for a multiple of its denominator."""
    return value.numerator * (multiple // value.denominator)


def _rows(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def load_official(data_dir: str) -> Official:
    plots = {r["plot"]: (r["land_type"], Fraction(r["area_mu"])) for r in _rows(os.path.join(data_dir, "plots.csv"))}
    crops = {int(r["crop_id"]): (r["name"], r["crop_type"]) for r in _rows(os.path.join(data_dir, "crops.csv"))}
    stats: dict[tuple[int, str, str], tuple[Fraction, Fraction, Fraction]] = {}
    for r in _rows(os.path.join(data_dir, "stats_2023.csv")):
        price = (Fraction(r["price_low_yuan_per_jin"]) + Fraction(r["price_high_yuan_per_jin"])) / 2
        stats[(int(r["crop_id"]), r["land_type"], r["season"])] = (
            Fraction(r["yield_jin_per_mu"]), Fraction(r["cost_yuan_per_mu"]), price)
    # attachment 2, note (2): a smart greenhouse's first season is an ordinary greenhouse's
    for (c, lt, s), v in list(stats.items()):
        if lt == "greenhouse" and s == "first":
            stats.setdefault((c, "smart_greenhouse", "first"), v)
    demand: dict[int, Fraction] = {}
    planted: dict[tuple[str, str], set[int]] = {}
    legume_area = {plot: Fraction(0) for plot in plots}
    for r in _rows(os.path.join(data_dir, "planting_2023.csv")):
        plot, crop, season, area = r["plot"], int(r["crop_id"]), r["season"], Fraction(r["area_mu"])
        demand[crop] = demand.get(crop, Fraction(0)) + area * stats[(crop, plots[plot][0], season)][0]
        planted.setdefault((plot, season), set()).add(crop)
        if crop in LEGUMES:
            legume_area[plot] += area
    for lt, _ in plots.values():
        for season, cs in allowed_seasons(lt).items():
            missing = [c for c in cs if (c, lt, season) not in stats]
            if missing:
                raise ValueError(f"no 2023 statistics for crops {missing} on {lt}/{season}")
    return Official(plots, crops, stats, demand, {k: frozenset(v) for k, v in planted.items()}, legume_area)


# --------------------------------------------------------------------------- witness parsing

class Malformed(ValueError):
    pass


Plan = Mapping[tuple[str, int, str, int], Fraction]    # (plot, year, season, crop) -> area (mu)
_Ints = Mapping[tuple[str, int, str, int], int]       # the same, areas as integers over one denominator


def _micro(value: Any) -> int | None:
    """An area as an integer number of 1e-6 mu; None for a decimal of 1e7 or
    more (larger than any plot: an area breach, kept out of integer arithmetic)."""
    d = value
    if value.__class__ is not Decimal:      # a parsed JSON number with a fraction is a Decimal already
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise Malformed("area_mu is not a number")
        d = Decimal(value)
    if not d.is_finite() or d.as_tuple().exponent < -MAX_PLACES:
        raise Malformed(f"area_mu {value} is not a decimal of at most {MAX_PLACES} places")
    if d.adjusted() > 6:
        return None
    n, den = d.as_integer_ratio()     # den divides MICRO: at most 6 places
    return n * (MICRO // den)


def _member(value: Any, ids: Mapping[int, int]) -> int | None:
    """The int among ``ids`` equal to ``value``, an int or a Decimal (``Decimal("2024.0")``
    finds 2024; a bool is no number), else None."""
    if value.__class__ is Decimal or value.__class__ is int or (
            not isinstance(value, bool) and isinstance(value, (int, Decimal))):
        return ids.get(value)
    return None


def _parse(raw: Any, official: Official) -> tuple[dict[tuple[str, int, str, int], int], list[str]]:
    """(plot, year, season, crop) -> area in 1e-6 mu, and the rows whose area
    breaks the area rule (not in (0, plot area]: the plan is infeasible, like any
    other area breach; those rows are left out of the plan), or Malformed (a row
    that does not name a plot-year-season-crop or whose area is no decimal of at
    most 6 places). Repeated rows add up."""
    if not isinstance(raw, list):
        raise Malformed("the plan is not a list of rows")
    if len(raw) > official.admissible():
        raise Malformed(f"{len(raw)} rows, more than the {official.admissible()} the statement admits")
    plots, caps, crop_ids = official.plots, official.scaled.cap_micro, official.scaled.crop_ids
    plan: dict[tuple[str, int, str, int], int] = {}
    breaches: list[str] = []
    for k, row in enumerate(raw):
        if not isinstance(row, dict):
            raise Malformed(f"row {k} is not an object")
        plot, year, season, crop = row.get("plot"), row.get("year"), row.get("season"), row.get("crop_id")
        if not isinstance(plot, str) or plot not in plots:
            raise Malformed(f"row {k}: unknown plot")
        if (year := _member(year, _YEAR_IDS)) is None:
            raise Malformed(f"row {k}: year outside 2024-2030")
        if season not in ("single", "first", "second"):
            raise Malformed(f"row {k}: season is not single/first/second")
        if (crop := _member(crop, crop_ids)) is None:
            raise Malformed(f"row {k}: unknown crop_id")
        area = _micro(row.get("area_mu"))
        if area is None or not 0 < area <= caps[plot]:
            breaches.append(f"row {k}: {plot} {year} {season}: area_mu {row.get('area_mu')} outside (0, plot area]")
            continue
        key = (plot, year, str(season), crop)
        plan[key] = plan.get(key, 0) + area
    return plan, breaches


def _integers(plan: Plan) -> tuple[_Ints, int]:
    """A plan's areas as integers over their least common denominator, and that denominator."""
    scale = math.lcm(*(a.denominator for a in plan.values()))
    return {key: a.numerator * (scale // a.denominator) for key, a in plan.items()}, scale


def parse_plan(raw: Any, official: Official) -> dict[tuple[str, int, str, int], Fraction]:
    """(plot, year, season, crop) -> area, or Malformed. Repeated rows add up."""
    return {key: Fraction(area, MICRO) for key, area in _parse(raw, official)[0].items()}


def witness_violations(raw: Any, official: Official) -> list[str]:
    """Every broken rule of a witness plan, area breaches of single rows included
    (what the replay's feasibility value reads), or Malformed."""
    plan, breaches = _parse(raw, official)
    return breaches + _violations(plan, MICRO, official)


# --------------------------------------------------------------------------- the two derived values

def plan_profit(plan: Plan, official: Official, case: str) -> Fraction:
    """Exact 2024-2030 profit of a plan under surplus rule ``case``; a crop on a
    plot type or season without 2023 statistics earns nothing and costs nothing
    (the feasibility value says it is not allowed)."""
    return _profit(*_integers(plan), official, case)


def _profit(plan: _Ints, scale: int, official: Official, case: str) -> Fraction:
    """:func:`plan_profit` of areas ``plan[key] / scale``, in integers: production
    in 1/(scale * YIELD) jin, cost in 1/(scale * COST) yuan, revenue in
    1/(2 * scale * YIELD * PRICE) yuan (the 2 for the half price of a surplus)."""
    plots, sc = official.plots, official.scaled
    areas: dict[tuple[int, int, str, str], int] = {}          # (year, crop, type, season) -> area
    for (plot, year, season, crop), area in plan.items():
        key = (year, crop, plots[plot][0], season)
        areas[key] = areas.get(key, 0) + area
    cost = 0
    by_year: dict[tuple[int, int], dict[int, int]] = {}       # (year, crop) -> price -> production
    for (year, crop, land_type, season), area in areas.items():
        stat = sc.stats.get((crop, land_type, season))
        if stat is None:
            continue
        yield_, cost_, price = stat
        cost += area * cost_
        prod = by_year.setdefault((year, crop), {})
        prod[price] = prod.get(price, 0) + area * yield_
    revenue = 0
    surplus_share = 1 if case == "discount" else 0
    for (_year, crop), production in by_year.items():
        left = sc.demand.get(crop, 0) * scale
        for price in sorted(production, reverse=True):
            sold = min(production[price], left)
            left -= sold
            revenue += (2 * sold + surplus_share * (production[price] - sold)) * price
    return (Fraction(revenue, 2 * scale * sc.yield_den * sc.price_den)
            - Fraction(cost, scale * sc.cost_den))


def plan_violations(plan: Plan, official: Official) -> list[str]:
    """Every broken statement rule (empty: the plan is feasible)."""
    return _violations(*_integers(plan), official)


def _violations(plan: _Ints, scale: int, official: Official) -> list[str]:
    """:func:`plan_violations` of areas ``plan[key] / scale`` (``n / scale`` as a
    float is ``float(Fraction(n, scale))``: both are correctly rounded)."""
    out: list[str] = []
    plots = official.plots
    used: dict[tuple[str, int, str], int] = {}
    crops_in: dict[tuple[str, int, str], set[int]] = {}
    legume_area: dict[tuple[str, int], int] = {}             # (plot, year) -> legume area, all seasons
    planted_2023, allowed = official.planted_2023, official.scaled.allowed
    least_num, least_den = MIN_AREA.numerator * scale, MIN_AREA.denominator   # area/scale < MIN_AREA, in integers
    for (plot, year, season, crop), area in plan.items():
        if crop not in allowed.get((plot, season), ()):
            out.append(f"{plot} {year} {season}: crop {crop} not allowed on {plots[plot][0]} in that season")
        if area * least_den < least_num:
            out.append(f"{plot} {year} {season}: crop {crop} on {area / scale:g} mu, under the 0.3 mu minimum")
        used[(plot, year, season)] = used.get((plot, year, season), 0) + area
        crops_in.setdefault((plot, year, season), set()).add(crop)
        if crop in LEGUMES:
            legume_area[(plot, year)] = legume_area.get((plot, year), 0) + area
    keys = sorted(used)           # the same keys as crops_in
    caps = official.scaled.cap_ratio
    for plot, year, season in keys:
        area = used[(plot, year, season)]
        if season in ("first", "second") and plots[plot][0] == "irrigated":
            area += used.get((plot, year, "single"), 0)
        num, den = caps[plot]
        if area * den > num * scale:
            out.append(f"{plot} {year} {season}: {area / scale:g} mu planted on {num / den:g} mu")
    for plot, year, season in keys:
        lt = plots[plot][0]
        cs = crops_in[(plot, year, season)]
        if lt == "irrigated" and season == "second" and len(cs) > 1:
            out.append(f"{plot} {year} second season: {len(cs)} crops, the statement allows one")
        clashes = [(py, ps, b) for py, ps in previous_seasons(lt, year, season)
                   if not cs.isdisjoint(b := planted_2023.get((plot, ps), ()) if py == 2023
                                        else crops_in.get((plot, py, ps), ()))]
        if clashes:
            for crop in sorted(cs):
                for py, ps, b in clashes:
                    if crop in b:
                        out.append(f"{plot}: crop {crop} in {py} {ps} and again in {year} {season}")
    legume_2023 = official.scaled.legume_2023
    for plot in sorted(plots):
        num, den = caps[plot]
        for start in range(2023, YEARS[-1] - 1):
            planted = Fraction(sum(legume_area.get((plot, y), 0) for y in range(start, start + 3)), scale)
            if start == 2023:
                planted += Fraction(*legume_2023.get(plot, (0, 1)))
            if planted < Fraction(num, den):
                out.append(f"{plot}: legumes on {float(planted):g} of its {num / den:g} mu in {start}-{start + 2}")
    return out


def replay(data: Mapping[str, Any], official: Official) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    result = data.get("experiment_result") if isinstance(data, dict) else None
    q1 = result.get("q1") if isinstance(result, dict) else None
    for case in CASES:
        field_ = PLAN_FIELD[case]
        names = (f"q1.{case}_profit_yuan", f"q1.{case}_plan_feasible")
        raw = q1.get(field_) if isinstance(q1, dict) else None
        if raw is None:
            for n in names:
                gaps[n] = f"witness absent: experiment_result.q1.{field_}"
            continue
        try:
            plan, breaches = _parse(raw, official)
        except Malformed as exc:
            for n in names:
                gaps[n] = f"witness malformed: experiment_result.q1.{field_}: {exc}"
            continue
        broken = breaches + _violations(plan, MICRO, official)
        values[names[1]] = Fraction(0 if broken else 1)
        if broken:   # an infeasible plan proves nothing about an optimum: its profit verifies no claim
            gaps[names[0]] = f"witness infeasible: experiment_result.q1.{field_}: {broken[0]}"
        else:
            values[names[0]] = _profit(plan, MICRO, official, case)
    return Derived(values, gaps)
