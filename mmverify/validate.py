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
ExactValidator = jsonschema.validators.extend(Draft202012Validator, type_checker=_TYPES)


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
