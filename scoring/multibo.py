"""MULTI-BO: how far a run closes the gap between a baseline run and the panel.

Per task t with the run's O-EVAL ``O_t`` and the baseline's ``f_t``::

    b_t = clip((O_t - f_t) / (1 - f_t), -1, +1)
    b_t = 0 if O_t = 1 else -1            when f_t = 1
    b_t = -1                              when the run's artifact is missing or
                                          fails a hard gate
    MULTI-BO = 1 + mean_t b_t

The baseline scored against itself gives exactly 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable

ONE = Fraction(1)


@dataclass(frozen=True)
class BoTerm:
    task_id: str
    oeval: Fraction
    baseline: Fraction
    b: Fraction
    rule: str  # gap_closed | baseline_perfect | forced_minus_one


def bo_term(task_id: str, oeval: Fraction, baseline: Fraction, *, forced_fail: bool = False) -> BoTerm:
    if not (0 <= oeval <= 1 and 0 <= baseline <= 1):
        raise ValueError("O-EVAL values must lie in [0, 1]")
    if forced_fail:
        return BoTerm(task_id, oeval, baseline, -ONE, "forced_minus_one")
    if baseline == 1:
        return BoTerm(task_id, oeval, baseline, Fraction(0) if oeval == 1 else -ONE, "baseline_perfect")
    b = (oeval - baseline) / (1 - baseline)
    return BoTerm(task_id, oeval, baseline, max(-ONE, min(ONE, b)), "gap_closed")


def multi_bo(terms: Iterable[BoTerm]) -> Fraction:
    terms = list(terms)
    if not terms:
        raise ValueError("MULTI-BO needs at least one task")
    return 1 + sum((t.b for t in terms), Fraction(0)) / len(terms)
