"""Artifact schema validation with exact numbers.

Artifacts are parsed into :class:`decimal.Decimal`, so the JSON Schema types are
redefined here: ``number`` is a finite Decimal (never a boolean) and ``integer``
is a Decimal with an integral value (``224`` and ``224.0`` both validate).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

import jsonschema
from jsonschema import Draft202012Validator

from .paths import _render


def _is_number(checker, instance) -> bool:
    return isinstance(instance, (Decimal, int, float)) and not isinstance(instance, bool)


def _is_integer(checker, instance) -> bool:
    if isinstance(instance, bool):
        return False
    if isinstance(instance, int):
        return True
    if isinstance(instance, Decimal):
        return instance.is_finite() and instance == instance.to_integral_value()
    return isinstance(instance, float) and instance.is_integer()


_TYPES = Draft202012Validator.TYPE_CHECKER.redefine_many({"number": _is_number, "integer": _is_integer})


# Two keywords are replaced because jsonschema's own are not safe on hostile
# input: its ``uniqueItems`` compares every pair of items when they cannot be
# sorted (arrays of objects, mixed types: 4,000 objects took 92 s), and its
# ``multipleOf`` computes ``Decimal % Decimal`` in the default 28-digit context
# (``1e299 % 0.01`` raises DivisionImpossible) or ``Decimal / float``
# (TypeError). Both are replaced by exact, linear equivalents with the same
# verdicts.

def _frozen(value: Any) -> Any:
    """A hashable form equal exactly when jsonschema's ``equal`` says equal:
    booleans apart from numbers, numbers by value (``1`` = ``1.0``), strings,
    null, arrays in order, objects as key/value sets."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (Decimal, int, float)):
        return ("n", value)          # equal numbers hash equally across Decimal/int/float
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, _frozen(v)) for k, v in value.items()))
    return ("?", id(value))


def _unique_items(validator, unique, instance, schema):
    if unique and validator.is_type(instance, "array"):
        frozen = [_frozen(v) for v in instance]
        if len(set(frozen)) != len(frozen):
            yield jsonschema.ValidationError(f"array of {len(instance)} items has non-unique elements")


def _exact(value: Any) -> Any:
    """Exact value of a JSON number (a float by its shortest repr), else None."""
    from .numbers import to_fraction

    if isinstance(value, float):
        return to_fraction(Decimal(repr(value))) if value == value and abs(value) != float("inf") else None
    return to_fraction(value) if isinstance(value, (Decimal, int)) else None


def _multiple_of(validator, divisor, instance, schema):
    if not validator.is_type(instance, "number"):
        return
    x, d = _exact(instance), _exact(divisor)
    if x is None or not d:
        return
    if (x / d).denominator != 1:
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {divisor}")


ExactValidator = jsonschema.validators.extend(
    Draft202012Validator, validators={"uniqueItems": _unique_items, "multipleOf": _multiple_of},
    type_checker=_TYPES)


@dataclass(frozen=True)
class SchemaError:
    field: str
    problem: str
    keyword: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "problem": self.problem, "keyword": self.keyword}


_CACHE: dict[int, Any] = {}


def validator_for(schema: Mapping[str, Any]) -> Any:
    key = id(schema)
    v = _CACHE.get(key)
    if v is None or v.schema is not schema:
        v = ExactValidator(schema)
        _CACHE[key] = v
    return v


def validate_artifact(schema: Mapping[str, Any], data: Any, limit: int = 20) -> tuple[SchemaError, ...]:
    """All schema violations (up to ``limit``), in a deterministic order."""
    errors = []
    for e in validator_for(schema).iter_errors(data):
        field = _render(tuple(e.absolute_path)) or "(top level)"
        message = e.message
        if len(message) > 300:
            message = message[:300] + "..."
        errors.append(SchemaError(field, message, str(e.validator)))
    errors.sort(key=lambda s: (s.field, s.keyword, s.problem))
    return tuple(errors[:limit])
