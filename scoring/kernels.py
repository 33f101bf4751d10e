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


# Each band kernel works on integer numerators and denominators (denominators
# positive) and builds one Fraction at the end: the scoring loop calls it once
# per read value and anchor, so it avoids the intermediate Fractions (and
# their gcds) that ``1 - shortfall / w`` would make. Exact all the same.

def _falloff(s: int, d: int) -> Fraction:
    """``clamp(1 - s / d, 0, 1)`` for ``s >= 0``, ``d > 0``."""
    return ONE if s == 0 else ZERO if s >= d else Fraction(d - s, d)


def _higher_pair(xn: int, xd: int, an: int, ad: int, wn: int, wd: int) -> Fraction:
    shortfall = an * xd - xn * ad          # (a - x) * ad * xd
    return ONE if shortfall <= 0 else _falloff(shortfall * wd, ad * xd * wn)


def _lower_pair(xn: int, xd: int, an: int, ad: int, wn: int, wd: int) -> Fraction:
    shortfall = xn * ad - an * xd          # (x - a) * ad * xd
    return ONE if shortfall <= 0 else _falloff(shortfall * wd, ad * xd * wn)


def _target_pair(xn: int, xd: int, an: int, ad: int, wn: int, wd: int) -> Fraction:
    return _falloff(abs(xn * ad - an * xd) * wd, ad * xd * wn)


def _on_fractions(pair: Callable[..., Fraction]) -> Callable[[Fraction, Fraction, Fraction], Fraction]:
    def kernel(x: Fraction, a: Fraction, w: Fraction) -> Fraction:
        return pair(x.numerator, x.denominator, a.numerator, a.denominator, w.numerator, w.denominator)

    kernel.__name__ = pair.__name__.replace("_pair", "")
    return kernel


_higher = _on_fractions(_higher_pair)
_lower = _on_fractions(_lower_pair)
_target = _on_fractions(_target_pair)


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
    # the same kernel on integers: (x num, x den, a num, a den, w num, w den)
    pair: Callable[[int, int, int, int, int, int], Fraction] | None = None


DIRECTIONS: dict[DirectionName, Direction] = {
    d.name: d
    for d in (
        Direction("higher_is_better", True, True, _higher,
                  "1 at or above the anchor; 1 - shortfall/w below it", _higher_pair),
        Direction("lower_is_better", True, True, _lower,
                  "1 at or below the anchor; 1 - excess/w above it", _lower_pair),
        Direction("target_value", False, True, _target, "1 - |x - a|/w, two-sided", _target_pair),
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
