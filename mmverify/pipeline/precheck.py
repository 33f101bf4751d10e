"""The schema pre-check: one generated Python function per artifact schema.
It answers True only when every keyword certainly holds, else False or None
(jsonschema then decides alone). The keywords it models and the test written
for each are in :mod:`.precheck_keywords`.

Design notes: docs/architecture.md, `mmverify/pipeline/precheck.py`.
"""
from __future__ import annotations

import keyword
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, Callable, Mapping

from mmverify.pipeline.precheck_keywords import (_ANNOTATIONS, _BOUNDS, _CONTAINER, _FAILS, _KIND, _KIND_OF_TYPE,
                                                 Unsupported, _as_decimal, _guard, _is_container, _keys, _subschemas,
                                                 _type_fails, _types)
from mmverify.pipeline.precheck_runtime import NAMESPACE

# ------------------------------------------------------------ the generator

def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


# a shorter array of objects is checked by its item loop alone (the column passes cost more)
_SHORT = 32

def _small(schema: dict) -> bool:
    """A sub-schema cheaper to write in place wherever it is used than to call:
    at most four sub-schemas, none with sub-schemas of its own."""
    subs = _subschemas(schema)
    return len(subs) <= 4 and not any(_is_container(sub) for sub in subs)


# so many properties with equal leaf schemas are checked in one loop (see _object_lines)
_GROUP = 4

# a sub-schema used once (or small) is written inside its parent's function, down to this
# depth (each level adds at most two indentation levels and one loop, well
# within Python's 100 and 20); deeper, or used more than once, it is a function
_MAX_DEPTH = 12


class _Writer:
    """Collects the constants and the functions of one schema."""

    def __init__(self) -> None:
        self.consts: list[Any] = []
        self.known: dict[tuple, str] = {}        # a string or number -> its constant
        self.functions: list[list[str]] = []
        self.names: dict[int, str | None] = {}   # schema form -> its function
        self.forms: dict[int, int] = {}          # id of a schema node -> its form
        self.texts: dict[str, int] = {}          # the text of a form -> its number
        self.uses: dict[int, int] = {}           # schema form -> parents naming it
        self.loops = 0                           # loops around the code being written

    def k(self, value: Any) -> str:
        """The name of a constant; one name per distinct string or number
        (by type and repr: ``1`` and ``1.0`` stay apart)."""
        key = (value.__class__, repr(value)) if value.__class__ in (str, Decimal, int, float) else None
        name = self.known.get(key) if key is not None else None
        if name is None:
            self.consts.append(value)
            name = f"c{len(self.consts) - 1:d}"
            if key is not None:
                self.known[key] = name
        return name

    def form(self, schema: Any) -> int:
        """A number equal for two schema nodes exactly when they check the
        same: the number of the repr of their keywords without annotations
        (which check nothing), sub-schemas by their own number. A repr of JSON
        values keeps strings quoted and Decimal, int, float and bool apart."""
        form = self.forms.get(id(schema))
        if form is not None:
            return form
        if schema.__class__ is dict and _CONTAINER.isdisjoint(schema):
            text = repr([item for item in schema.items() if not (item[0] in _ANNOTATIONS or item[0].startswith("x-"))])
        elif schema.__class__ is dict:
            parts = []
            for name, value in schema.items():
                if name in _ANNOTATIONS or name.startswith("x-"):
                    continue
                if name == "properties" and value.__class__ is dict:
                    value = [(n, self.form(sub)) for n, sub in value.items()]
                elif name == "prefixItems" and value.__class__ is list:
                    value = [self.form(sub) for sub in value]
                elif name in ("items", "additionalProperties"):
                    value = self.form(value)
                parts.append((name, value))
            text = repr(parts)
        else:
            text = repr(schema)
        form = self.forms[id(schema)] = self.texts.setdefault(text, len(self.texts))
        return form

    def count(self, schema: Any) -> None:
        """Counts the uses of every distinct container sub-schema (the
        sub-schemas of a repeated one are written once, with it)."""
        for sub in _subschemas(schema):
            if _is_container(sub):
                form = self.form(sub)
                self.uses[form] = self.uses.get(form, 0) + 1
                if self.uses[form] == 1:
                    self.count(sub)

    def function(self, schema: Any) -> str | None:
        """The name of a function checking every value ``x`` of an iterable
        against ``schema`` (None when every value satisfies it); one per
        distinct schema. It is given an array's items, or a 1-tuple."""
        form = self.form(schema)
        if form in self.names:
            return self.names[form]
        name = f"f{len(self.functions) + 1:d}"
        self.functions.append([])  # reserves the name
        loops, self.loops = self.loops, 1
        body = _lines(self, schema, "x", 0, False)
        self.loops = loops
        if body:
            self.functions[int(name[1:]) - 1] = [f"def {name}(s):", "    for x in s:"] + _indent(
                _indent(body)) + ["    return True"]
        self.names[form] = name if body else None
        return name if body else None


class _Call(str):
    """The name of the function checking a sub-schema (see :meth:`_Writer.function`)."""


def _sub(w: _Writer, schema: Any, v: str, depth: int) -> str | list[str] | None:
    """How ``v`` is checked against a sub-schema: a boolean expression true
    where it fails (a leaf), a :class:`_Call`, lines that ``return False``
    (written in place), or None where every value satisfies it."""
    if schema is True:
        return None
    if schema is False:
        return "True"
    keys = _keys(schema, root=False)
    if not _CONTAINER.isdisjoint(keys):
        if depth < _MAX_DEPTH and (w.uses.get(w.form(schema), 0) <= 1 or _small(schema)):
            return _lines(w, schema, v, depth, False) or None
        name = w.function(schema)
        return _Call(name) if name else None
    parts = _leaf_parts(w, schema, keys, v)[0]
    return " or ".join(parts) if parts else None


def _leaf_parts(w: _Writer, schema: dict, keys: list[str], v: str) -> tuple[list[str], str | None]:
    """Where each keyword of ``keys`` without sub-schemas fails (expressions
    without an ``or`` outside parentheses), and the kind of value ``type``
    requires (None: several or any)."""
    parts, known = [], None
    if "type" in keys:
        names = _types(schema)
        parts.append(_type_fails(names, v))
        if len(names) == 1:
            known = _KIND_OF_TYPE[names[0]]
    for key in keys:
        if key == "type" or key in _CONTAINER:
            continue
        kind = _KIND.get(key)
        if kind is not None and known is not None and kind != known:
            # the keyword applies to another type than the one required: it
            # holds; written for a throwaway writer only to refuse what is unsupported
            _keyword(_Writer(), schema, key, v, known)
            continue
        fails = _keyword(w, schema, key, v, known)
        if fails is None:
            continue
        if kind is not None and known is None:
            fails = f"({_guard(kind, v)} and {fails})"
        parts.append(fails)
    return parts, known


def _keyword(w: _Writer, schema: dict, key: str, v: str, known: str | None) -> str | None:
    """Where one keyword without sub-schemas fails, the value already known
    to be of the keyword's kind."""
    is_str = "" if known == "str" else f"{v}.__class__ is str and "
    value = schema[key]
    if key in _FAILS:
        return _FAILS[key].format(v=v, k=w.k(_as_decimal(value) if key in _BOUNDS else value))
    if key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise Unsupported("required")
        # a required property is read where its sub-schema is checked (a
        # missing one raises KeyError: unsure); the others are looked up here
        props = schema.get("properties")
        names = [n for n in dict.fromkeys(value) if not (props.__class__ is dict and n in props)]
        if len(names) > 3:
            return f"not {v}.keys() >= {w.k(frozenset(names))}"
        return f"({' or '.join(f'{w.k(n)} not in {v}' for n in names)})" if names else None
    if key == "enum":
        if not isinstance(value, list):
            raise Unsupported("enum")
        if all(isinstance(o, str) for o in value):
            return f"not ({is_str}{v} in {w.k(frozenset(value))})"
        return f"not sure_in({v}, {w.k(tuple(value))})"
    if key == "const":
        if isinstance(value, str):
            return f"not ({is_str}{v} == {w.k(value)})"
        return f"not sure_equal({v}, {w.k(value)})"
    if key == "uniqueItems":
        return f"not sure_unique({v})" if value else None
    raise Unsupported(key)


def _lines(w: _Writer, schema: Any, v: str, depth: int, root: bool) -> list[str]:
    """Lines that ``return False`` unless ``v`` satisfies ``schema``."""
    if schema is True:
        return []
    if schema is False:
        return ["return False"]
    if root:
        w.count(schema)
    keys = _keys(schema, root)
    parts, known = _leaf_parts(w, schema, keys, v)
    out = [f"if {' or '.join(parts)}: return False"] if parts else []
    required = frozenset(schema["required"]) if "required" in keys else frozenset()
    for kind, writer in (("dict", _object_lines), ("list", _array_lines)):
        mine = [key for key in keys if _KIND.get(key) == kind and key in _CONTAINER]
        if not mine:
            continue
        if known is not None and known != kind:
            writer(_Writer(), schema, mine, required, v, depth)  # refuses what is unsupported
            continue
        lines = writer(w, schema, mine, required, v, depth)
        if lines and known is None:
            # the keywords apply to any list or dict; checked on exactly the class the parser makes
            lines = [f"if {v}.__class__ is {kind}:"] + _indent(lines) + [f"elif {_guard(kind, v)}: return False"]
        out += lines
    return out


def _failing(check: str, v: str) -> str:
    """Where ``v`` fails ``check``, a leaf test or a call (see :func:`_sub`)."""
    return f"not {check}(({v},))" if isinstance(check, _Call) else check


def _fails(check: str | list[str], v: str) -> list[str]:
    """Lines that ``return False`` where ``v`` fails ``check`` (see :func:`_sub`)."""
    return [f"if {_failing(check, v)}: return False"] if isinstance(check, str) else check


_NONE = object()   # no filler
_HOLDS = {"minimum": lambda x, b: not x < b, "maximum": lambda x, b: not x > b,
          "exclusiveMinimum": lambda x, b: not x <= b, "exclusiveMaximum": lambda x, b: not x >= b}


def _filler(schema: Any) -> Any:
    """A value a leaf sub-schema certainly holds for (``_NONE``: none found):
    read in place of a missing optional property, its test passes as the
    property's absence does. Found for a type alone, a string, a number or
    an integer with Decimal bounds (a bound, a neighbour, 0, a bound rounded
    up or down, or a midpoint that every bound admits, compared as jsonschema compares), a string
    option of a string enum, null where the type admits it and only bounds
    or lengths (which never apply to null)."""
    if schema.__class__ is not dict or "type" not in schema:
        return _NONE
    names, others = _types(schema), [key for key in _keys(schema, root=False) if key != "type"]
    if "null" in names and all(key in _FAILS for key in others):
        return None
    if others and set(others) <= _HOLDS.keys() and names in (["number"], ["integer"]):
        bounds = [(key, _as_decimal(schema[key])) for key in others]
        if not all(b.__class__ is Decimal and b.is_finite() for _, b in bounds):
            return _NONE
        try:
            values = [b for _, b in bounds] + [b + d for _, b in bounds for d in (1, -1)] + [Decimal(0)] + [
                b.to_integral_value(rounding) for _, b in bounds for rounding in (ROUND_CEILING, ROUND_FLOOR)]
            values += [(b + c) / 2 for _, b in bounds for _, c in bounds]
        except ArithmeticError:
            return _NONE
        for x in values:
            if x.is_finite() and (names == ["number"] or x == x.to_integral_value()) and all(
                    _HOLDS[key](x, b) for key, b in bounds):
                return x
        return _NONE
    if others == ["enum"] and names == ["string"] and schema["enum"].__class__ is list:
        return next((o for o in schema["enum"] if o.__class__ is str), _NONE)
    if others:
        return _NONE
    return {"string": "", "number": Decimal(0), "integer": Decimal(0), "boolean": True}.get(names[0], _NONE) if len(
        names) == 1 else _NONE


def _object_lines(w: _Writer, schema: dict, keys: list[str], required: frozenset, v: str,
                  depth: int) -> list[str]:
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise Unsupported("properties")
    item, name_var = f"v{depth + 1:d}", f"k{depth + 1:d}"
    out = []
    if "properties" in keys:
        # code run once per value (in no loop): properties with equal leaf
        # schemas, all required or all optional, are checked in one loop (in a
        # loop, that inner loop would cost more than the code it saves)
        groups: dict[Any, list] = {}
        for name, sub in props.items():
            key = (name in required, w.form(sub)) if not (w.loops or _is_container(sub)) else name
            groups.setdefault(key, []).append((name, sub))
        for members in groups.values():
            if len(members) >= _GROUP:
                name, sub = members[0]
                check = _sub(w, sub, item, depth + 1)
                if check is None and name not in required:
                    continue
                k = w.k(tuple(name for name, _ in members))
                if check is None:
                    out += [f"for {name_var} in {k}:", f"    {v}[{name_var}]"]  # present, anything
                    continue
                if name in required:
                    out += [f"for {name_var} in {k}:", f"    {item} = {v}[{name_var}]"] + _indent(_fails(check, item))
                elif isinstance(check, str) and (filler := _filler(sub)) is not _NONE:
                    out += [f"for {name_var} in {k}:", f"    {item} = {v}.get({name_var}, {w.k(filler)})"] + _indent(
                        _fails(check, item))
                else:
                    out += [f"for {name_var} in {k}:", f"    if ({item} := {v}.get({name_var}, MISSING)) is not MISSING"
                                                       f" and ({_failing(check, item)}): return False"]
                continue
            for name, sub in members:
                check = _sub(w, sub, item, depth + 1)
                if check is None and name not in required:
                    continue
                k = w.k(name)
                if check is None:
                    out.append(f"{v}[{k}]")  # present, anything
                    continue
                if name in required:
                    out += [f"{item} = {v}[{k}]"] + _fails(check, item)
                elif isinstance(check, str) and (filler := _filler(sub)) is not _NONE:
                    out += [f"{item} = {v}.get({k}, {w.k(filler)})"] + _fails(check, item)
                elif isinstance(check, str):
                    out.append(f"if ({item} := {v}.get({k}, MISSING)) is not MISSING and ({_failing(check, item)}):"
                               " return False")
                else:
                    out += [f"{item} = {v}.get({k}, MISSING)", f"if {item} is not MISSING:"] + _indent(check)
    if "additionalProperties" in keys:
        value = schema["additionalProperties"]
        if "patternProperties" in schema:
            raise Unsupported("patternProperties")
        if value is False:
            out.append(f"if not {w.k(frozenset(props))}.issuperset({v}): return False")
        elif value is not True:
            if not isinstance(value, dict):
                raise Unsupported("additionalProperties")
            w.loops += 1
            check = _sub(w, value, item, depth + 1)
            w.loops -= 1
            if check is not None and props:
                out += [f"for {name_var}, {item} in {v}.items():", f"    if {name_var} not in {w.k(frozenset(props))}:"]
                out += _indent(_indent(_fails(check, item)))
            elif isinstance(check, _Call):
                out.append(f"if not {check}({v}.values()): return False")
            elif check is not None:
                out += [f"for {item} in {v}.values():"] + _indent(_fails(check, item))
    return out


def _array_lines(w: _Writer, schema: dict, keys: list[str], required: frozenset, v: str,
                 depth: int) -> list[str]:
    prefix = schema.get("prefixItems", [])
    if not isinstance(prefix, list):
        raise Unsupported("prefixItems")
    item, size = f"v{depth + 1:d}", f"n{depth + 1:d}"
    out = []
    if "prefixItems" in keys:
        for i, sub in enumerate(prefix):
            check = _sub(w, sub, item, depth + 1)
            if check is not None:
                out += [f"if {size} > {i:d}:", f"    {item} = {v}[{i:d}]"] + _indent(_fails(check, item))
        out = [f"{size} = len({v})"] + out if out else []
    if "items" in keys:
        value, n = schema["items"], len(prefix)
        if value is False:
            return out + [f"if len({v}) > {n:d}: return False"]
        w.loops += 1
        check = _sub(w, value, item, depth + 1)
        w.loops -= 1
        if check is None:
            return out
        items = f"{v}[{n:d}:]" if n else v
        loop = ([f"if not {check}({items}): return False"] if isinstance(check, _Call) else
                [f"for {item} in {items}:"] + _indent(_fails(check, item)))
        longest = schema.get("maxItems")
        # (an array never long enough for the column passes is not given them)
        plan = None if type(longest) is int and longest - n < _SHORT else _shortcut(_rows_plan, value)
        if plan is not None:
            out += [f"if len({items}) < {_SHORT:d} or not rows({items}, {w.k(plan)}):"] + _indent(loop)
        else:
            out += loop
    return out


_COLUMN_KEYS = {"number": {"type", *_BOUNDS}, "integer": {"type", *_BOUNDS},
                "string": {"type", "enum", "minLength", "maxLength"}}


def _column_spec(schema: Any) -> tuple | None:
    """The spec ``precheck_runtime.column`` checks for a simple leaf schema (None: not one)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    kind = schema["type"]
    keys = [key for key in _keys(schema, root=False) if key != "type"]
    if kind not in _COLUMN_KEYS or not set(keys) <= _COLUMN_KEYS[kind]:
        return None
    lows = tuple((_as_decimal(schema[key]), key == "exclusiveMinimum") for key in keys
                 if key in ("minimum", "exclusiveMinimum"))
    highs = tuple((_as_decimal(schema[key]), key == "exclusiveMaximum") for key in keys
                  if key in ("maximum", "exclusiveMaximum"))
    if not all(type(b) in (Decimal, float) for b, _ in lows + highs):
        return None
    options = lengths = None
    if "enum" in keys:
        if not isinstance(schema["enum"], list) or not all(isinstance(o, str) for o in schema["enum"]):
            return None
        options = frozenset(schema["enum"])
    if "minLength" in keys or "maxLength" in keys:
        shortest, longest = schema.get("minLength", 0), schema.get("maxLength")
        if type(shortest) is not int or not (longest is None or type(longest) is int):
            return None
        lengths = (shortest, longest)
    return kind, lows, highs, options, lengths


def _shortcut(make: Callable[[Any], tuple | None], schema: Any) -> tuple | None:
    # a sub-schema outside the subset is refused where its own test is written
    try:
        return make(schema)
    except Unsupported:
        return None


def _rows_plan(schema: Any) -> tuple | None:
    """The plan ``precheck_runtime.rows`` checks for an object schema whose checked
    properties are all required simple leaves (None: not one)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    keys = _keys(schema, root=False)
    required, props = schema.get("required", []), schema.get("properties", {})
    if not set(keys) <= {"type", "required", "properties"} or not isinstance(props, dict) or not (
            isinstance(required, list) and all(isinstance(n, str) for n in required)):
        return None
    plan = []
    for name in dict.fromkeys(required):
        sub = props.get(name, True)
        spec = None if sub is True or (isinstance(sub, dict) and not _keys(sub, root=False)) else _column_spec(sub)
        if spec is None and sub is not True and _keys(sub, root=False):
            return None
        plan.append((name, spec))
    for name, sub in props.items():
        if name not in required and not (sub is True or (isinstance(sub, dict) and not _keys(sub, root=False))):
            return None
    return tuple(plan) if plan else None


# ------------------------------------------------------------ audit, compile, cache

_GENERATED = re.compile(r"f[0-9]+|[cvkn][0-9]+|check|x|s")
_ALLOWED = frozenset(keyword.kwlist) | frozenset(NAMESPACE) | frozenset(
    {"__class__", "is_finite", "same_quantum", "to_integral_value", "keys", "get", "items", "values", "issuperset"})
# every ASCII character that cannot be part of a name, a number or an attribute access
_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c in "_.")})


def _audit(source: str) -> None:
    """Refuse a source holding a quote (so no string literal of any kind), a
    character outside ASCII, a number other than a plain integer, or a word
    that is not a Python keyword, a helper of the namespace, a method used
    here or a generated name: a bug in the generator, never a property of a
    schema. (A scan, not a tokenizer: it runs for every schema.)"""
    if "'" in source or '"' in source:
        raise AssertionError("generated pre-check holds a quote")
    if not source.isascii():
        raise AssertionError("generated pre-check holds a character outside ASCII")
    for token in set(source.translate(_SEPARATORS).split()):
        if token.isdigit():
            continue  # an index or a position
        for part in token.split("."):  # a name, then the attributes read from it
            if not part or part[0].isdigit():
                raise AssertionError("generated pre-check holds a number literal")
            if part not in _ALLOWED and not _GENERATED.fullmatch(part):
                raise AssertionError(f"generated pre-check names {part[:40]!r}")


def generate(schema: Mapping[str, Any]) -> tuple[str, tuple]:
    """The source of ``check`` for ``schema`` and its constants (``c<i>`` is the i-th)
    (raises :class:`Unsupported` for a schema outside the supported subset).
    ``check`` answers False where a test raises (a value it cannot compare is
    one it is unsure of)."""
    w = _Writer()
    body = _lines(w, schema, "x", 0, root=True)
    check = ["def check(x):", "    try:"] + _indent(_indent(body + ["return True"])) + [
        "    except Exception:", "        return False"]
    source = "\n".join(line for f in w.functions + [check] for line in f) + "\n"
    _audit(source)
    return source, tuple(w.consts)


def compile_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled pre-check of ``schema`` (None when it uses an unsupported
    keyword, or is nested too deep to generate)."""
    try:
        source, consts = generate(schema)
    except (Unsupported, RecursionError):
        return None
    namespace = dict(NAMESPACE)
    namespace.update((f"c{i:d}", value) for i, value in enumerate(consts))
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
