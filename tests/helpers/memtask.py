"""In-memory TaskSpec construction for property tests (no files, no gates)."""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from mmverify.reading.paths import parse_path
from mmverify.tasks import Band, MetricSpec, Paper, TaskSpec


def metric(mid: str, direction: str = "higher_is_better", weight=1, band=("rel", "0.12"), path=None,
           match_by=None, comparable=True, unit="1") -> MetricSpec:
    b = None if direction == "exact_value" or band is None else Band(band[0], Fraction(Decimal(band[1])), band[1])
    return MetricSpec(mid, parse_path(path or f"r.{mid}"), unit, direction, Fraction(weight), b,
                      match_by=match_by, comparable=comparable,
                      comparable_reason=None if comparable else "declared incomparable in test")


def paper(pid: str, values: dict, oracle=False, excluded=None, units=None) -> Paper:
    parsed = {}
    for k, v in values.items():
        if isinstance(v, (list, tuple)):
            parsed[k] = tuple(_val(x) for x in v)
        elif isinstance(v, dict):
            parsed[k] = tuple(sorted((kk, _val(x)) for kk, x in v.items()))
        else:
            parsed[k] = _val(v)
    return Paper(pid, "", "O", oracle, {"source": "test"}, parsed, dict(values), units or {},
                 excluded or {}, {}, {})


def _val(v):
    if isinstance(v, str):
        try:
            return Fraction(Decimal(v))
        except Exception:
            return v
    return Fraction(v)


def task(metrics, papers, tid="mem") -> TaskSpec:
    return TaskSpec(tid, "CUMCM", 2024, "A", None, "mem", True, None, None, {"source": "test"},
                    tuple(metrics), (), tuple(papers), {}, "/nonexistent")
