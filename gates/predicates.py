"""The exact predicate of each gate form, on the values of one row.

Design notes: docs/architecture.md, `gates/predicates.py`.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

from mmverify.reading.labels import normalise_label as normalise
from mmverify.reading.numbers import decimal_fraction, exact_decimal

from . import identity, identity_decimal
from .model import Gate

ZERO = Fraction(0)
ZERO_DECIMAL = Decimal(0)


def verdict_of(ok: bool) -> tuple[str, str | None]:
    return ("pass", None) if ok else ("fail", "violated")


def fraction(x: Decimal | int | Fraction) -> Fraction:
    """The exact Fraction of a number as read (a Decimal, an int or a Fraction)."""
    cls = type(x)
    if cls is Fraction:
        return x
    return decimal_fraction(x) if cls is Decimal else Fraction(x)


def verdict_range(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    return verdict_of(range_holds(gate, values[0], tol))


def verdict_integer(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    x = values[0]
    if not tol and type(x) is Decimal:   # exact: to_integral_value is not bounded by the context precision
        return verdict_of((x == 0 or x == 1) if gate.binary else x == x.to_integral_value())
    return verdict_of(integer_holds(gate, fraction(x), tol))


def verdict_order(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    xs = values if not tol else [fraction(x) for x in values]
    return verdict_of(order_broken(gate, xs, tol) is None)


def verdict_identity(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    ident = gate.identity
    assert ident is not None
    if ident.holds is not None:
        ok = ident.holds(values, _derived(gate, tol)[2])
        if ok is not None:
            return verdict_of(ok)
    lhs_p, rhs_p = ident.evaluate(values)
    return identity_verdict(gate, lhs_p, rhs_p, tol)


def verdict_finite_domain(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    x = values[0]
    return verdict_of(domain_member(gate, x if isinstance(x, str) else fraction(x), tol)[0] is not None)


def verdict_partition_sum(gate: Gate, values: Sequence[Any], tol: Fraction) -> tuple[str, str | None]:
    return verdict_of(sum_holds(values[:len(gate.parts) + 1], tol))


def sum_holds(values: Sequence[Any], tol: Fraction) -> bool:
    """``partition_holds`` on numbers as read: whether the parts (every value
    but the last) sum to within ``tol`` of the total (the last). Summed in the
    trapped exact Decimal context of :mod:`.identity_decimal` when every value is a
    Decimal or an int (a sum that would round raises there), else, or then,
    in Fractions."""
    if all(v.__class__ is Decimal or v.__class__ is int for v in values):
        exact = identity_decimal.EXACT
        try:
            total = ZERO_DECIMAL
            for v in values[:-1]:
                total = exact.add(total, v)
            return exact.subtract(total, values[-1]).copy_abs() <= tol
        except identity_decimal.UNDECIDED:
            pass
    return partition_holds([fraction(x) for x in values[:-1]], fraction(values[-1]), tol)[1]


def row_test(gate: Gate, tol: Fraction, verdict: Callable[[Gate, Sequence[Any], Fraction], tuple[str, str | None]]
             ) -> Callable[[Sequence[Any]], bool]:
    """``verdict(gate, values, tol)[0] == "pass"`` (``verdict`` being the gate's
    ``verdict_<form>`` above) as one function of a row of usable values, with
    the gate's constants looked up once: the all-pass check of :mod:`.quick`
    calls it on every row. The range, exact integer, exact domain and Decimal
    identity cases are the same comparisons as their ``verdict_<form>``,
    inlined (a domain's numbers as a set: equal numbers of any exact type hash
    equal); every other case asks ``verdict``."""
    form = gate.form
    if form == "range":
        (lo_x, hi_x), (lo_d, hi_d), _ = _derived(gate, tol)
        lo_s = gate.lower is not None and gate.lower.strict
        hi_s = gate.upper is not None and gate.upper.strict

        def in_range(values: Sequence[Any]) -> bool:
            x = values[0]
            lo, hi = (lo_x, hi_x) if x.__class__ is Fraction else (lo_d, hi_d)
            if lo is not None and not (x > lo if lo_s else x >= lo):
                return False
            return hi is None or (x < hi if hi_s else x <= hi)
        return in_range
    if form == "integer" and not tol:
        binary = gate.binary

        def whole(values: Sequence[Any]) -> bool:
            x = values[0]
            if binary:
                return x == 0 or x == 1
            cls = x.__class__
            return True if cls is int else x == x.to_integral_value() if cls is Decimal else x.denominator == 1
        return whole
    if form == "finite_domain" and not tol:
        numbers = frozenset(v for v in gate.domain_numbers if v is not None)   # equal numbers hash equal
        labels = frozenset(normalise(v) for v in gate.domain)

        def member(values: Sequence[Any]) -> bool:
            x = values[0]
            return normalise(x) in labels if x.__class__ is str else x in numbers
        return member
    holds = gate.identity.holds if form == "identity" and gate.identity is not None else None
    if holds is not None:
        tol_d = _derived(gate, tol)[2]

        evaluate = gate.identity.evaluate

        def identity_holds(values: Sequence[Any]) -> bool:
            ok = holds(values, tol_d)
            # (where the Decimal check cannot decide, verdict_identity asks the pairs)
            return ok if ok is not None else identity_verdict(gate, *evaluate(values), tol)[0] == "pass"
        return identity_holds
    return lambda values: verdict(gate, values, tol)[0] == "pass"


Bounds = tuple[Any, Any]   # (min - tol, max + tol), None where open
_DERIVED: dict[int, tuple[Gate, Fraction, tuple[Bounds, Bounds, Decimal | Fraction]]] = {}


def _derived(gate: Gate, tol: Fraction) -> tuple[Bounds, Bounds, Decimal | Fraction]:
    """What a gate's predicate reads of its constants at tolerance ``tol``, made
    once per gate: a range's ``min - tol`` and ``max + tol`` as Fractions and as
    the equal Decimals where they terminate (for comparing a parsed Decimal at
    C speed, exact either way), and ``tol`` as a Decimal where it terminates."""
    hit = _DERIVED.get(id(gate))
    if hit is None or hit[0] is not gate or hit[1] is not tol:
        exact = (gate.lower.value - tol if gate.lower is not None else None,
                 gate.upper.value + tol if gate.upper is not None else None)
        decimal = tuple(exact_decimal(b) if b is not None else None for b in exact)
        hit = _DERIVED[id(gate)] = (gate, tol, (exact, decimal, exact_decimal(tol)))
    return hit[2]


def tolerated_bounds(gate: Gate, tol: Fraction, fractions: bool = False) -> Bounds:
    """A range's ``min - tol`` and ``max + tol`` (None where open), each the
    equal Decimal where it terminates, else (or with ``fractions``) the
    Fraction: exact to compare with any number as read (the Fractions the
    faster with a Fraction)."""
    return _derived(gate, tol)[0 if fractions else 1]


def range_holds(gate: Gate, x: Decimal | int | Fraction, tol: Fraction) -> bool:
    lo, hi = gate.lower, gate.upper
    exact, decimal, _ = _derived(gate, tol)
    lo_eff, hi_eff = exact if type(x) is Fraction else decimal
    ok = True
    if lo is not None:
        ok = x > lo_eff if lo.strict else x >= lo_eff
    if hi is not None and ok:
        ok = x < hi_eff if hi.strict else x <= hi_eff
    return ok


def integer_holds(gate: Gate, x: Fraction, tol: Fraction) -> bool:
    if not tol:  # exact: the common case, without Fraction arithmetic
        return (x == 0 or x == 1) if gate.binary else x.denominator == 1
    if gate.binary:
        return min(abs(x), abs(x - 1)) <= tol
    return abs(x - round(x)) <= tol


def order_broken(gate: Gate, xs: list[Fraction], tol: Fraction) -> int | None:
    """The first k with x_k, x_k+1 out of order, or None."""
    for k in range(len(xs) - 1):
        nxt = xs[k + 1] + tol if tol else xs[k + 1]    # (with a tolerance the values are Fractions)
        ok = xs[k] < nxt if gate.strict else xs[k] <= nxt
        if not ok:
            return k
    return None


def identity_verdict(gate: Gate, lhs_p: tuple[int, int] | None, rhs_p: tuple[int, int] | None,
                     tol: Fraction) -> tuple[str, str | None]:
    """An identity's verdict from its sides (integer pairs; None: divides by zero)."""
    if lhs_p is None or rhs_p is None:
        return "fail", "undefined"
    assert gate.identity is not None
    return verdict_of(identity.pair_holds(gate.identity.relation, lhs_p, rhs_p, tol))


def domain_member(gate: Gate, x: Fraction | str, tol: Fraction) -> tuple[int | None, str | None]:
    """(index of the member a number or label matches or None, the normalised label)."""
    if not isinstance(x, str):
        for k, v in enumerate(gate.domain_numbers):
            if v is not None and abs(x - v) <= tol:
                return k, None
        return None, None
    label = normalise(x)
    for k, v in enumerate(gate.domain):
        if normalise(v) == label:
            return k, label
    return None, label


def partition_holds(parts: list[Fraction], total: Fraction, tol: Fraction) -> tuple[Fraction, bool]:
    """(sum of the parts, whether it is within tol of the total)."""
    s = sum(parts, ZERO)
    return s, abs(s - total) <= tol


def aggregate_values(gate: Gate, numbers: Sequence[Any]) -> list[Any]:
    """One value per variable of an aggregate identity from the numbers read
    in its input order (the list's elements in place of the aggregate): the
    list's largest or smallest element, compared exactly."""
    assert gate.aggregate is not None and gate.identity is not None
    name, kind = gate.aggregate
    k = gate.identity.var_names.index(name)
    n_list = len(numbers) - (len(gate.identity.var_names) - 1)
    pick = max if kind == "max" else min
    return [*numbers[:k], pick(numbers[k:k + n_list], key=fraction), *numbers[k + n_list:]]
