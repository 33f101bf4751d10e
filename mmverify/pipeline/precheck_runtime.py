"""What a generated schema pre-check may call (:mod:`mmverify.pipeline.precheck`
writes the functions): the exact JSON type tests, the sure comparisons, the
column checks of long arrays of objects, and :data:`NAMESPACE`, the only
names a generated function sees besides its own constants (no builtins).
"""
from __future__ import annotations

from decimal import Decimal
from itertools import repeat
from typing import Any

# ------------------------------------------------------------ exact JSON types
#
# Artifacts are parsed into Decimal, so JSON's types are redefined: ``number``
# is a Decimal, int or float (never a boolean), ``integer`` one with an
# integral value (``224`` and ``224.0`` both count). mmverify.pipeline.validate gives
# jsonschema the same two predicates.


def is_number(x: Any) -> bool:
    return isinstance(x, (Decimal, int, float)) and not isinstance(x, bool)


def is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    if isinstance(x, Decimal):
        return x.is_finite() and x == x.to_integral_value()
    return isinstance(x, float) and x.is_integer()


def sure_equal(a: Any, b: Any) -> bool:
    """True only where jsonschema's ``equal`` is certainly True (else False: unsure)."""
    if a is b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, (Decimal, int)) and isinstance(b, (Decimal, int)):
        return a == b
    return False


def sure_in(x: Any, options: tuple) -> bool:
    """True only where ``x`` is certainly one of ``options`` (``enum``)."""
    for o in options:
        if sure_equal(o, x):
            return True
    return False


def sure_unique(items: list) -> bool:
    """True only where jsonschema's ``uniq`` is certainly True."""
    if all(isinstance(x, str) for x in items) or all(
            isinstance(x, (Decimal, int)) and not isinstance(x, bool) for x in items):
        return len(set(items)) == len(items)
    return False


# ------------------------------------------------------------ column checks
#
# A column spec describes a simple leaf schema: (kind, lower bounds, upper
# bounds, string options, string lengths), kind "number", "integer" or
# "string"; a bound is (value, strict). See _column_spec.

_is_finite = Decimal.is_finite
_integral = Decimal.to_integral_value
_equal = Decimal.__eq__
_getitem = dict.__getitem__
_STR = frozenset({str})
_DICT = frozenset({dict})
_same_quantum = Decimal.same_quantum
_ONE = Decimal(1)


class _Field:
    """The values of one property over a list of objects, read anew on every
    pass (``dict.__getitem__`` itself refuses an item that is not an object)."""
    __slots__ = ("items", "name")

    def __init__(self, items: list, name: str) -> None:
        self.items, self.name = items, name

    def __iter__(self) -> Any:
        return map(_getitem, self.items, repeat(self.name))


def _within(value: int, lows: tuple, highs: tuple) -> bool:
    return all(value > b if strict else value >= b for b, strict in lows) and all(
        value < b if strict else value <= b for b, strict in highs)


def column(values: Any, spec: tuple) -> bool:
    """True only when every one of ``values`` (a list or a :class:`_Field`)
    certainly satisfies the leaf ``spec``, tested with C-level passes; any
    other value, or any error: False.

    A plain string column is joined (``str.join`` refuses anything else);
    otherwise strings are tested once per distinct value: no other JSON value
    equals a string. Numbers must be finite Decimals. A "number" column is tested
    value by value (``is_finite``) and by its least and greatest value. An
    "integer" column is tested on its distinct values, which also settles the
    others, equal to one of them (integral: of exponent 0, as written without
    a point, or equal to its integral value), except a boolean: True and False
    equal 1 and 0, so when 1 or 0 is among them (and within the bounds) every
    value is tested as well."""
    kind, lows, highs, options, lengths = spec
    try:
        if kind == "string":
            if options is None and lengths is None:
                "".join(values)
                return True
            distinct = set(values)
            if not set(map(type, distinct)) <= _STR:
                return False
            if options is not None and not distinct <= options:
                return False
            if lengths is not None and distinct:
                shortest, longest = lengths
                sizes = set(map(len, distinct))
                if min(sizes) < shortest or (longest is not None and max(sizes) > longest):
                    return False
            return True
        if kind == "integer":
            # where the bounds admit 0 or 1, a boolean may hide behind one: the values are read twice
            boolean = _within(0, lows, highs) or _within(1, lows, highs)
            if boolean and values.__class__ is not list:
                values = list(values)
            distinct = set(values)
            if not all(map(_same_quantum, distinct, repeat(_ONE))) and not (
                    all(map(_is_finite, distinct)) and all(map(_equal, distinct, map(_integral, distinct)))):
                return False
            if boolean and (0 in distinct or 1 in distinct) and not all(map(_is_finite, values)):
                return False
            values = distinct
        else:
            if values.__class__ is not list:
                values = list(values)  # read once: two or three passes follow
            if not all(map(_is_finite, values)):
                return False
        if not values:
            return True
        if lows:
            least = min(values)
            for bound, strict in lows:
                if not (least > bound if strict else least >= bound):
                    return False
        if highs:
            greatest = max(values)
            for bound, strict in highs:
                if not (greatest < bound if strict else greatest <= bound):
                    return False
        return True
    except Exception:
        return False


def rows(items: list, plan: tuple) -> bool:
    """True only when every item is an object holding each property of the
    ``plan`` ((name, column spec or None), ...) with a value satisfying its spec.
    The columns are read from the items' storage, so every item must be
    exactly a ``dict`` (a subclass may read otherwise, as jsonschema reads it)."""
    if not items:
        return True
    try:
        if not set(map(type, items)) <= _DICT:
            return False
        for name, spec in plan:
            if spec is None:
                list(_Field(items, name))
            elif not column(_Field(items, name), spec):
                return False
        return True
    except Exception:
        return False


class _Missing:
    __slots__ = ()


# everything a generated function may name besides its constants, and nothing else (no builtins)
NAMESPACE: dict[str, Any] = {
    "__builtins__": {}, "isinstance": isinstance, "len": len, "str": str, "list": list, "dict": dict,
    "bool": bool, "Decimal": Decimal, "NUM": (Decimal, int, float), "Exception": Exception, "num": is_number,
    "is_integer": is_integer,
    "sure_equal": sure_equal, "sure_in": sure_in, "sure_unique": sure_unique, "rows": rows,
    "MISSING": _Missing(), "ONE": _ONE,
}
