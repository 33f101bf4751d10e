"""Exact numbers: decimal text -> Fraction, and stable rendering for reports."""
from __future__ import annotations

import re
from decimal import Decimal
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
        return Fraction(value) if value.is_finite() else None
    if isinstance(value, int):
        return Fraction(value)
    if is_decimal_text(value):
        return Fraction(Decimal(value))
    return None


def fraction_text(value: Fraction) -> str:
    """Exact text of a Fraction: an integer, a terminating decimal, else ``p/q``."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d == 1 and max(twos, fives) <= 60:
        places = max(twos, fives)
        scaled = value.numerator * 10**places // value.denominator
        sign = "-" if scaled < 0 else ""
        digits = str(abs(scaled)).rjust(places + 1, "0")
        return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
    return f"{value.numerator}/{value.denominator}"


def report_float(value: Fraction | None, digits: int = 6) -> float | None:
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
