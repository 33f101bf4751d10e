"""Metric kernels: one registry entry per direction, declared with the metric.

Like a metric registry in an evaluation harness, the direction is part of the
metric's declaration, not a guess made at scoring time. Every kernel is a pure
function on exact Fractions returning a score in [0, 1].

* ``higher_is_better`` / ``lower_is_better``: one-sided. At or beyond the anchor
  in the good direction the score is exactly 1; short of it the score falls
  linearly to 0 over the band: ``r = clamp(1 - shortfall / w, 0, 1)``.
* ``target_value``: two-sided closeness, ``r = clamp(1 - |x - a| / w, 0, 1)``.
* ``exact_value``: 1 if equal (numbers exactly, labels after trim + casefold).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Literal, get_args

from mmverify.labels import normalise_label

ZERO = Fraction(0)
ONE = Fraction(1)


def clamp01(x: Fraction) -> Fraction:
    return ZERO if x < 0 else ONE if x > 1 else x


def _higher(x: Fraction, a: Fraction, w: Fraction) -> Fraction:
    shortfall = a - x
    return ONE if shortfall <= 0 else clamp01(ONE - shortfall / w)


def _lower(x: Fraction, a: Fraction, w: Fraction) -> Fraction:
    shortfall = x - a
    return ONE if shortfall <= 0 else clamp01(ONE - shortfall / w)


def _target(x: Fraction, a: Fraction, w: Fraction) -> Fraction:
    return clamp01(ONE - abs(x - a) / w)


def exact_match(x: object, a: object) -> Fraction:
    """Exact comparison of a read value and an anchor (numbers or labels)."""
    if isinstance(a, str):
        return ONE if isinstance(x, str) and normalise_label(x) == normalise_label(a) else ZERO
    if isinstance(x, Fraction) and isinstance(a, Fraction):
        return ONE if x == a else ZERO
    return ZERO


# the direction names, in registry order (a test keeps them equal to the
# registry's keys and to the task schema's enum)
DirectionName = Literal["higher_is_better", "lower_is_better", "target_value", "exact_value"]


@dataclass(frozen=True)
class Direction:
    name: DirectionName
    one_sided: bool
    needs_band: bool
    kernel: Callable[[Fraction, Fraction, Fraction], Fraction] | None
    summary: str


DIRECTIONS: dict[DirectionName, Direction] = {
    d.name: d
    for d in (
        Direction("higher_is_better", True, True, _higher,
                  "1 at or above the anchor; 1 - shortfall/w below it"),
        Direction("lower_is_better", True, True, _lower,
                  "1 at or below the anchor; 1 - excess/w above it"),
        Direction("target_value", False, True, _target, "1 - |x - a|/w, two-sided"),
        Direction("exact_value", False, False, None, "1 if equal, else 0"),
    )
}


# the one-sided directions: credit up to the anchor in the good direction
ONE_SIDED: tuple[DirectionName, ...] = tuple(n for n in get_args(DirectionName) if DIRECTIONS[n].one_sided)


def kernel_score(direction: DirectionName, x: object, a: object, w: Fraction | None) -> Fraction:
    """Score one read value against one anchor with the direction's kernel."""
    d = DIRECTIONS[direction]
    if d.kernel is None:
        return exact_match(x, a)
    if not isinstance(x, Fraction) or not isinstance(a, Fraction) or w is None or w <= 0:
        raise ValueError(f"{direction} needs numbers and a positive band")
    return d.kernel(x, a, w)
