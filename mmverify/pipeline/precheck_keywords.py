"""The JSON Schema keywords the schema pre-check (:mod:`.precheck`) models, and
the Python test it writes for each: a keyword outside :data:`_KEYWORDS` raises
:class:`Unsupported` (the schema then gets no pre-check).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default", "deprecated",
                          "readOnly", "writeOnly"})
_ROOT_ONLY = frozenset({"$schema", "$id"})
_KEYWORDS = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                       "maxLength", "minItems", "maxItems", "required", "enum", "const", "uniqueItems",
                       "properties", "additionalProperties", "prefixItems", "items"})
# keywords holding sub-schemas: a node with one of them gets a function of its own
_CONTAINER = frozenset({"properties", "additionalProperties", "prefixItems", "items"})
# the Python container a keyword applies to (it holds for any other value)
_KIND = {"minimum": "num", "maximum": "num", "exclusiveMinimum": "num", "exclusiveMaximum": "num",
         "minLength": "str", "maxLength": "str", "minItems": "list", "maxItems": "list", "uniqueItems": "list",
         "prefixItems": "list", "items": "list", "required": "dict", "properties": "dict",
         "additionalProperties": "dict"}
_KIND_OF_TYPE = {"number": "num", "integer": "num", "string": "str", "array": "list", "object": "dict",
                 "boolean": "bool", "null": "null"}
# a keyword fails where this comparison of the value ``{v}`` with its bound ``{k}`` is true
# (jsonschema's own comparison: ``x < m`` for minimum, and so on)
_FAILS = {"minimum": "{v} < {k}", "maximum": "{v} > {k}", "exclusiveMinimum": "{v} <= {k}",
          "exclusiveMaximum": "{v} >= {k}", "minLength": "len({v}) < {k}", "maxLength": "len({v}) > {k}",
          "minItems": "len({v}) < {k}", "maxItems": "len({v}) > {k}"}
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


class Unsupported(Exception):
    """The schema uses something the pre-check does not model: use jsonschema only."""


def _guard(kind: str, v: str) -> str:
    """Where a keyword of ``kind`` applies to ``v``: every value jsonschema
    counts as of that kind (subclasses included)."""
    return {"num": f"({v}.__class__ is Decimal or isinstance({v}, NUM) and not isinstance({v}, bool))",
            "str": f"isinstance({v}, str)",
            "list": f"isinstance({v}, list)", "dict": f"isinstance({v}, dict)",
            "bool": f"({v} is True or {v} is False)", "null": f"{v} is None"}[kind]


# a string, an array or an object passes a type test only as exactly the class
# the parser makes: an instance of a subclass (which may read its items or
# compare otherwise) is a value the pre-check is unsure of
_EXACT = {"str": "str", "list": "list", "dict": "dict"}


def _type_test(name: str, v: str) -> str:
    if name == "integer":
        # integral as written (exponent 0) settles a Decimal in one call
        return (f"({v}.__class__ is Decimal and ({v}.same_quantum(ONE) or {v}.is_finite() and"
                f" {v} == {v}.to_integral_value()) or is_integer({v}))")
    kind = _KIND_OF_TYPE[name]
    return f"{v}.__class__ is {_EXACT[kind]}" if kind in _EXACT else _guard(kind, v)


def _type_fails(names: list[str], v: str) -> str:
    """Where ``v`` is none of the types ``names``."""
    if names == ["number"]:
        return f"{v}.__class__ is not Decimal and not num({v})"  # (a call only for another type)
    if len(names) == 1 and names[0] in ("string", "array", "object"):
        return f"{v}.__class__ is not {_EXACT[_KIND_OF_TYPE[names[0]]]}"
    # the cheapest tests first: null, then boolean
    names = sorted(names, key=lambda n: (n != "null", n != "boolean"))
    return f"not ({' or '.join(_type_test(n, v) for n in names)})"


def _as_decimal(bound: Any) -> Any:
    # an int bound as a Decimal: the same exact comparison, without a conversion on every call
    return Decimal(bound) if type(bound) is int else bound


def _keys(schema: Any, root: bool) -> list[str]:
    """The keywords of a schema node that check something (refusing unknown ones)."""
    if not isinstance(schema, dict):
        raise Unsupported("schema node is not an object or a boolean")
    keys = [key for key in schema
            if not (key in _ANNOTATIONS or key.startswith("x-") or (root and key in _ROOT_ONLY))]
    for key in keys:
        if key not in _KEYWORDS:
            raise Unsupported(key)
    return keys


def _types(schema: dict) -> list[str]:
    value = schema["type"]
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(n, str) and n in _KIND_OF_TYPE for n in names):
        raise Unsupported("type")
    return names


def _subschemas(schema: Any) -> list[Any]:
    """The sub-schemas a node checks its items or properties against."""
    if schema.__class__ is not dict:
        return []
    out = []
    props, prefix = schema.get("properties"), schema.get("prefixItems")
    if props.__class__ is dict:
        out += props.values()
    if prefix.__class__ is list:
        out += prefix
    for name in ("additionalProperties", "items"):
        if name in schema:
            out.append(schema[name])
    return out


def _is_container(schema: Any) -> bool:
    return schema.__class__ is dict and not _CONTAINER.isdisjoint(schema)
