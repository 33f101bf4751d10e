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
from typing import Any, Callable, Mapping

from .paths import render_segments

# jsonschema is imported only when an artifact is not certainly valid (the
# compiled pre-check below decides the valid case) or its schema uses a keyword
# the pre-check does not model: naming errors is its job, not deciding validity.


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
    from .numbers import to_fraction

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

        types = Draft202012Validator.TYPE_CHECKER.redefine_many({"number": _is_number, "integer": _is_integer})
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
    :mod:`mmverify.violations`) says what the violation does to the score."""
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
_FAST: dict[int, tuple[Any, Callable[[Any], bool] | None]] = {}


def validator_for(schema: Mapping[str, Any]) -> Any:
    key = id(schema)
    v = _CACHE.get(key)
    if v is None or v.schema is not schema:
        v = exact_validator_class()(schema)
        _CACHE[key] = v
    return v


# ------------------------------------------------------------ fast pre-check
#
# jsonschema builds a new validator object for every sub-schema it descends
# into, which makes it the costliest step of scoring a valid artifact. Most
# artifacts scored in bulk are valid, so a compiled pre-check runs first. It
# is one-sided by construction: it answers True only when every keyword of the
# schema holds (the same Python comparisons as jsonschema's keyword functions,
# with the same exact type checks), and False whenever it is unsure. On False,
# or for a schema using any keyword outside the supported subset, jsonschema
# runs as before and alone decides the errors and their messages. A True can
# therefore never hide an error; a False only costs the full validation.

_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default", "deprecated",
                          "readOnly", "writeOnly"})
_ROOT_ONLY = frozenset({"$schema", "$id"})
_SIMPLE_TYPES: dict[str, Callable[[Any], bool]] = {
    "number": lambda x: _is_number(None, x),
    "integer": lambda x: _is_integer(None, x),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "array": lambda x: isinstance(x, list),
    "object": lambda x: isinstance(x, dict),
}


class _Unsupported(Exception):
    """The schema uses something the pre-check does not model: use jsonschema only."""


def _sure_equal(a: Any, b: Any) -> bool:
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


def _sure_unique(items: list) -> bool:
    """True only where jsonschema's ``uniq`` is certainly True."""
    if all(isinstance(x, str) for x in items) or all(
            isinstance(x, (Decimal, int)) and not isinstance(x, bool) for x in items):
        return len(set(items)) == len(items)
    return False


def _number_bound(m: Any, ok: Callable[[Any, Any], bool]) -> Callable[[Any], bool]:
    """A numeric bound: holds for non-numbers; the common Decimal case first."""
    def check(x: Any) -> bool:
        if x.__class__ is Decimal:
            return ok(x, m)
        return not _is_number(None, x) or ok(x, m)
    return check


def _all(checks: tuple[Callable[[Any], bool], ...]) -> Callable[[Any], bool]:
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda x: a(x) and b(x)
    if len(checks) == 3:
        a, b, c = checks
        return lambda x: a(x) and b(x) and c(x)

    def every(x: Any) -> bool:
        for c in checks:
            if not c(x):
                return False
        return True
    return every


def _compile(schema: Any, root: bool = False) -> Callable[[Any], bool]:
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict):
        raise _Unsupported("schema node is not an object or a boolean")
    checks: list[Callable[[Any], bool]] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS or key.startswith("x-") or (root and key in _ROOT_ONLY):
            continue
        if key == "type":
            names = value if isinstance(value, list) else [value]
            if not names or not all(isinstance(n, str) and n in _SIMPLE_TYPES for n in names):
                raise _Unsupported("type")
            preds = tuple(_SIMPLE_TYPES[n] for n in names)
            checks.append(preds[0] if len(preds) == 1 else lambda x, preds=preds: any(p(x) for p in preds))
        elif key == "minimum":
            checks.append(_number_bound(value, lambda x, m: not x < m))
        elif key == "maximum":
            checks.append(_number_bound(value, lambda x, m: not x > m))
        elif key == "exclusiveMinimum":
            checks.append(_number_bound(value, lambda x, m: not x <= m))
        elif key == "exclusiveMaximum":
            checks.append(_number_bound(value, lambda x, m: not x >= m))
        elif key == "minLength":
            checks.append(lambda x, m=value: not isinstance(x, str) or not len(x) < m)
        elif key == "maxLength":
            checks.append(lambda x, m=value: not isinstance(x, str) or not len(x) > m)
        elif key == "minItems":
            checks.append(lambda x, m=value: not isinstance(x, list) or not len(x) < m)
        elif key == "maxItems":
            checks.append(lambda x, m=value: not isinstance(x, list) or not len(x) > m)
        elif key == "required":
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                raise _Unsupported("required")
            names_req = frozenset(value)
            checks.append(lambda x, names=names_req: not isinstance(x, dict) or names <= x.keys())
        elif key == "enum":
            if not isinstance(value, list):
                raise _Unsupported("enum")
            options = tuple(value)
            checks.append(lambda x, options=options: any(_sure_equal(o, x) for o in options))
        elif key == "const":
            checks.append(lambda x, c=value: _sure_equal(x, c))
        elif key == "uniqueItems":
            if value:
                checks.append(lambda x: not isinstance(x, list) or _sure_unique(x))
        elif key == "properties":
            if not isinstance(value, dict):
                raise _Unsupported("properties")
            subs = tuple((name, _compile(sub)) for name, sub in value.items())

            def check_properties(x, subs=subs):
                if not isinstance(x, dict):
                    return True
                for name, sub in subs:
                    if name in x and not sub(x[name]):
                        return False
                return True

            checks.append(check_properties)
        elif key == "additionalProperties":
            if "patternProperties" in schema:
                raise _Unsupported("patternProperties")
            known = frozenset(schema.get("properties", {}))
            if isinstance(value, dict):
                extra = _compile(value)

                def check_extra(x, known=known, extra=extra):
                    if not isinstance(x, dict):
                        return True
                    for k, v in x.items():
                        if k not in known and not extra(v):
                            return False
                    return True

                checks.append(check_extra)
            elif value is True:
                continue
            elif value is False:
                checks.append(lambda x, known=known: not isinstance(x, dict) or x.keys() <= known)
            else:
                raise _Unsupported("additionalProperties")
        elif key == "prefixItems":
            if not isinstance(value, list):
                raise _Unsupported("prefixItems")
            subs_p = tuple(_compile(sub) for sub in value)

            def check_prefix(x, subs_p=subs_p):
                if not isinstance(x, list):
                    return True
                for item, sub in zip(x, subs_p):
                    if not sub(item):
                        return False
                return True

            checks.append(check_prefix)
        elif key == "items":
            prefix = schema.get("prefixItems", [])
            if not isinstance(prefix, list):
                raise _Unsupported("prefixItems")
            n = len(prefix)
            if value is False:
                checks.append(lambda x, n=n: not isinstance(x, list) or len(x) <= n)
            else:
                sub_i = _compile(value)

                def check_items(x, n=n, sub_i=sub_i):
                    if not isinstance(x, list):
                        return True
                    for item in (x[n:] if n else x):
                        if not sub_i(item):
                            return False
                    return True

                checks.append(check_items)
        else:
            raise _Unsupported(key)
    return _all(tuple(checks))


def fast_check_for(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled pre-check of ``schema`` (None when it uses an unsupported keyword)."""
    key = id(schema)
    hit = _FAST.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    try:
        check: Callable[[Any], bool] | None = _compile(schema, root=True)
    except _Unsupported:
        check = None
    _FAST[key] = (schema, check)
    return check


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
