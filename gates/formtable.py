"""The gate forms, one record each: everything that differs from form to form.

Design notes: docs/architecture.md, `gates/formtable.py`.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from mmverify.reading.numbers import exact_text

from .compile import (build_finite_domain, build_identity, build_integer, build_order, build_partition_sum,
                      build_range)
from .forms import (decide_finite_domain, decide_identity, decide_integer, decide_order, decide_partition_sum,
                    decide_range, expand_identity, expand_order, expand_partition_sum)
from .predicates import (verdict_finite_domain, verdict_identity, verdict_integer, verdict_order,
                         verdict_partition_sum, verdict_range)
from .quick import quick_identity, quick_order, quick_partition_sum
from .model import Gate, GateInstance
from .registry import FORM_TABLE, FORMS, Form, FormName  # noqa: F401  (the table's names, also read from here)


# ------------------------------------------------------------ report bounds

def _range_bounds(i: GateInstance) -> dict[str, Any]:
    return {"min": exact_text(i.lower), "min_strict": i.lower_strict,
            "max": exact_text(i.upper), "max_strict": i.upper_strict}


def _identity_bounds(i: GateInstance) -> dict[str, Any]:
    ident = i.identity
    return {"relation": i.relation, "lhs": ident.lhs_text if ident is not None else None,
            "rhs": ident.rhs_text if ident is not None else None,
            "lhs_value": exact_text(i.lhs_value), "rhs_value": exact_text(i.rhs_value)}


# ------------------------------------------------------------ Lean claims
# the builders live in mmverify.lean_gen.claims (imported on use: the scoring path
# never needs them); these pick their arguments from a decided instance

def _claim_range(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_range

    (x,) = i.operands
    return claim_range(x, i.lower, i.lower_strict, i.upper, i.upper_strict, tol, i.paths)


def _claim_integer(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_integer

    (x,) = i.operands
    return claim_integer(x, i.binary, tol, i.paths)


def _claim_order(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_order

    return claim_order(i.operands, i.strict, tol, i.paths)


def _claim_identity(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_identity, claim_identity_aggregate

    if i.aggregate is not None:
        return claim_identity_aggregate(i.identity.expr, i.bindings, i.aggregate, i.operands, tol, i.paths)
    return claim_identity(i.identity.expr, i.bindings, tol, i.paths)


def _claim_domain(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_domain_label, claim_domain_number
    from mmverify.reading.labels import normalise_label

    if i.label is not None:
        return claim_domain_label(i.label, [normalise_label(m) for m in i.domain], i.paths)
    (x,) = i.operands
    return claim_domain_number(x, [m for m in i.domain_numbers if m is not None], tol, i.paths)


def _claim_partition(i: GateInstance, tol: Fraction) -> tuple:
    from mmverify.lean_gen.claims import claim_partition

    return claim_partition(i.parts, i.total, tol, i.paths)


# ------------------------------------------------- audit: bounds a field?

def _order_bounds_field(gate: Gate, hits: list[int], up: bool) -> bool:
    if not gate.chain:
        return True  # an order over a list relates each element to the others
    n = len(gate.chain)
    return any((k < n - 1) if up else (k > 0) for k in hits)


def _relates(gate: Gate, hits: list[int], up: bool) -> bool:
    return True  # relates the field to other values


FORM_TABLE.update({f.name: f for f in (
    Form("range", frozenset({"path", "min", "max", "min_strict", "max_strict"}),
         build_range, decide_range, _range_bounds, _claim_range,
         lambda g, hits, up: (g.upper if up else g.lower) is not None, verdict=verdict_range),
    Form("integer", frozenset({"path", "binary"}),
         build_integer, decide_integer, lambda i: {"binary": i.binary}, _claim_integer,
         lambda g, hits, up: g.binary, verdict=verdict_integer),
    Form("order", frozenset({"paths", "path", "strict"}),
         build_order, decide_order, lambda i: {"strict": i.strict}, _claim_order,
         _order_bounds_field, verdict=verdict_order, expand=expand_order, quick=quick_order),
    Form("identity", frozenset({"expr", "vars"}),
         build_identity, decide_identity, _identity_bounds, _claim_identity, _relates,
         verdict=verdict_identity, expand=expand_identity, quick=quick_identity),
    Form("finite_domain", frozenset({"path", "values"}),
         build_finite_domain, decide_finite_domain,
         lambda i: {"domain": list(i.domain), "member": i.member}, _claim_domain, _relates,
         verdict=verdict_finite_domain, reads_labels=True),
    Form("partition_sum", frozenset({"parts", "total", "total_value"}),
         build_partition_sum, decide_partition_sum,
         lambda i: {"parts_sum": exact_text(i.parts_sum), "total": exact_text(i.total)}, _claim_partition,
         _relates, verdict=verdict_partition_sum, expand=expand_partition_sum, quick=quick_partition_sum),
)})
