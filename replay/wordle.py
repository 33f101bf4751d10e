"""Replay of MCM 2023 C (predicting Wordle results): what the official data determine.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import math
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "mcm-2023-c-wordle"
STATEMENT = ("data.row_count",)
WITNESSED = ("q1.raw_ma_forecast", "q1.raw_80_lower", "q1.raw_80_upper")
DERIVED = STATEMENT + WITNESSED
TARGET = date(2023, 3, 1)       # the statement's forecast date
PLACES = 3


def load_official(data_dir: str) -> Mapping[str, Any]:
    import csv
    import os

    rows = []
    with open(os.path.join(data_dir, "reported_results.csv"), encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            rows.append((date.fromisoformat(row["date"]), int(row["reported"])))
    rows.sort()
    if len({d for d, _ in rows}) != len(rows):
        raise ValueError("a day appears twice in reported_results.csv")
    return {"days": tuple(d for d, _ in rows), "reported": tuple(float(v) for _, v in rows)}


def exact(x: float) -> Fraction:
    return Fraction(Decimal(f"{x:.{PLACES}f}"))


def replay(data: Mapping[str, Any], official: Mapping[str, Any]) -> Derived:
    values = {"data.row_count": Fraction(len(official["days"]))}
    method, why = read_method(data)
    if method is None:
        return Derived(values, {n: why for n in WITNESSED})
    forecast, lower, upper = forecast_interval(official, **method)
    values.update({"q1.raw_ma_forecast": exact(forecast), "q1.raw_80_lower": exact(lower),
                   "q1.raw_80_upper": exact(upper)})
    return Derived(values, {})


def read_method(data: Any) -> tuple[dict[str, Any] | None, str]:
    rep = data.get("reproduced") if isinstance(data, dict) else None
    raw = rep.get("forecast_method") if isinstance(rep, dict) else None
    if raw is None:
        return None, "no witness at reproduced.forecast_method (drift_window, ewma_alpha, sigma_window, z)"
    if not isinstance(raw, dict):
        return None, "reproduced.forecast_method is not an object"
    drift, sigma = _whole(raw.get("drift_window"), 1), _whole(raw.get("sigma_window"), 2)
    alpha, z = _number(raw.get("ewma_alpha")), _number(raw.get("z"))
    if drift is None or sigma is None:
        return None, "drift_window (>= 1) and sigma_window (>= 2) must be whole numbers of days up to 358"
    if alpha is None or not 0 < alpha <= 1:
        return None, "ewma_alpha must be a number in (0, 1]"
    if z is None or not 0 < z <= 10:
        return None, "z must be a number in (0, 10]"
    return {"drift_window": drift, "ewma_alpha": alpha, "sigma_window": sigma, "z": z}, ""


def _whole(v: Any, low: int) -> int | None:
    if type(v) is Decimal and v.is_finite() and v == v.to_integral_value() and low <= v <= 358:
        return int(v)
    return None


def _number(v: Any) -> float | None:
    return float(v) if type(v) is Decimal and v.is_finite() else None


def forecast_interval(official: Mapping[str, Any], drift_window: int, ewma_alpha: float, sigma_window: int,
                      z: float) -> tuple[float, float, float]:
    series = official["reported"]
    diffs = [b - a for a, b in zip(series, series[1:])]
    recent = diffs[-drift_window:]
    drift = recent[0]
    for d in recent[1:]:
        drift = (1 - ewma_alpha) * drift + ewma_alpha * d
    spread_of = diffs[-sigma_window:]
    mean = sum(spread_of) / len(spread_of)
    sigma = math.sqrt(sum((d - mean) ** 2 for d in spread_of) / (len(spread_of) - 1))
    horizon = max(1, (TARGET - official["days"][-1]).days)
    forecast = series[-1] + horizon * drift
    half = z * sigma * math.sqrt(horizon)
    return forecast, max(0.0, forecast - half), forecast + half
