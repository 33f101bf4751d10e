"""Artifact schema validation with exact numbers.

Artifacts are parsed into :class:`decimal.Decimal`, so the JSON Schema types are
redefined here: ``number`` is a finite Decimal (never a boolean) and ``integer``
is a Decimal with an integral value (``224`` and ``224.0`` both validate).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from mmverify.reading.paths import render_segments
from mmverify.pipeline.precheck import fast_check_for
from mmverify.pipeline.precheck_runtime import is_integer, is_number

# jsonschema is imported only when an artifact is not certainly valid (the
# generated pre-check of mmverify.pipeline.precheck decides the valid case) or its
# schema uses a keyword the pre-check does not model: naming errors is its
# job, not deciding validity.


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
    import jsonschema

    if unique and validator.is_type(instance, "array"):
        frozen = [_frozen(v) for v in instance]
        if len(set(frozen)) != len(frozen):
            yield jsonschema.ValidationError(f"array of {len(instance)} items has non-unique elements")


def _exact(value: Any) -> Any:
    """Exact value of a JSON number (a float by its shortest repr), else None."""
    from mmverify.reading.numbers import to_fraction

    if isinstance(value, float):
        return to_fraction(Decimal(repr(value))) if value == value and abs(value) != float("inf") else None
    return to_fraction(value) if isinstance(value, (Decimal, int)) else None


def _multiple_of(validator, divisor, instance, schema):
    import jsonschema

    if not validator.is_type(instance, "number"):
        return
    x, d = _exact(instance), _exact(divisor)
    if x is None or not d:
        return
    if (x / d).denominator != 1:
        yield jsonschema.ValidationError(f"{json_text(instance)} is not a multiple of {json_text(divisor)}")


_EXACT: list[Any] = []


def exact_validator_class() -> Any:
    """Draft 2020-12 with exact number types and the two safe keywords (built once)."""
    if not _EXACT:
        import jsonschema
        from jsonschema import Draft202012Validator

        types = Draft202012Validator.TYPE_CHECKER.redefine_many(
            {"number": lambda _checker, x: is_number(x), "integer": lambda _checker, x: is_integer(x)})
        _EXACT.append(jsonschema.validators.extend(
            Draft202012Validator, validators={"uniqueItems": _unique_items, "multipleOf": _multiple_of},
            type_checker=types))
    return _EXACT[0]


def __getattr__(name: str) -> Any:
    # ``ExactValidator`` stays importable by name, built on first access
    if name == "ExactValidator":
        return exact_validator_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class SchemaError:
    """One violation. ``field`` is where it is (``(top level)`` for the root),
    ``segments`` the same place as path segments (for a missing required
    field: the missing field itself). ``effect`` (set by the pipeline, see
    :mod:`mmverify.pipeline.violations`) says what the violation does to the score."""
    field: str
    problem: str
    keyword: str
    segments: tuple = field(default=(), compare=False)
    effect: Any = field(default=None, compare=False)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"field": self.field, "problem": self.problem, "keyword": self.keyword}
        if self.effect is not None:
            out["effect"] = self.effect
        return out


# ------------------------------------------------------- readable messages
#
# jsonschema writes its messages with Python reprs (``Decimal('99') is greater
# than the maximum of 2``, ``True is not of type 'number'``). A person reading
# a report should see the number as the artifact wrote it and JSON's own type
# names, so the messages of the common keywords are written here.

_JSON_TYPES = (("boolean", bool), ("number", (Decimal, int, float)), ("string", str), ("null", type(None)),
               ("array", list), ("object", dict))


def json_type(value: Any) -> str:
    for name, kind in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def json_text(value: Any, width: int = 60) -> str:
    """A short JSON rendering of ``value``: numbers as written, true/false/null,
    strings quoted, arrays and objects summarised."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (Decimal, int, float)):
        text = str(value)
    elif isinstance(value, str):
        # readable letters stay as written; control and separator characters are escaped
        text = "".join(c if c.isprintable() else json.dumps(c)[1:-1]
                       for c in json.dumps(value, ensure_ascii=False))
    elif isinstance(value, list):
        return f"an array of {len(value)} item(s)"
    elif isinstance(value, dict):
        return f"an object with {len(value)} key(s)"
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _a(type_name: str) -> str:
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


_PY_REPR = re.compile(r"Decimal\('([^']*)'\)")


def readable_message(e: Any) -> str:
    """The message of a jsonschema error in JSON terms."""
    kw, want, got = e.validator, e.validator_value, e.instance
    if kw == "type":
        names = want if isinstance(want, list) else [want]
        return f"{json_text(got)} is {_a(json_type(got))}; expected " + " or ".join(_a(str(n)) for n in names)
    bounds = {"minimum": "less than the minimum", "maximum": "greater than the maximum",
              "exclusiveMinimum": "not greater than the exclusive minimum",
              "exclusiveMaximum": "not less than the exclusive maximum"}
    if kw in bounds:
        return f"{json_text(got)} is {bounds[kw]} of {json_text(want)}"
    if kw == "enum":
        return f"{json_text(got)} is not one of " + ", ".join(json_text(o) for o in want)
    if kw == "const":
        return f"{json_text(got)} is not {json_text(want)}"
    if kw in ("minLength", "maxLength"):
        return f"a string of {len(got)} character(s); {'at least' if kw == 'minLength' else 'at most'} {want} allowed"
    if kw in ("minItems", "maxItems"):
        return f"an array of {len(got)} item(s); {'at least' if kw == 'minItems' else 'at most'} {want} allowed"
    if kw == "required":
        return f"required field {json.dumps(_missing_name(e), ensure_ascii=False)} is missing"
    return _PY_REPR.sub(r"\1", e.message)


def _missing_name(e: Any) -> str:
    """The required property a ``required`` error is about (jsonschema yields
    one error per missing property, its repr first in the message)."""
    if isinstance(e.instance, dict) and isinstance(e.validator_value, list):
        for name in e.validator_value:
            if isinstance(name, str) and name not in e.instance and e.message.startswith(repr(name)):
                return name
    return "?"


_CACHE: dict[int, Any] = {}


def validator_for(schema: Mapping[str, Any]) -> Any:
    key = id(schema)
    v = _CACHE.get(key)
    if v is None or v.schema is not schema:
        v = exact_validator_class()(schema)
        _CACHE[key] = v
    return v


def is_valid(schema: Mapping[str, Any], data: Any) -> bool:
    """Whether ``data`` satisfies ``schema``: the verdict of
    :func:`validate_artifact` without naming the errors (the pre-check decides
    the valid case; otherwise jsonschema stops at its first error)."""
    check = fast_check_for(schema)
    if check is not None:
        try:
            if check(data):
                return True
        except RecursionError:
            pass
    return next(iter(validator_for(schema).iter_errors(data)), None) is None


def validate_artifact(schema: Mapping[str, Any], data: Any, limit: int | None = 20) -> tuple[SchemaError, ...]:
    """All schema violations (up to ``limit``; None: all), in a deterministic order."""
    check = fast_check_for(schema)
    if check is not None:
        try:
            if check(data):
                return ()
        except RecursionError:
            pass  # let jsonschema decide, as before
    errors = []
    for e in validator_for(schema).iter_errors(data):
        segments = tuple(e.absolute_path)
        field_text = render_segments(segments) or "(top level)"
        message = readable_message(e)
        if len(message) > 300:
            message = message[:300] + "..."
        if e.validator == "required":
            segments += (_missing_name(e),)
        errors.append(SchemaError(field_text, message, str(e.validator), segments))
    errors.sort(key=lambda s: (s.field, s.keyword, s.problem))
    return tuple(errors[:limit])
