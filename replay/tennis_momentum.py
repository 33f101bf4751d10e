"""Replay of MCM 2024 C (momentum in tennis): the data-determined statistics.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .base import Derived

TASK_ID = "mcm-2024-c-tennis-momentum"
# what the official data alone determine
STATEMENT = ("data.points", "data.matches")
WITNESSED = ("q2.median_ljung_box_p", "q2.median_runs_p", "q2.matches_rejecting_iid", "q1.final_momentum_range")
DERIVED = STATEMENT + WITNESSED
PLACES = 6
SERIES = ("point_winner", "serve_adjusted_residual")
ALPHA = 0.05            # the statement's 5 % level
MAX_LAGS = 40
FINAL = "2023-wimbledon-1701"


def load_official(data_dir: str) -> Mapping[str, Any]:
    """Per match (in file order), the point victors and servers, as 1/2 codes."""
    import csv
    import os

    matches: dict[str, tuple[list[int], list[int]]] = {}
    with open(os.path.join(data_dir, "points.csv"), encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            servers, victors = matches.setdefault(row["match_id"], ([], []))
            servers.append(int(row["server"]))
            victors.append(int(row["point_victor"]))
    if FINAL not in matches:
        raise ValueError(f"the final {FINAL} is not in the data")
    return {"matches": {k: (tuple(s), tuple(v)) for k, (s, v) in matches.items()}}


def exact(x: float, places: int = PLACES) -> Fraction:
    return Fraction(Decimal(f"{x:.{places}f}"))


def replay(data: Mapping[str, Any], official: Mapping[str, Any]) -> Derived:
    matches = official["matches"]
    values = {"data.points": Fraction(sum(len(v) for _, v in matches.values())),
              "data.matches": Fraction(len(matches))}
    gaps: dict[str, str] = {}
    method, why = read_method(data)
    if method is None:
        return Derived(values, {n: why for n in WITNESSED})
    overall = _server_rates((s, v) for ss, vv in matches.values() for s, v in zip(ss, vv))
    series = {m: point_series(s, v, overall, method) for m, (s, v) in matches.items()}
    lb = [ljung_box_p(x, method["ljung_box_lags"]) for x in series.values()]
    runs = [runs_p(x) for x in series.values()]
    values["q2.median_ljung_box_p"] = exact(_median([round(p, PLACES) for p in lb]))
    values["q2.median_runs_p"] = exact(_median([round(p, PLACES) for p in runs]))
    values["q2.matches_rejecting_iid"] = Fraction(sum(1 for p in lb if p < ALPHA))
    spans = method.get("momentum")
    if spans is None:
        gaps["q1.final_momentum_range"] = "the witness names no momentum method (ewma_short_span, " \
                                          "ewma_long_span, short_weight)"
    else:
        m = momentum(series[FINAL], *spans)
        values["q1.final_momentum_range"] = exact(max(m) - min(m))
    return Derived(values, gaps)


def read_method(data: Any) -> tuple[dict[str, Any] | None, str]:
    """The witness ``experiment_result.method``, checked, or (None, why not)."""
    er = data.get("experiment_result") if isinstance(data, dict) else None
    raw = er.get("method") if isinstance(er, dict) else None
    if raw is None:
        return None, "no witness at experiment_result.method (series, ljung_box_lags, ...)"
    if not isinstance(raw, dict):
        return None, "experiment_result.method is not an object"
    series = raw.get("series")
    if series not in SERIES:
        return None, f"method.series must be one of {', '.join(SERIES)}"
    lags = raw.get("ljung_box_lags")
    if not (type(lags) is Decimal and lags.is_finite() and lags == lags.to_integral_value() and 1 <= lags <= MAX_LAGS):
        return None, f"method.ljung_box_lags must be a whole number from 1 to {MAX_LAGS}"
    out: dict[str, Any] = {"series": series, "ljung_box_lags": int(lags)}
    if series == "serve_adjusted_residual":
        w = _unit(raw.get("context_weight"))
        if w is None:
            return None, "method.context_weight must be a number in [0, 1] for serve_adjusted_residual"
        out["context_weight"] = w
    names = ("ewma_short_span", "ewma_long_span", "short_weight")
    if any(n in raw for n in names):
        short, long_, weight = (_span(raw.get("ewma_short_span")), _span(raw.get("ewma_long_span")),
                                _unit(raw.get("short_weight")))
        if None in (short, long_, weight):
            return None, "method.ewma_short_span and ewma_long_span must be numbers in [1, 1000], " \
                         "short_weight a number in [0, 1]"
        out["momentum"] = (short, long_, weight)
    return out, ""


def _unit(v: Any) -> float | None:
    return float(v) if type(v) is Decimal and v.is_finite() and 0 <= v <= 1 else None


def _span(v: Any) -> float | None:
    return float(v) if type(v) is Decimal and v.is_finite() and 1 <= v <= 1000 else None


def point_series(servers: Sequence[int], victors: Sequence[int], overall: Mapping[int, float],
                 method: Mapping[str, Any]) -> list[float]:
    """One match's series: the point winner, or its residual against the
    serve-adjusted expectation (``overall``: each server's rate over all the
    matches, :func:`_server_rates`)."""
    wins = [1.0 if v == 1 else 0.0 for v in victors]
    if method["series"] == "point_winner":
        return wins
    w = method["context_weight"]
    local = _server_rates(zip(servers, victors))
    expected = {s: w * local[s] + (1 - w) * overall[s] for s in local}
    return [x - expected[s] for x, s in zip(wins, servers)]


def _server_rates(pairs) -> dict[int, float]:
    won: dict[int, int] = {}
    seen: dict[int, int] = {}
    for s, v in pairs:
        seen[s] = seen.get(s, 0) + 1
        won[s] = won.get(s, 0) + (v == 1)
    return {s: won[s] / seen[s] for s in seen}


def ljung_box_p(x: Sequence[float], lags: int) -> float:
    n = len(x)
    mean = sum(x) / n
    d = [v - mean for v in x]
    denom = sum(v * v for v in d)
    q = 0.0
    for k in range(1, lags + 1):
        r = sum(d[i] * d[i + k] for i in range(n - k)) / denom if denom and k < n else 0.0
        q += r * r / max(n - k, 1)
    q *= n * (n + 2)
    return chi2_sf(q, lags)


def chi2_sf(x: float, k: int) -> float:
    """P(X > x) for a chi-square variable with ``k`` (whole) degrees of freedom."""
    if x <= 0:
        return 1.0
    h = x / 2
    if k % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, k // 2):
            term *= h / j
            total += term
        return min(1.0, math.exp(-h) * total)
    total = math.erfc(math.sqrt(h))
    term = math.sqrt(h) / math.gamma(1.5)
    for j in range(1, (k - 1) // 2 + 1):
        total += math.exp(-h) * term
        term *= h / (j + 0.5)
    return min(1.0, total)


def runs_p(x: Sequence[float]) -> float:
    signs = [1 if v >= 0 else 0 for v in x]
    n1 = sum(signs)
    n2 = len(signs) - n1
    runs = 1 + sum(1 for a, b in zip(signs, signs[1:]) if a != b)
    n = n1 + n2
    expected = 1 + 2 * n1 * n2 / max(n, 1)
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n1 - n2) / max(n * n * (n - 1), 1)
    z = (runs - expected) / math.sqrt(max(variance, 1e-9))
    return math.erfc(abs(z) / math.sqrt(2))


def momentum(x: Sequence[float], short: float, long_: float, weight: float) -> list[float]:
    return [weight * a + (1 - weight) * b for a, b in zip(_ewma(x, short), _ewma(x, long_))]


def _ewma(x: Sequence[float], span: float) -> list[float]:
    alpha = 2 / (span + 1)
    out = [x[0]]
    for v in x[1:]:
        out.append((1 - alpha) * out[-1] + alpha * v)
    return out


def _median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
