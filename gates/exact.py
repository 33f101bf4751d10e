"""Reading artifact values for gates, and rendering exact numbers for humans.

A gated value is read without interpreting any string: a JSON number (parsed
as ``Decimal`` by the strict artifact parser, or ``int``) is kept as it is,
exact, beside its report text (the gate forms compare it as it is where that
is exact, and take its ``Fraction`` where they compute); ``true``/``false``,
strings, arrays and objects are never numbers. A JSON
``null`` reads as absent (a schema that allows ``null`` says "may be left
unreported"), so it gives a gap, like a missing field.
"""
from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any, NamedTuple

from mmverify.reading import paths
from mmverify.reading.numbers import decimal_places, decimal_text, point_text, to_fraction

ABSENT, NUMBER, LABEL, WRONG = "absent", "number", "label", "wrong"
LABEL_SHOW = 60


class Read(NamedTuple):
    """One artifact value read at a concrete path (a tuple: cheap to make)."""

    path: str
    kind: str                    # absent | number | label | wrong
    number: Any                  # kind == number: the Decimal or int as parsed (a Fraction under $replay)
    label: str | None            # kind == label: the raw string
    text: Any                    # what reports show (None when absent; read_light: the number itself)
    why: str | None = None       # for absent: where the walk stopped


_tuple = tuple.__new__   # Read(...) for the two common cases, without NamedTuple's __new__ frame


def read(path: str, raw: Any) -> Read:
    cls = type(raw)
    if cls is Decimal:           # the common case first: a finite JSON number
        if raw.is_finite():      # (the text is numbers.decimal_text's, inlined)
            return _tuple(Read, (path, NUMBER, raw, None,
                                 format(raw, "f") if abs(raw.adjusted()) < 25 else str(raw), None))
        return Read(path, WRONG, None, None, f"<{type_name(raw)}>")
    if cls is int:
        return _tuple(Read, (path, NUMBER, raw, None, str(raw), None))
    if cls is Fraction:          # a replayed value under $replay: exact already
        return _tuple(Read, (path, NUMBER, raw, None, show(raw), None))
    if isinstance(raw, paths.Missing):
        return Read(path, ABSENT, None, None, None, raw.reason)
    if raw is None:  # JSON null: "no value here", treated like an absent field
        return Read(path, ABSENT, None, None, None, f"{path!r} is null")
    if isinstance(raw, str):
        return Read(path, LABEL, None, raw, show_label(raw))
    if isinstance(raw, Fraction):  # (a subclass: the exact case is above)
        return Read(path, NUMBER, raw, None, show(raw))
    num = to_fraction(raw) if isinstance(raw, (Decimal, int)) and not isinstance(raw, bool) else None
    if num is not None:
        return Read(path, NUMBER, num, None, decimal_text(raw))
    return Read(path, WRONG, None, None, f"<{type_name(raw)}>")


def read_light(path: str, raw: Any) -> Read:
    """:func:`read` for a verdict only (no report shows it): a JSON number
    stands for its own text, so nothing is formatted. Everything else reads as
    in :func:`read`."""
    cls = type(raw)
    if (cls is Decimal and raw.is_finite()) or cls is int:
        return _tuple(Read, (path, NUMBER, raw, None, raw, None))
    return read(path, raw)


def type_name(raw: Any) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "boolean " + ("true" if raw else "false")
    if isinstance(raw, list):
        return f"array of {len(raw)}"
    if isinstance(raw, dict):
        return "object"
    if isinstance(raw, str):
        return f"string of {len(raw)} characters"
    if isinstance(raw, Decimal):
        return "non-finite number"
    return type(raw).__name__


def show_label(text: str) -> str:
    """A safe, bounded rendering of an artifact string (JSON-escaped, truncated)."""
    body = text if len(text) <= LABEL_SHOW else text[:LABEL_SHOW] + "..."
    return json.dumps(body, ensure_ascii=True)


def show(value: Fraction, digits: int = 12) -> str:
    """Exact decimal text when the value terminates within ``digits`` fractional
    digits; otherwise ``digits`` significant digits truncated toward zero and
    marked with ``...`` (the exact value is in the report's ``exact`` block)."""
    n, d = value.numerator, value.denominator
    if d == 1:
        return str(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    places = decimal_places(value)
    if places is not None and places <= digits:
        return sign + point_text(n * 10 ** places // d, places)   # exact: d divides 10**places
    # truncated: `digits` significant digits (on integers: |value| = n / d)
    if n >= d:
        mag = len(str(n // d))
    else:
        mag = 0
        probe = n
        while probe * 10 < d:       # |value| * 10**k < 1/10
            probe *= 10
            mag -= 1
    places = max(digits - mag, 0)
    return sign + point_text(n * 10 ** places // d, places) + "..."
