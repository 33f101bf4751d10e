"""The schema pre-check: one generated Python function per artifact schema.

jsonschema builds a validator object for every sub-schema it descends into,
which makes it the costliest step of scoring a valid artifact. Most artifacts
scored in bulk are valid, so a pre-check runs first, and jsonschema runs only
when the pre-check does not answer True (it alone names errors).

The pre-check is one-sided by construction: it answers True only when every
keyword of the schema certainly holds (the comparisons of jsonschema's keyword
functions, with the exact number types below), and False whenever it is
unsure. A schema using a keyword outside the supported subset gets no
pre-check at all (None): jsonschema decides alone. A True therefore never
hides an error; a False only costs the full validation.

How it is built. From the schema, :func:`generate` writes the source of one
function ``check(x)``: straight-line tests that ``return False`` at the first
failure, nested ``for`` loops for ``items`` and ``additionalProperties``, an
indexed read per ``prefixItems`` entry. The nesting of the source follows the
nesting of the schema and nothing else (a schema nested deeper than Python's
block limit is split into further functions ``f1``, ``f2``, ... that
``check`` calls). The source is compiled once per schema and run in a
namespace holding only ``K`` and the helpers it names, without builtins.

Safety. The schema is trusted anchor data, and still no text from it is ever
pasted into the source: every constant (property names, bounds, lengths,
enum and required sets) goes into the tuple ``K`` and is read as ``K[i]``;
variable and function names come from a counter; the only numbers written are
``K`` indices, ``prefixItems`` positions and counts, all produced here. Before
compiling, :func:`_audit` refuses a source with a quote character (hence
with any string literal) or with a name outside that vocabulary. Artifact data is only ever an argument of
the compiled function.
"""
from __future__ import annotations

import keyword
import re
from decimal import Decimal
from typing import Any, Callable, Mapping

# ------------------------------------------------------------ exact JSON types
#
# Artifacts are parsed into Decimal, so JSON's types are redefined: ``number``
# is a Decimal, int or float (never a boolean), ``integer`` one with an
# integral value (``224`` and ``224.0`` both count). mmverify.validate gives
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


class _Missing:
    __slots__ = ()


# everything a generated function may name, and nothing else (no builtins)
_NAMESPACE: dict[str, Any] = {
    "__builtins__": {}, "isinstance": isinstance, "len": len, "str": str, "bool": bool, "list": list,
    "dict": dict, "Decimal": Decimal, "NUM": (Decimal, int, float), "is_integer": is_integer,
    "sure_equal": sure_equal, "sure_in": sure_in, "sure_unique": sure_unique, "MISSING": _Missing(),
}

# ------------------------------------------------------------ the generator

_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default", "deprecated",
                          "readOnly", "writeOnly"})
_ROOT_ONLY = frozenset({"$schema", "$id"})
_KEYWORDS = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                       "maxLength", "minItems", "maxItems", "required", "enum", "const", "uniqueItems",
                       "properties", "additionalProperties", "prefixItems", "items"})
# the Python container a keyword applies to (it holds for any other value)
_KIND = {"minimum": "num", "maximum": "num", "exclusiveMinimum": "num", "exclusiveMaximum": "num",
         "minLength": "str", "maxLength": "str", "minItems": "list", "maxItems": "list", "uniqueItems": "list",
         "prefixItems": "list", "items": "list", "required": "dict", "properties": "dict",
         "additionalProperties": "dict"}
_KIND_OF_TYPE = {"number": "num", "integer": "num", "string": "str", "array": "list", "object": "dict",
                 "boolean": "bool", "null": "null"}
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
# a keyword fails where this comparison of the value ``{v}`` with its bound ``{k}`` is true
# (jsonschema's ``not x < m`` and so on, negated)
_FAILS = {"minimum": "{v} < {k}", "maximum": "{v} > {k}", "exclusiveMinimum": "{v} <= {k}",
          "exclusiveMaximum": "{v} >= {k}", "minLength": "len({v}) < {k}", "maxLength": "len({v}) > {k}",
          "minItems": "len({v}) < {k}", "maxItems": "len({v}) > {k}"}

# Python allows 20 nested loops per function and 100 indentation levels:
# deeper schemas continue in a function of their own
_MAX_LOOPS = 12
_MAX_INDENT = 40


class Unsupported(Exception):
    """The schema uses something the pre-check does not model: use jsonschema only."""


def _guard(kind: str, v: str) -> str:
    return {"num": f"({v}.__class__ is Decimal or (isinstance({v}, NUM) and not isinstance({v}, bool)))",
            "str": f"isinstance({v}, str)", "list": f"isinstance({v}, list)", "dict": f"isinstance({v}, dict)",
            "bool": f"isinstance({v}, bool)", "null": f"{v} is None"}[kind]


def _type_test(name: str, v: str) -> str:
    return f"is_integer({v})" if name == "integer" else _guard(_KIND_OF_TYPE[name], v)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


class _Writer:
    """Collects the constants ``K``, fresh names and the functions of one schema."""

    def __init__(self) -> None:
        self.consts: list[Any] = []
        self.count = 0
        self.functions: list[list[str]] = []

    def k(self, value: Any) -> str:
        self.consts.append(value)
        return f"K[{len(self.consts) - 1:d}]"

    def name(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count:d}"

    def function(self, schema: Any, root: bool = False) -> str | None:
        """Writes a function checking ``x`` against ``schema``; its name, or
        None when there is nothing to check (never for the root)."""
        fname = "check" if root else self.name("f")
        body = _node(self, schema, "x", root=root, indent=1, loops=0)
        if not body and not root:
            return None
        self.functions.append([f"def {fname}(x):"] + _indent(body + ["return True"]))
        return fname


def _sub(w: _Writer, schema: Any, v: str, indent: int, loops: int) -> list[str]:
    """The lines checking ``v`` against a sub-schema: inline, or a call when deep."""
    if indent > _MAX_INDENT or loops > _MAX_LOOPS:
        fname = w.function(schema)
        return [f"if not {fname}({v}): return False"] if fname else []
    return _node(w, schema, v, indent=indent, loops=loops)


def _node(w: _Writer, schema: Any, v: str, root: bool = False, indent: int = 1, loops: int = 0) -> list[str]:
    """Lines (relative indentation) that ``return False`` unless ``v`` satisfies ``schema``."""
    if schema is True:
        return []
    if schema is False:
        return ["return False"]
    if not isinstance(schema, dict):
        raise Unsupported("schema node is not an object or a boolean")
    keys = [key for key in schema
            if not (key in _ANNOTATIONS or key.startswith("x-") or (root and key in _ROOT_ONLY))]
    for key in keys:
        if key not in _KEYWORDS:
            raise Unsupported(key)
    out: list[str] = []
    known = None  # the value's kind when ``type`` names one type (checked first)
    rest = [key for key in keys if key != "type"]
    i = 0
    if "type" in schema:
        value = schema["type"]
        names = value if isinstance(value, list) else [value]
        if not names or not all(isinstance(n, str) and n in _KIND_OF_TYPE for n in names):
            raise Unsupported("type")
        if names in (["number"], ["integer"]):
            # the type, then the bounds that follow it, one test of the class for both
            while i < len(rest) and rest[i] in _BOUNDS:
                i += 1
            written, exact = _bound_lines(w, schema, rest[:i], v)
            integral = [f"if not ({v}.is_finite() and {v} == {v}.to_integral_value()): return False"]
            other = (f"elif not is_integer({v}): return False" if names == ["integer"] else
                     f"elif not isinstance({v}, NUM) or isinstance({v}, bool): return False")
            if names == ["number"] and exact is None:
                out.append(f"if {v}.__class__ is not Decimal and (not isinstance({v}, NUM) or isinstance({v}, bool)):"
                           " return False")
                out += written
            else:
                decimal = (integral if names == ["integer"] else []) + (exact or [])
                out += [f"if {v}.__class__ is Decimal:"] + _indent(decimal) + [other]
                if exact is None:
                    out += written
                elif written:
                    out += ["else:"] + _indent(written)
        else:
            out.append(f"if not ({' or '.join(_type_test(n, v) for n in names)}): return False")
        if len(names) == 1:
            known = _KIND_OF_TYPE[names[0]]
    present: frozenset = frozenset()  # property names ``required`` has made sure of
    while i < len(rest):
        key = rest[i]
        kind = _KIND.get(key)
        if kind is not None and known is not None and kind != known:
            # the keyword applies to another type than the one required: it
            # holds; written for a throwaway writer only to refuse what is unsupported
            _keyword(_Writer(), schema, key, v, indent, loops, known, present)
            i += 1
            continue
        if key in _BOUNDS:
            group = [key]
            while i + len(group) < len(rest) and rest[i + len(group)] in _BOUNDS:
                group.append(rest[i + len(group)])
            out += _bounds(w, schema, group, v, known == "num")
            i += len(group)
            continue
        guarded = kind is not None and known is None
        lines = _keyword(w, schema, key, v, indent + guarded, loops, known, present)
        if key == "required":
            present = frozenset(schema[key])
        if lines and guarded:
            lines = [f"if {_guard(kind, v)}:"] + _indent(lines)
        out += lines
        i += 1
    return out


def _bound_lines(w: _Writer, schema: dict, group: list[str], v: str) -> tuple[list[str], list[str] | None]:
    """Consecutive numeric bounds: the tests with the bounds as written, and
    for a Decimal value with the int bounds as Decimals (the same exact
    comparison without a conversion on every call; None when no bound is an int)."""
    written = [f"if {_FAILS[key].format(v=v, k=w.k(schema[key]))}: return False" for key in group]
    if not any(type(schema[key]) is int for key in group):
        return written, None
    return written, [f"if {_FAILS[key].format(v=v, k=w.k(_as_decimal(schema[key])))}: return False" for key in group]


def _bounds(w: _Writer, schema: dict, group: list[str], v: str, is_number: bool) -> list[str]:
    """Consecutive numeric bounds of a value that may not be a number, or is one."""
    written, exact = _bound_lines(w, schema, group, v)
    if exact is None:
        return written if is_number else [f"if {_guard('num', v)}:"] + _indent(written)
    other = "else:" if is_number else f"elif isinstance({v}, NUM) and not isinstance({v}, bool):"
    return [f"if {v}.__class__ is Decimal:"] + _indent(exact) + [other] + _indent(written)


def _as_decimal(bound: Any) -> Any:
    return Decimal(bound) if type(bound) is int else bound


def _keyword(w: _Writer, schema: dict, key: str, v: str, indent: int, loops: int, known: str | None,
             present: frozenset) -> list[str]:
    """Lines for one keyword, the value already known to be of the keyword's
    kind (``known``: the kind ``type`` requires, already checked; ``present``:
    the properties ``required`` has already checked)."""
    is_str = "" if known == "str" else f"isinstance({v}, str) and "
    value = schema[key]
    if key in _FAILS:
        return [f"if {_FAILS[key].format(v=v, k=w.k(value))}: return False"]
    if key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise Unsupported("required")
        return [f"if not {w.k(frozenset(value))} <= {v}.keys(): return False"] if value else []
    if key == "enum":
        if not isinstance(value, list):
            raise Unsupported("enum")
        if all(isinstance(o, str) for o in value):
            return [f"if not ({is_str}{v} in {w.k(frozenset(value))}): return False"]
        return [f"if not sure_in({v}, {w.k(tuple(value))}): return False"]
    if key == "const":
        if isinstance(value, str):
            return [f"if not ({is_str}{v} == {w.k(value)}): return False"]
        return [f"if not sure_equal({v}, {w.k(value)}): return False"]
    if key == "uniqueItems":
        return [f"if not sure_unique({v}): return False"] if value else []
    if key == "properties":
        if not isinstance(value, dict):
            raise Unsupported("properties")
        out = []
        for name, sub in value.items():
            item, k = w.name(), w.k(name)
            if name in present:
                lines = _sub(w, sub, item, indent, loops)
                out += [f"{item} = {v}[{k}]"] + lines if lines else []
                continue
            lines = _sub(w, sub, item, indent + 1, loops)
            if lines:
                out += [f"{item} = {v}.get({k}, MISSING)", f"if {item} is not MISSING:"] + _indent(lines)
        return out
    if key == "additionalProperties":
        props = schema.get("properties", {})
        if "patternProperties" in schema or not isinstance(props, dict):
            raise Unsupported("patternProperties")
        if value is True:
            return []
        if value is False:
            return [f"if not {v}.keys() <= {w.k(frozenset(props))}: return False"]
        if not isinstance(value, dict):
            raise Unsupported("additionalProperties")
        name, item = w.name("k"), w.name()
        if props:
            lines = _sub(w, value, item, indent + 2, loops + 1)
            body = [f"if {name} not in {w.k(frozenset(props))}:"] + _indent(lines) if lines else []
        else:
            body = _sub(w, value, item, indent + 1, loops + 1)
        return [f"for {name}, {item} in {v}.items():"] + _indent(body) if body else []
    if key == "prefixItems":
        if not isinstance(value, list):
            raise Unsupported("prefixItems")
        size = w.name("n")
        out = []
        for i, sub in enumerate(value):
            item = w.name()
            lines = _sub(w, sub, item, indent + 1, loops)
            if lines:
                out += [f"if {size} > {i:d}:", f"    {item} = {v}[{i:d}]"] + _indent(lines)
        return [f"{size} = len({v})"] + out if out else []
    if key == "items":
        prefix = schema.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise Unsupported("prefixItems")
        n = len(prefix)
        if value is False:
            return [f"if len({v}) > {n:d}: return False"]
        item = w.name()
        lines = _sub(w, value, item, indent + 1, loops + 1)
        if not lines:
            return []
        return [f"for {item} in {v}[{n:d}:]:" if n else f"for {item} in {v}:"] + _indent(lines)
    raise Unsupported(key)


# ------------------------------------------------------------ audit, compile, cache

_GENERATED = re.compile(r"[vkfn][0-9]+|check|x|K")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NOT_AN_INDEX = re.compile(r"(?<![A-Za-z_0-9])[0-9]+[.eEjJxXoObB_]|(?<![A-Za-z_0-9\])])\.[0-9]")
_ALLOWED = frozenset(keyword.kwlist) | frozenset(_NAMESPACE) | frozenset(
    {"__class__", "is_finite", "to_integral_value", "keys", "get", "items"})


def _audit(source: str) -> None:
    """Refuse a source holding a quote (so no string literal of any kind), a
    number other than a plain integer, or a word that is not a Python keyword,
    a helper of the namespace, a method used here or a generated name: a bug
    in the generator, never a property of a schema. (A scan, not a tokenizer:
    it runs for every schema.)"""
    if "'" in source or '"' in source:
        raise AssertionError("generated pre-check holds a quote")
    if _NOT_AN_INDEX.search(source):
        raise AssertionError("generated pre-check holds a number literal")
    for word in set(_WORD.findall(source)) - _ALLOWED:
        if not _GENERATED.fullmatch(word):
            raise AssertionError(f"generated pre-check names {word[:40]!r}")


def generate(schema: Mapping[str, Any]) -> tuple[str, tuple]:
    """The source of ``check`` for ``schema`` and its constants ``K``
    (raises :class:`Unsupported` for a schema outside the supported subset)."""
    w = _Writer()
    w.function(schema, root=True)
    source = "\n".join(line for f in w.functions for line in f) + "\n"
    _audit(source)
    return source, tuple(w.consts)


def compile_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled pre-check of ``schema`` (None when it uses an unsupported
    keyword, or is nested too deep to generate)."""
    try:
        source, consts = generate(schema)
    except (Unsupported, RecursionError):
        return None
    namespace = dict(_NAMESPACE, K=consts)
    exec(compile(source, "<schema pre-check>", "exec"), namespace)
    return namespace["check"]


_FAST: dict[int, tuple[Any, Callable[[Any], bool] | None]] = {}


def fast_check_for(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The pre-check of ``schema``, compiled once per schema object."""
    key = id(schema)
    hit = _FAST.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    check = compile_check(schema)
    _FAST[key] = (schema, check)
    return check
