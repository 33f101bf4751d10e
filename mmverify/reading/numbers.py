"""Exact numbers: decimal text -> Fraction, and stable rendering for reports."""
from __future__ import annotations

import re
from decimal import Decimal
from math import gcd
from fractions import Fraction
from typing import Any

DECIMAL_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$")


def is_decimal_text(text: Any) -> bool:
    return isinstance(text, str) and DECIMAL_TEXT.match(text) is not None


def to_fraction(value: Any) -> Fraction | None:
    """Exact Fraction of a parsed JSON number (Decimal/int) or decimal text.

    Booleans, floats and anything else give ``None``: a boolean is never a
    number, and a float has already lost the text it came from.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Decimal):
        return decimal_fraction(value) if value.is_finite() else None
    if isinstance(value, int):
        return Fraction(value)
    if is_decimal_text(value):
        return Fraction(Decimal(value))
    return None


def _fraction_from_ratio(n: int, d: int) -> Fraction:
    f = object.__new__(Fraction)
    f._numerator, f._denominator = n, d  # type: ignore[attr-defined]
    return f


# ``Decimal.as_integer_ratio`` is already in lowest terms with a positive
# denominator: building the Fraction from it directly skips the ABC checks and
# the gcd of ``Fraction(Decimal)`` (the most frequent call of scoring). Used
# only if this interpreter's Fraction keeps its state in those two slots.
try:
    _probe = _fraction_from_ratio(3, 4)
    _DIRECT = _probe == Fraction(3, 4) and hash(_probe) == hash(Fraction(3, 4)) and str(_probe) == "3/4"
except (AttributeError, TypeError):  # pragma: no cover - another Fraction implementation
    _DIRECT = False


def decimal_fraction(value: Decimal) -> Fraction:
    """Exact Fraction of a finite Decimal (same value as ``Fraction(value)``)."""
    if _DIRECT:
        n, d = value.as_integer_ratio()
        return _fraction_from_ratio(n, d)
    return Fraction(value)


def pair_fraction(n: int, d: int) -> Fraction:
    """``Fraction(n, d)`` for integers with ``d > 0``: reduced by one gcd,
    without the constructor's type dispatch."""
    g = gcd(n, d)
    if g != 1:
        n, d = n // g, d // g
    return _fraction_from_ratio(n, d) if _DIRECT else Fraction(n, d)


def decimal_places(value: Fraction) -> int | None:
    """Fewest decimal places that write ``value`` exactly, or None when its
    decimal expansion does not terminate (a prime other than 2 and 5 divides
    the denominator)."""
    d = value.denominator
    twos = (d & -d).bit_length() - 1    # the power of 2 in d
    d >>= twos
    fives = 0
    while d % 5 == 0:
        d //= 5
        fives += 1
    return max(twos, fives) if d == 1 else None


def exact_decimal(value: Fraction) -> Decimal | Fraction:
    """``value`` as the equal ``Decimal`` when its expansion terminates (built
    from text: exact whatever the context), else ``value`` itself. Both compare
    exactly with a ``Decimal``; the Decimal-Decimal comparison is the fast one."""
    places = decimal_places(value)
    if places is None:
        return value
    return Decimal(f"{value.numerator * 10 ** places // value.denominator}E-{places}")


def point_text(n: int, places: int) -> str:
    """``n / 10**places`` as decimal text for a non-negative integer ``n``,
    trailing zeros dropped."""
    if places == 0:
        return str(n)
    s = str(n).rjust(places + 1, "0")
    head, tail = s[:-places], s[-places:].rstrip("0")
    return head + ("." + tail if tail else "")


def fraction_text(value: Fraction) -> str:
    """Exact text of a Fraction: an integer, a terminating decimal, else ``p/q``."""
    if value.denominator == 1:
        return str(value.numerator)
    places = decimal_places(value)
    if places is not None and places <= 60:
        sign = "-" if value < 0 else ""
        return sign + point_text(abs(value.numerator) * 10**places // value.denominator, places)
    return f"{value.numerator}/{value.denominator}"


def exact_text(value: Fraction | None) -> str | None:
    """:func:`fraction_text`, or None for None (an absent exact value in a report)."""
    return fraction_text(value) if value is not None else None


def report_float(value: Fraction | float | None, digits: int = 6) -> float | None:
    """A rounded float for display; the exact value is reported beside it."""
    if value is None:
        return None
    return round(float(value), digits)


def decimal_text(value: Any) -> str | None:
    """Canonical text of a parsed number for reports (no float round trip)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        return format(value, "f") if abs(value.adjusted()) < 25 else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return fraction_text(value)
    return None
