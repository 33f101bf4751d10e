"""Exact Q1 optimum of CUMCM 2024 C under the replay's rules, as a MILP solved by HiGHS.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .crop_planting import LEGUMES, MIN_AREA, YEARS, Official, allowed_seasons, plan_profit, previous_seasons


@dataclass(frozen=True)
class Solution:
    case: str
    status: str
    objective: float                                  # HiGHS' objective (floats)
    plan: tuple[tuple[str, int, str, int, Fraction], ...]   # (plot, year, season, crop, area) rounded to 1e-6 mu
    seconds: float
    mip_gap: float | None

    def rows(self) -> list[dict[str, Any]]:
        """The plan as witness rows (areas as decimal text)."""
        return [{"year": y, "season": s, "plot": p, "crop_id": c, "area_mu": _decimal_text(a)}
                for p, y, s, c, a in self.plan]


def _decimal_text(a: Fraction) -> str:
    from mmverify.reading.numbers import fraction_text

    return fraction_text(a)


def _scipy():
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_matrix
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the crop-planting MILP needs scipy (HiGHS): pip install 'mmverify[replay]'") from exc
    return np, milp, Bounds, LinearConstraint, coo_matrix


def solve(official: Official, case: str, *, time_limit_s: float = 600.0) -> Solution:
    """Maximise the 2024-2030 profit of ``case`` ('waste' or 'discount')."""
    if case not in ("waste", "discount"):
        raise ValueError(case)
    np, milp, Bounds, LinearConstraint, coo_matrix = _scipy()
    disc = case == "discount"
    keys: list[tuple[str, int, str, int]] = []
    for plot in sorted(official.plots):
        lt, _ = official.plots[plot]
        for y in YEARS:
            for s, crops in allowed_seasons(lt).items():
                keys.extend((plot, y, s, c) for c in sorted(crops))
    n = len(keys)
    xi = {k: i for i, k in enumerate(keys)}
    groups: dict[tuple[int, int, str, str], list[int]] = {}
    for k, i in xi.items():
        plot, y, s, c = k
        groups.setdefault((c, y, official.plots[plot][0], s), []).append(i)
    gkeys = sorted(groups)
    N = 2 * n + len(gkeys)
    obj = np.zeros(N)
    lb = np.zeros(N)
    ub = np.full(N, np.inf)
    integrality = np.zeros(N)
    for (plot, _y, s, c), i in xi.items():
        lt, area = official.plots[plot]
        yield_, cost, price = official.stats[(c, lt, s)]
        obj[i] = float(-cost + (price * yield_ / 2 if disc else 0))
        ub[i] = float(area)
        integrality[n + i] = 1
        ub[n + i] = 1
    for j, (c, _y, lt, s) in enumerate(gkeys):
        price = official.stats[(c, lt, s)][2]
        obj[2 * n + j] = float(price / 2 if disc else price)

    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def add(entries, low, high):
        r = len(lo)
        for col, v in entries:
            rows.append(r)
            cols.append(col)
            vals.append(float(v))
        lo.append(low)
        hi.append(high)

    inf = np.inf
    by_year: dict[tuple[int, int], list[int]] = {}
    for j, (c, y, lt, s) in enumerate(gkeys):
        yield_ = official.stats[(c, lt, s)][0]
        add([(2 * n + j, 1)] + [(i, -yield_) for i in groups[(c, y, lt, s)]], -inf, 0)
        by_year.setdefault((c, y), []).append(2 * n + j)
    for (c, _y), cols_ in by_year.items():
        add([(col, 1) for col in cols_], -inf, float(official.demand.get(c, Fraction(0))))
    season_cols: dict[tuple[str, int, str], list[int]] = {}
    for (plot, y, s, _c), i in xi.items():
        season_cols.setdefault((plot, y, s), []).append(i)
        area = official.plots[plot][1]
        add([(i, 1), (n + i, -area)], -inf, 0)
        add([(i, 1), (n + i, -min(MIN_AREA, area))], 0, inf)
    for (plot, y, s), cs in season_cols.items():
        lt, area = official.plots[plot]
        if lt == "irrigated" and s == "single":
            continue
        extra = season_cols.get((plot, y, "single"), []) if lt == "irrigated" else []
        add([(i, 1) for i in cs + extra], -inf, float(area))
        if lt == "irrigated" and s == "second":
            add([(n + i, 1) for i in cs], -inf, 1)
    for (plot, y, s, c), i in xi.items():
        lt, _ = official.plots[plot]
        for py, ps in previous_seasons(lt, y, s):
            if py == 2023:
                if c in official.planted_2023.get((plot, ps), frozenset()):
                    ub[n + i] = 0
                    ub[i] = 0
            elif (plot, py, ps, c) in xi:
                add([(n + i, 1), (n + xi[(plot, py, ps, c)], 1)], -inf, 1)
    for plot in sorted(official.plots):
        need = official.plots[plot][1]
        for start in range(2023, YEARS[-1] - 1):
            left = need - (official.legume_area_2023.get(plot, Fraction(0)) if start == 2023 else 0)
            if left <= 0:
                continue
            idx = [i for (p, y, s, c), i in xi.items() if p == plot and c in LEGUMES and start <= y <= start + 2]
            add([(i, 1) for i in idx], float(left), inf)

    A = coo_matrix((vals, (rows, cols)), shape=(len(lo), N)).tocsr()
    t0 = time.perf_counter()
    res = milp(-obj, constraints=LinearConstraint(A, lo, hi), integrality=integrality, bounds=Bounds(lb, ub),
               options={"time_limit": time_limit_s, "mip_rel_gap": 0.0, "disp": False})
    seconds = time.perf_counter() - t0
    if res.x is None:
        return Solution(case, res.message, float("nan"), (), seconds, None)
    plan = tidy_plan(official, [(plot, y, s, c, Fraction(round(float(res.x[i]) * 10**6), 10**6))
                                for (plot, y, s, c), i in xi.items() if res.x[n + i] > 0.5])
    status = "optimal" if res.status == 0 else res.message
    return Solution(case, status, float(-res.fun), tuple(plan), seconds, getattr(res, "mip_gap", None))


def tidy_plan(official: Official, rows) -> tuple[tuple[str, int, str, int, Fraction], ...]:
    """Solver areas rounded to 1e-6 mu, made to obey the area rules exactly: each row
    within [0.3 mu, plot area] and, where rounding pushed a plot's season over its
    area, the largest row of that season trimmed by the excess (at most a few 1e-6 mu)."""
    areas = {}
    for plot, y, s, c, a in rows:
        cap = official.plots[plot][1]
        areas[(plot, y, s, c)] = min(max(a, min(MIN_AREA, cap)), cap)
    for plot, (lt, cap) in official.plots.items():
        for y in YEARS:
            for s in ("single", "first", "second"):
                keys = [k for k in areas if k[0] == plot and k[1] == y and k[2] == s]
                if not keys or (lt == "irrigated" and s == "single"):
                    continue
                shared = sum(a for k, a in areas.items() if lt == "irrigated" and k[:3] == (plot, y, "single"))
                excess = shared + sum(areas[k] for k in keys) - cap
                if excess > 0:
                    big = max(keys, key=lambda k: (areas[k], k))
                    areas[big] -= excess
    _cover_legume_windows(official, areas)
    return tuple((p, y, s, c, a) for (p, y, s, c), a in sorted(areas.items()))


ROUNDING_SLACK = Fraction(1, 10**4)    # mu: what rounding rows to 1e-6 mu can take from a window's legume area


def _slack(official: Official, areas, plot: str, year: int, season: str) -> Fraction:
    """Unplanted area of a plot's season (irrigated: single-season rice shares each vegetable season)."""
    lt, cap = official.plots[plot]
    def used(s):
        return sum((a for k, a in areas.items() if k[:3] == (plot, year, s)), Fraction(0))
    if lt == "irrigated":
        if season == "single":
            return cap - used("single") - max(used("first"), used("second"))
        return cap - used("single") - used(season)
    return cap - used(season)


def _cover_legume_windows(official: Official, areas) -> None:
    """Give back to legume rows what rounding to 1e-6 mu took from a 3-year window's legume
    area (at most ``ROUNDING_SLACK``), where the row's season has room for it."""
    for plot in sorted(official.plots):
        cap = official.plots[plot][1]
        for start in range(2023, YEARS[-1] - 1):
            need = cap - (official.legume_area_2023.get(plot, Fraction(0)) if start == 2023 else 0)
            rows = sorted((k for k in areas if k[0] == plot and k[3] in LEGUMES and start <= k[1] <= start + 2),
                          key=lambda k: (-areas[k], k))
            short = need - sum((areas[k] for k in rows), Fraction(0))
            if not 0 < short <= ROUNDING_SLACK:
                continue
            for k in rows:
                room = min(_slack(official, areas, plot, k[1], k[2]), cap - areas[k])
                if room >= short:
                    areas[k] += short
                    break


def replayed_profit(official: Official, solution: Solution) -> Fraction:
    """The exact replayed profit of a solution's (rounded) plan."""
    return plan_profit({(p, y, s, c): a for p, y, s, c, a in solution.plan}, official, solution.case)
