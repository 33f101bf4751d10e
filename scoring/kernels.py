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

from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import pair_fraction

ZERO = Fraction(0)
ONE = Fraction(1)


# Each band kernel is made against one anchor a = an/ad and band width
# w = wn/wd (denominators positive) and scores a read value x = xn/xd on its
# integer numerator and denominator, building one Fraction at the end: the
# scoring loop calls it once per read value and anchor, so it avoids the
# intermediate Fractions (and their gcds) that ``1 - shortfall / w`` would make,
# and the anchor's share of the products is worked out once. Exact all the same.

def _falloff(s: int, d: int) -> Fraction:
    """``clamp(1 - s / d, 0, 1)`` for ``s >= 0``, ``d > 0``."""
    return ONE if s == 0 else ZERO if s >= d else pair_fraction(d - s, d)


def _higher_against(an: int, ad: int, wn: int, wd: int) -> Callable[[int, int], Fraction]:
    adwn = ad * wn

    def higher(xn: int, xd: int) -> Fraction:
        shortfall = an * xd - xn * ad          # (a - x) * ad * xd
        # shortfall / w over a common denominator
        return ONE if shortfall <= 0 else _falloff(shortfall * wd, adwn * xd)
    return higher


def _lower_against(an: int, ad: int, wn: int, wd: int) -> Callable[[int, int], Fraction]:
    adwn = ad * wn

    def lower(xn: int, xd: int) -> Fraction:
        shortfall = xn * ad - an * xd          # (x - a) * ad * xd
        return ONE if shortfall <= 0 else _falloff(shortfall * wd, adwn * xd)
    return lower


def _target_against(an: int, ad: int, wn: int, wd: int) -> Callable[[int, int], Fraction]:
    adwn = ad * wn

    def target(xn: int, xd: int) -> Fraction:
        s = abs(xn * ad - an * xd)          # |x - a| * ad * xd; _falloff written out (the kernel most called)
        if not s:
            return ONE
        s, d = s * wd, adwn * xd
        return ZERO if s >= d else pair_fraction(d - s, d)
    return target


def _on_fractions(against: Callable[..., Callable[[int, int], Fraction]]
                  ) -> Callable[[Fraction, Fraction, Fraction], Fraction]:
    def kernel(x: Fraction, a: Fraction, w: Fraction) -> Fraction:
        return against(a.numerator, a.denominator, w.numerator, w.denominator)(x.numerator, x.denominator)

    kernel.__name__ = against.__name__.replace("_against", "")
    return kernel


_higher = _on_fractions(_higher_against)
_lower = _on_fractions(_lower_against)
_target = _on_fractions(_target_against)


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
    """A metric direction: its kernel (x, a, w) -> r in [0, 1], whether it is
    one-sided and needs a band, and the same kernel made against one anchor."""

    name: DirectionName
    one_sided: bool
    needs_band: bool
    kernel: Callable[[Fraction, Fraction, Fraction], Fraction] | None
    summary: str
    # the same kernel made against one anchor and band: (a num, a den, w num, w den)
    # -> a function of the read value's (num, den)
    against: Callable[[int, int, int, int], Callable[[int, int], Fraction]] | None = None
    # the comparison of a read number with a numeric anchor (Python's operator
    # text, ``x <op> a``) under which the kernel scores exactly 1, whatever the
    # band: a verdict-only reader may compare a Decimal with the anchor (exact)
    # before it makes the value's exact ratio
    full_at: str = "=="
    # the band kernel's shortfall as source text over a read value's ``n, d``
    # and the anchor's ``an, ad`` (``against``'s shortfall, scaled by ``ad * d``):
    # r = 1 where it is <= 0, else clamp(1 - s * wd / (ad * wn * d), 0, 1); for
    # code generated once per task that scores in line (a test holds it to ``against``)
    shortfall: str | None = None


DIRECTIONS: dict[DirectionName, Direction] = {
    d.name: d
    for d in (
        Direction("higher_is_better", True, True, _higher,
                  "1 at or above the anchor; 1 - shortfall/w below it", _higher_against, ">=",
                  "an * d - n * ad"),
        Direction("lower_is_better", True, True, _lower,
                  "1 at or below the anchor; 1 - excess/w above it", _lower_against, "<=",
                  "n * ad - an * d"),
        Direction("target_value", False, True, _target, "1 - |x - a|/w, two-sided", _target_against, "==",
                  "abs(n * ad - an * d)"),
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


def anchored(direction: DirectionName, a: object, w: Fraction | None) -> Callable[[int, int], Fraction] | None:
    """The direction's kernel against one fixed numeric anchor ``a`` (and band
    width ``w``), as a function of a read value's numerator and denominator (in
    lowest terms, denominator positive): ``kernel_score(direction, x, a, w)`` for
    a Fraction ``x``. None where :func:`kernel_score` takes another path (a label
    anchor) or raises (no positive band)."""
    d = DIRECTIONS[direction]
    if not isinstance(a, Fraction):
        return None
    if d.kernel is None:    # exact_value: equal Fractions have equal lowest terms
        an, ad = a.numerator, a.denominator
        return lambda xn, xd: ONE if xn == an and xd == ad else ZERO
    if d.against is None or w is None or w <= 0:
        return None
    return d.against(a.numerator, a.denominator, w.numerator, w.denominator)
