"""The generated schema pre-check (mmverify.pipeline.precheck) is one-sided: it answers
True only where jsonschema, with the exact number types, finds no error.

* every anchor schema gets a pre-check, True on its oracle and never True on a
  mutated oracle or an arbitrary value that jsonschema rejects;
* on random schemas of the supported keywords it agrees with jsonschema both
  ways (the only unsure cases, container enum options and uniqueItems over
  mixed items, are left out there and tested by hand);
* on long arrays of objects, where the column passes run first, it agrees with
  jsonschema both ways (booleans equal to 0 and 1, ints, floats, infinities,
  missing keys and items that are no objects among the rows);
* equal sub-schemas share one function, and only equal ones;
* each keyword, failing alone, makes it answer False;
* schema text is data: code in property names or enum values is never in the
  generated source, which holds no string literal at all.
"""
from __future__ import annotations

import math
import os
import tokenize
from decimal import Decimal
from io import StringIO

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.hostile import CANARY, CODE_STRINGS, dump
from tests.helpers.hostile.strategies import fuzz_settings, json_values, mutated_oracle, planted
from mmverify.reading.artifact import ArtifactError, parse_bytes, parse_file
from mmverify.pipeline.precheck import Unsupported, _audit, compile_check, fast_check_for, generate
from mmverify.tasks import load_all, load_task
from mmverify.pipeline.validate import exact_validator_class, validate_artifact

TASKS = [load_task(t.id) for t in load_all()]


def jsonschema_valid(schema, data) -> bool:
    return not any(True for _ in exact_validator_class()(schema).iter_errors(data))


def check_of(schema):
    check = compile_check(schema)
    assert check is not None, schema
    return check


# ------------------------------------------------------------------ anchors

@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_anchor_schema_has_a_precheck_true_on_its_oracle(task):
    check = fast_check_for(task.artifact_schema)
    assert check is not None
    assert check(parse_file(task.oracle_path).data) is True
    assert fast_check_for(task.artifact_schema) is check  # compiled once per schema


@fuzz_settings(150)
@given(st.one_of(mutated_oracle(TASKS).map(lambda c: (c[0], c[1])), planted(TASKS)))
def test_anchor_precheck_true_only_when_jsonschema_finds_no_error(case):
    task, data = case
    try:
        art = parse_bytes(dump(data).encode("utf-8"), source="fuzz")
    except ArtifactError:
        return
    verdict = fast_check_for(task.artifact_schema)(art.data)
    assert verdict in (True, False)
    if verdict:
        assert jsonschema_valid(task.artifact_schema, art.data)


@fuzz_settings(100)
@given(st.sampled_from(TASKS), json_values)
def test_anchor_precheck_on_arbitrary_values(task, value):
    if fast_check_for(task.artifact_schema)(value):
        assert jsonschema_valid(task.artifact_schema, value)


# ------------------------------------------------------------------ random schemas

TYPES = ["number", "integer", "string", "boolean", "null", "array", "object"]
NAMES = ["a", "b", "c"]
options = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from(
    [Decimal("1.5"), Decimal("2"), Decimal("2.0"), "a", "b", ""]))
bounds = st.one_of(st.integers(-2, 3), st.sampled_from([Decimal("0.5"), Decimal("-1.5"), Decimal("2.0")]))
lengths = st.integers(0, 3)


def shuffled(d: dict):
    return st.permutations(list(d.items())).map(dict)


def nodes(children):
    return st.fixed_dictionaries({}, optional={
        "type": st.one_of(st.sampled_from(TYPES), st.lists(st.sampled_from(TYPES), min_size=1, max_size=3,
                                                               unique=True)),
        "minimum": bounds, "maximum": bounds, "exclusiveMinimum": bounds, "exclusiveMaximum": bounds,
        "minLength": lengths, "maxLength": lengths, "minItems": lengths, "maxItems": lengths,
        "required": st.lists(st.sampled_from(NAMES), unique=True, max_size=3),
        "enum": st.lists(options, max_size=4), "const": options,
        "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
        "additionalProperties": children, "prefixItems": st.lists(children, max_size=3), "items": children,
        "description": st.just("annotation"), "x-unit": st.just("m"),
    }).flatmap(shuffled)


schemas = st.recursive(st.one_of(st.booleans(), nodes(st.just({}))), nodes, max_leaves=6)
instances = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 3).map(Decimal), st.integers(-2, 3),
              st.sampled_from([Decimal("2.0"), Decimal("1.5"), Decimal("0.5"), "a", "b", "", "abcd"])),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.sampled_from(NAMES + ["z"]), c, max_size=4)),
    max_leaves=10)


def checked(schema):
    """A drawn schema (a bare boolean made the items of an array) and its pre-check."""
    schema = schema if isinstance(schema, dict) else {"items": schema}
    return schema, check_of(schema)


@fuzz_settings(400)
@given(schemas, st.lists(instances, min_size=1, max_size=6))
def test_random_schemas_agree_with_jsonschema(schema, values):
    schema, check = checked(schema)
    for value in values:
        assert check(value) == jsonschema_valid(schema, value), (schema, value)


@fuzz_settings(100)
@given(schemas, st.lists(st.one_of(instances, json_values), min_size=1, max_size=6))
def test_random_schemas_one_sided_on_arbitrary_values(schema, values):
    schema, check = checked(schema)
    for value in values:
        if check(value):
            assert jsonschema_valid(schema, value), (schema, value)


class LyingDict(dict):
    """An object whose items read otherwise than its storage holds."""
    def __getitem__(self, key):
        return "lie"

    def __contains__(self, key):
        return True


class LyingList(list):
    def __iter__(self):
        return iter(["lie"] * (len(self) + 1))

    def __len__(self):
        return 0


class LyingStr(str):
    def __len__(self):
        return 99

    def __eq__(self, other):
        return False

    __hash__ = str.__hash__


def lying(value):
    """``value`` with every object, array and string replaced by a subclass
    that reads otherwise (jsonschema counts them as of the type, and reads
    them through the overridden methods)."""
    if isinstance(value, dict):
        return LyingDict({k: lying(v) for k, v in value.items()})
    if isinstance(value, list):
        return LyingList(lying(v) for v in value)
    if isinstance(value, str):
        return LyingStr(value)
    return value


@fuzz_settings(300)
@given(schemas, st.lists(instances, min_size=1, max_size=6))
def test_random_schemas_one_sided_on_subclassed_containers(schema, values):
    # an API caller may pass any object: a subclass never gets a True that jsonschema would not give
    schema, check = checked(schema)
    for value in map(lying, values):
        if check(value):
            assert jsonschema_valid(schema, value), (schema, value)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_anchor_precheck_is_unsure_of_subclassed_containers(task):
    data = parse_file(task.oracle_path).data
    assert fast_check_for(task.artifact_schema)(lying(data)) is False


leaf_bounds = st.one_of(bounds, st.sampled_from([Decimal("1E-9"), Decimal("2.5"), Decimal("-0.25"), Decimal("1E+30"), 2.5]))
typed_leaves = st.fixed_dictionaries(
    {"type": st.one_of(st.sampled_from(["number", "integer"]), st.sampled_from(TYPES[:5]),
                       st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True))},
    optional={"minimum": leaf_bounds, "maximum": leaf_bounds, "exclusiveMinimum": leaf_bounds,
              "exclusiveMaximum": leaf_bounds, "minLength": lengths, "maxLength": lengths,
              "enum": st.lists(options, max_size=3), "description": st.just("d")}).flatmap(shuffled)


@fuzz_settings(400)
@given(typed_leaves, st.lists(instances, max_size=3))
def test_a_filler_holds_where_an_optional_leaf_is_missing(leaf, others):
    # the value read in place of a missing optional property satisfies its leaf schema
    from mmverify.pipeline.precheck import _NONE, _filler

    filler = _filler(leaf)
    if filler is not _NONE:
        assert jsonschema_valid(leaf, filler), (leaf, filler)
        assert check_of(leaf)(filler) is True, (leaf, filler)
    # and an object missing the property gets jsonschema's verdict, with or without other properties
    schema = {"type": "object", "properties": {"a": leaf, "b": leaf, "c": {"type": "string"}}}
    for value in [{}] + [{"b": v} for v in others] + [{"c": "x", "b": v} for v in others]:
        assert check_of(schema)(value) == jsonschema_valid(schema, value), (schema, value)


@pytest.mark.parametrize("leaf", [
    {"type": "string"}, {"type": "string", "enum": [None, Decimal(1), "b", "a"]}, {"type": "number"},
    {"type": "integer"}, {"type": "boolean"}, {"type": ["string", "null"], "minLength": 2},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": Decimal("0.5")},
    {"type": "integer", "exclusiveMinimum": Decimal("1.5"), "maximum": 2}, {"type": "integer", "minimum": Decimal("0.5")},
    {"type": "number", "minimum": Decimal("1E+30")}, {"type": "number", "maximum": -3, "x-unit": "m"}])
def test_each_kind_of_filler_holds(leaf):
    from mmverify.pipeline.precheck import _NONE, _filler

    filler = _filler(leaf)
    assert filler is not _NONE and jsonschema_valid(leaf, filler), (leaf, filler)
    assert_sure({"type": "object", "properties": {"a": leaf}}, [{}, {"a": filler}], [{"a": []}])
    # no filler where none is sure to hold: the property's absence is then tested apart
    assert _filler({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}) is _NONE
    assert _filler({"type": "string", "enum": [D(1)]}) is _NONE and _filler({"minimum": 1}) is _NONE


def test_a_schema_nested_deeper_than_python_blocks_is_split_into_functions():
    schema: dict = {"type": "integer", "minimum": 1}
    value, bad = Decimal(3), Decimal(0)
    for i in range(60):
        schema = {"type": "array", "items": schema} if i % 2 else {"type": "object", "properties": {"k": schema}}
        value, bad = ([value] if i % 2 else {"k": value}), ([bad] if i % 2 else {"k": bad})
    source, _ = generate(schema)
    assert "def f" in source
    check = check_of(schema)
    assert check(value) is True and check(bad) is False
    assert jsonschema_valid(schema, value) and not jsonschema_valid(schema, bad)


# ------------------------------------------------------------------ long arrays of objects

D = Decimal
ROW = {"type": "object", "required": ["year", "kind", "name", "id", "area", "note"], "properties": {
    "year": {"type": "integer", "minimum": 2024, "maximum": 2030, "description": "d"},
    "kind": {"type": "string", "enum": ["single", "first"]},
    "name": {"type": "string", "minLength": 1, "maxLength": 4},
    "id": {"type": "integer", "minimum": 0, "maximum": 3},
    "area": {"type": "number", "exclusiveMinimum": 0, "maximum": D("99.5")},
    "note": {"x-unit": "none"}}}
LONG = {"type": "array", "items": ROW}
ODD = [True, False, 0, 1, 1.0, 2.5, 2024, 2024.0, D("2024.5"), D("2024.0"), D(0), D(1), D("-0"), D("1.0"),
       D("0.5"), D(3), D(4), D(2023), D(2030), D(2031), D("99.5"), D("99.51"), D("Infinity"), D("-Infinity"),
       "", "x", "abcde", "single", "Single", None, [], {}, [D(1)]]


def good_row(i: int) -> dict:
    return {"year": D(2024 + i % 7), "kind": "single" if i % 2 else "first", "name": f"A{i % 100}",
            "id": D(i % 4), "area": D(i % 90 + 1) / 4, "note": None}


edits = st.lists(st.tuples(st.integers(0, 79), st.sampled_from(sorted(ROW["properties"]) + ["extra", None]),
                           st.sampled_from(ODD + ["(delete)"])), max_size=3)


@fuzz_settings(300)
@given(st.integers(32, 80), edits)
def test_long_arrays_of_objects_agree_with_jsonschema(n, changes):
    # long enough for the column passes (rows), which must never change a verdict
    rows = [good_row(i) for i in range(n)]
    for i, name, value in changes:
        i %= n
        if name is None:
            rows[i] = value if value != "(delete)" else [rows[i]]   # the item itself is no object
        elif not isinstance(rows[i], dict):
            continue
        elif value == "(delete)":
            rows[i].pop(name, None)
        else:
            rows[i][name] = value
    assert check_of(LONG)(rows) == jsonschema_valid(LONG, rows), changes


def test_the_column_passes_decide_a_valid_long_array():
    from mmverify.pipeline.precheck import _rows_plan
    from mmverify.pipeline.precheck_runtime import rows

    plan = _rows_plan(ROW)
    assert [name for name, _ in plan] == ROW["required"]
    good = [good_row(i) for i in range(40)]
    assert rows(good, plan) is True and check_of(LONG)(good) is True
    # a boolean equal to 1 behind a Decimal 1 (a set would merge them): not sure
    for value in (True, False, 1, 1.5, "1", None):
        bad = [dict(r) for r in good]
        bad[30]["id"] = value
        assert rows(bad, plan) is False
    bad = [dict(r) for r in good] + ["not an object"]
    assert rows(bad, plan) is False and check_of(LONG)(bad) is False


def test_the_column_passes_are_unsure_of_subclassed_objects():
    # rows read an item's storage; an object that reads otherwise (jsonschema reads it through
    # its own __getitem__) is never passed, in a long plain list as in a lying one
    from mmverify.pipeline.precheck import _rows_plan
    from mmverify.pipeline.precheck_runtime import rows

    plan = _rows_plan(ROW)
    good = [good_row(i) for i in range(40)]
    for at in (0, 20, 39):
        items = list(good)
        items[at] = LyingDict(good[at])
        assert not jsonschema_valid(LONG, items)
        assert rows(items, plan) is False and check_of(LONG)(items) is False
    assert check_of(LONG)([LyingDict(r) for r in good]) is False


# ------------------------------------------------------------------ the column passes alone
#
# rows and column answer True only where every value certainly satisfies its
# leaf schema; certainly_fine says what that means, written apart from them.

def certainly_fine(value, leaf) -> bool:
    if leaf["type"] == "string":
        return (isinstance(value, str) and value in leaf.get("enum", [value])
                and leaf.get("minLength", 0) <= len(value) <= leaf.get("maxLength", len(value)))
    if isinstance(value, bool) or not isinstance(value, (Decimal, int, float)):
        return False
    if not (value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)):
        return False
    if leaf["type"] == "integer" and value != int(value):
        return False
    return (value >= leaf.get("minimum", value) and value <= leaf.get("maximum", value)
            and ("exclusiveMinimum" not in leaf or value > leaf["exclusiveMinimum"])
            and ("exclusiveMaximum" not in leaf or value < leaf["exclusiveMaximum"]))


@st.composite
def column_leaves(draw):
    """A leaf schema the column passes take (a plan of ``_rows_plan``), and
    values satisfying it."""
    kind = draw(st.sampled_from(["integer", "number", "string"]))
    if kind == "string":
        leaf = {"type": "string"}
        words = ["", "a", "ab", "single", "first"]
        if draw(st.booleans()):
            leaf["enum"] = draw(st.lists(st.sampled_from(words), min_size=1, max_size=4, unique=True))
        if draw(st.booleans()):
            leaf["minLength"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            leaf["maxLength"] = leaf.get("minLength", 0) + draw(st.integers(0, 5))
        good = st.sampled_from([w for w in leaf.get("enum", words) if certainly_fine(w, leaf)] or ["a"])
        return leaf, good
    # bounds around 0 and 1, where a boolean may hide behind an equal number
    lo = draw(st.integers(-2, 2))
    hi = lo + draw(st.integers(0, 4))
    leaf = {"type": kind}
    low, high = draw(st.sampled_from(["minimum", "exclusiveMinimum", None])), draw(
        st.sampled_from(["maximum", "exclusiveMaximum", None]))
    if low:
        leaf[low] = draw(st.sampled_from([lo, D(lo)])) if low == "minimum" else D(lo) - D("0.5")
    if high:
        leaf[high] = draw(st.sampled_from([hi, D(hi)])) if high == "maximum" else D(hi) + D("0.5")
    scale = 1 if kind == "integer" else 4
    return leaf, st.integers(lo * scale, hi * scale).map(lambda i: D(i) / scale)


# values no column may pass where its leaf does not hold: booleans, ints and
# floats, non-finite and non-integral Decimals, bounds' neighbours, strings of
# other lengths, null, and unhashable values
PLANTED = [True, False, 0, 1, -1, 1.0, 0.5, float("nan"), float("inf"), D("NaN"), D("-NaN"), D("sNaN"),
           D("Infinity"), D("-Infinity"), D("0.5"), D("-0.5"), D("1.0"), D("1E+1"), D("-0"), D(-3), D(3), D(7),
           D("2.00000000000000000000000000001"), "", "a", "ab", "single", "Single", "abcdefgh", None, [], {},
           [D(1)], {"k": D(1)}, [["a"]]]
NOT_OBJECTS = ["row", [], [{"year": D(2024)}], None, D(1), True]


@st.composite
def planted_rows(draw, nan=True):
    """Rows of an object schema with two to four required column leaves (and
    an unchecked property), then up to four planted values, deleted keys or
    items that are not objects."""
    count = draw(st.integers(1, 4))
    leaves = [draw(column_leaves()) for _ in range(count)]
    names = [f"c{i}" for i in range(count)]
    schema = {"type": "object", "required": names + ["free"],
              "properties": dict({n: leaf for n, (leaf, _) in zip(names, leaves)}, free={})}
    n = draw(st.integers(1, 70))
    items = [dict({name: draw(good) for name, (_, good) in zip(names, leaves)}, free=None) for _ in range(n)]
    pool = [v for v in PLANTED if nan or not (v.is_nan() if isinstance(v, Decimal) else v != v)]
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, n - 1))
        where = draw(st.sampled_from(names + ["free", None]))
        if where is None:
            items[i] = draw(st.sampled_from(NOT_OBJECTS))
        elif isinstance(items[i], dict):
            if where == "free" or draw(st.integers(0, 9)) == 0:
                items[i].pop(where, None)
            else:
                items[i][where] = draw(st.sampled_from(pool))
    return schema, items


def all_certainly_fine(schema, items) -> bool:
    return all(isinstance(item, dict) and "free" in item and all(
        name in item and certainly_fine(item[name], schema["properties"][name]) for name in schema["required"]
        if name != "free") for item in items)


@fuzz_settings(400)
@given(planted_rows())
def test_rows_and_column_never_pass_a_planted_value(case):
    from mmverify.pipeline.precheck import _rows_plan
    from mmverify.pipeline.precheck_runtime import column, rows

    schema, items = case
    plan = _rows_plan(schema)
    assert plan is not None and [name for name, _ in plan] == schema["required"]
    fine = all_certainly_fine(schema, items)
    verdict = rows(items, plan)
    assert verdict is fine or verdict is False, items
    # where nothing is planted the passes decide: a valid column of Decimals or strings is passed
    assert verdict is fine or not all(type(item) is dict for item in items) or any(
        type(item[name]) not in (Decimal, str) for item in items for name, spec in plan if spec and name in item)
    for name, spec in plan:
        if spec is None:
            continue
        values = [item[name] for item in items if isinstance(item, dict) and name in item]
        if column(values, spec):
            assert all(certainly_fine(v, schema["properties"][name]) for v in values), (name, values)


@fuzz_settings(200)
@given(planted_rows(nan=False))
def test_random_long_arrays_of_objects_agree_with_jsonschema(case):
    # the generated check with its column passes first, against jsonschema alone
    schema, items = case
    while len(items) < 32:
        items = items + items
    array = {"type": "array", "items": schema}
    assert check_of(array)(items) == jsonschema_valid(array, items), items


@pytest.mark.parametrize("kind", ["integer", "number", "string"])
@pytest.mark.parametrize("value", PLANTED + ["(delete)", "(not an object)"], ids=repr)
def test_a_planted_value_first_last_or_inside_is_never_passed(kind, value):
    from mmverify.pipeline.precheck import _column_spec, _rows_plan
    from mmverify.pipeline.precheck_runtime import column, rows

    leaf = {"string": {"type": "string", "enum": ["a", "single"], "minLength": 1, "maxLength": 6},
            "integer": {"type": "integer", "minimum": 0, "maximum": 2},
            "number": {"type": "number", "exclusiveMinimum": -1, "maximum": 2}}[kind]
    good = ["a", "single"] if kind == "string" else [D(0), D(1), D(2)]
    schema = {"type": "object", "required": ["v"], "properties": {"v": leaf}}
    plan, spec = _rows_plan(schema), _column_spec(leaf)
    base = [{"v": good[i % len(good)]} for i in range(40)]
    assert rows(base, plan) is True and column([r["v"] for r in base], spec) is True
    for at in (0, 17, 39):
        items = [dict(r) for r in base]
        if value == "(delete)":
            del items[at]["v"]
        elif value == "(not an object)":
            items[at] = [items[at]]
        else:
            items[at]["v"] = value
        fine = value not in ("(delete)", "(not an object)") and certainly_fine(value, leaf)
        # a fine value other than a Decimal or a string (an int, a float) may leave them unsure
        expected = (False,) if not fine else (True,) if type(value) in (Decimal, str) else (True, False)
        assert rows(items, plan) in expected
        if value not in ("(delete)", "(not an object)"):
            assert column([r["v"] for r in items], spec) in expected


def test_a_value_that_cannot_be_compared_makes_the_precheck_unsure():
    check = check_of({"type": "number", "minimum": 0})
    assert check(D("NaN")) is False and check(D("sNaN")) is False and check(D(1)) is True


def test_equal_sub_schemas_share_one_function():
    leaves = {name: {"type": "number", "minimum": i} for i, name in enumerate("abcde")}
    shared = {"type": "object", "description": "one", "properties": dict(leaves, description={"type": "string"})}
    other = {"type": "object", "description": "two", "properties": dict(leaves, description={"type": "string"})}
    # differs from them only by the type of its property named "description"
    near = {"type": "object", "properties": dict(leaves, description={"type": "integer"})}
    schema = {"properties": {"p": shared, "q": other, "r": {"items": shared}, "s": near}}
    source, _ = generate(schema)
    assert source.count("def f") == 1
    ok = {"a": D(0), "b": D(1), "description": "text"}
    assert_sure(schema, [{"p": ok, "q": ok, "r": [ok, ok], "s": dict(ok, description=D(7))}],
                [{"s": ok}, {"q": dict(ok, b=D(0))}, {"r": [ok, dict(ok, description=D(1))]}])


# ------------------------------------------------------------------ keyword by keyword

def verdicts(schema, *values):
    check = check_of(schema)
    return [check(v) for v in values]


def assert_sure(schema, good, bad):
    """The pre-check says True for every ``good`` value and False for every
    ``bad`` one, and jsonschema agrees with both."""
    check = check_of(schema)
    for v in good:
        assert check(v) is True and jsonschema_valid(schema, v), (schema, v)
    for v in bad:
        assert check(v) is False and not jsonschema_valid(schema, v), (schema, v)


def test_type_number_is_exact_and_never_boolean():
    assert_sure({"type": "number"}, [D("1.5"), D(0), 7, 2.5], [True, False, "1", None, [], {}])


def test_type_integer_counts_integral_values():
    assert_sure({"type": "integer"}, [D("224"), D("224.0"), D("2.24E2"), 3, 224.0],
                [D("224.5"), D("Infinity"), D("NaN"), True, "224", 224.5, None])
    # with bounds: a Decimal against the bounds as Decimals, an int or a float as written
    assert_sure({"type": "integer", "minimum": 2, "maximum": 300}, [D("224.0"), D(2), 224, 224.0, 300.0],
                [D(1), D("300.00001"), D(301), 1, 1.0, 301.0, 2.5, True, False])


def test_other_types_and_type_lists():
    assert_sure({"type": "string"}, ["", "a"], [D(1), None, True])
    assert_sure({"type": "boolean"}, [True, False], [D(0), D(1), None, "true"])
    assert_sure({"type": "null"}, [None], [False, D(0), "", []])
    assert_sure({"type": "array"}, [[], [D(1)]], [{}, "[]", None])
    assert_sure({"type": "object"}, [{}, {"a": D(1)}], [[], None])
    assert_sure({"type": ["integer", "null"]}, [None, D(3), D("3.0")], [D("3.5"), True, "3", []])


@pytest.mark.parametrize("key,bound,good,bad", [
    ("minimum", 2, [D(2), D("2.0"), D(3), 2, 2.5], [D("1.999"), 1, 1.5]),
    ("maximum", D("2.5"), [D("2.5"), D(-7), 2], [D("2.51"), 3, 2.6]),
    ("exclusiveMinimum", 0, [D("1E-9"), 1, 0.5], [D(0), D("-0.0"), 0, -0.5]),
    ("exclusiveMaximum", D(10), [D("9.99"), 9], [D(10), D("10.00"), 10, 10.5]),
])
def test_each_bound_alone(key, bound, good, bad):
    assert_sure({key: bound}, good + ["text", True, None, [], {}], bad)
    # with a type that implies a number the guard is left out, the verdicts are the same
    assert_sure({"type": "number", key: bound}, good, bad)
    # a bound never applies to a boolean (not a number) nor a string
    assert_sure({"type": ["boolean", "string"], key: bound}, [True, False, "x"], [D(1), None])


def test_lengths_and_sizes():
    assert_sure({"minLength": 2}, ["ab", "abc", D(1), [D(1)]], ["a", ""])
    assert_sure({"maxLength": 2}, ["ab", "", [D(1), D(2), D(3)]], ["abc"])
    assert_sure({"minItems": 2}, [[1, 2], "a", {}], [[], [D(1)]])
    assert_sure({"maxItems": 1}, [[], [D(1)], "abc", {"a": 1, "b": 2}], [[D(1), D(2)]])


def test_required_and_properties():
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    assert_sure(schema, [{"a": D(1)}, {"a": D(1), "b": "x", "z": None}],
                [{}, {"b": "x"}, {"a": "1"}, {"a": D(1), "b": D(2)}, {"a": True}, []])
    # without a type: both apply to objects only
    assert_sure({"required": ["a"], "properties": {"a": False}}, [[], "a", D(1)], [{}, {"a": D(1)}])
    # properties before required in the schema: the same verdicts
    assert_sure({"properties": {"a": {"minimum": 1}}, "required": ["a"]}, [{"a": D(1)}], [{"a": D(0)}, {}])
    # a required property any value satisfies, required names that are no property, and many of them
    assert_sure({"type": "object", "required": ["a", "b"], "properties": {"a": {}, "c": True}},
                [{"a": None, "b": D(1)}, {"a": [], "b": "x", "c": D(2)}], [{"a": None}, {"b": D(1)}, {}])
    many = {"type": "object", "required": list("abcdef"), "properties": {"a": {"type": "string"}}}
    assert_sure(many, [dict.fromkeys("abcdef", "x")], [dict.fromkeys("abcde", "x"), dict.fromkeys("bcdef", "x")])
    grouped = {"type": "object", "required": list("abcde"), "properties": dict.fromkeys("abcde", {})}
    assert_sure(grouped, [dict.fromkeys("abcde")], [dict.fromkeys("abcd"), {}])


def test_enum_of_strings_and_of_mixed_types():
    assert_sure({"enum": ["first", "second"]}, ["first", "second"], ["third", "", D(1), None, ["first"]])
    assert_sure({"type": "string", "enum": ["first"]}, ["first"], ["First", D(1)])
    assert_sure({"enum": [D(1), "1", None, True]}, [D(1), D("1.0"), 1, "1", None, True],
                [D(2), False, "01", D(0), []])
    assert_sure({"enum": []}, [], [D(1), "a", None])
    # a container option: the pre-check is unsure (False), jsonschema decides
    schema = {"enum": [[D(1)], {"k": "v"}]}
    assert verdicts(schema, [D(1)], {"k": "v"}) == [False, False]
    assert validate_artifact(schema, [D("1.0")]) == () and validate_artifact(schema, {"k": "v"}) == ()


def test_const():
    assert_sure({"const": "M1"}, ["M1"], ["M2", D(1), None])
    assert_sure({"const": D(2)}, [D(2), D("2.00"), 2], [D(3), True, "2"])
    assert_sure({"const": False}, [False], [D(0), None, True])
    assert_sure({"const": None}, [None], [False, D(0), ""])


def test_unique_items():
    assert_sure({"uniqueItems": True}, [[], ["a", "b"], [D(1), D(2)], "aa"], [["a", "a"], [D(1), D("1.0")]])
    assert_sure({"uniqueItems": False}, [["a", "a"]], [])
    # objects or mixed types: unsure, jsonschema decides
    schema = {"uniqueItems": True}
    assert verdicts(schema, [{"a": D(1)}, {"a": D(2)}], [D(1), "1"]) == [False, False]
    assert validate_artifact(schema, [{"a": D(1)}, {"a": D(2)}]) == ()
    assert validate_artifact(schema, [{"a": D(1)}, {"a": D("1.0")}]) != ()


def test_prefix_items_and_items():
    schema = {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
    assert_sure(schema, [[], ["a"], ["a", D(2)], {}], [[D(1)], ["a", "b"], ["a", D(2), None]])
    schema = {"prefixItems": [{"type": "string"}], "items": {"type": "number", "minimum": 0}}
    assert_sure(schema, [["a"], ["a", D(1), D(0)]], [[D(1)], ["a", D(-1)], ["a", D(1), "b"]])
    assert_sure({"items": False}, [[], "x"], [[None]])
    assert_sure({"items": True, "prefixItems": [True, False]}, [[D(1)]], [[D(1), D(2)]])
    assert_sure({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                [[[D(1)], []]], [[[D("1.5")]], [D(1)]])


def test_additional_properties():
    schema = {"properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}}
    assert_sure(schema, [{"a": "x"}, {"a": "x", "b": D(1), "c": D("2.0")}, []],
                [{"a": D(1)}, {"b": "x"}, {"a": "x", "b": D("0.5")}])
    assert_sure({"properties": {"a": True}, "additionalProperties": False}, [{}, {"a": None}],
                [{"b": None}, {"a": D(1), "b": D(1)}])
    assert_sure({"additionalProperties": {"type": "null"}}, [{}, {"q": None}], [{"q": D(0)}])


def test_boolean_sub_schemas_and_annotations():
    assert_sure({"properties": {"a": False}}, [{}, {"b": D(1)}], [{"a": None}])
    assert_sure({"title": "t", "description": "d", "x-unit": "m", "default": 3, "properties": {
        "a": {"description": "d", "x-anything": {"oneOf": []}, "type": "integer"}}}, [{"a": D(1)}], [{"a": "1"}])


@pytest.mark.parametrize("schema", [
    {"pattern": "a"}, {"properties": {"a": {"oneOf": [{}]}}}, {"items": {"$ref": "#"}},
    {"type": "string", "properties": {"a": {"not": {}}}},          # even under a type that excludes it
    {"type": "number", "items": {"anyOf": []}},
    {"properties": {"a": {"$schema": "x"}}},                      # $schema and $id: at the root only
    {"type": "decimal"}, {"type": []}, {"required": "a"}, {"enum": "a"}, {"properties": []},
    {"additionalProperties": "no"}, {"prefixItems": {}}, {"items": 1},
    {"additionalProperties": False, "patternProperties": {"^a": {}}},
])
def test_unsupported_schema_gets_no_precheck(schema):
    with pytest.raises(Unsupported):
        generate(schema)
    assert compile_check(schema) is None


def test_validate_artifact_and_is_valid_still_name_errors():
    from mmverify.pipeline.validate import is_valid

    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer", "minimum": 1}}}
    assert validate_artifact(schema, {"a": D(2)}) == () and is_valid(schema, {"a": D(2)})
    errors = validate_artifact(schema, {"a": D(0)})
    assert [(e.field, e.keyword) for e in errors] == [("a", "minimum")] and not is_valid(schema, {"a": D(0)})


# ------------------------------------------------------------------ schema text is data

HOSTILE = list(CODE_STRINGS.values()) + [
    "__import__('os').system('x')", "a'b", 'a"b', "'''", '"""', "x\ny", "\\", "}); return True; ({",
]
# texts that read like the generated code itself: data all the same
LOOKALIKES = ["K[0]", "return True", "\n    return True\n", "x", "MISSING", "check"]


def string_tokens(source: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(StringIO(source).readline) if t.type == tokenize.STRING]


def test_code_in_property_names_and_enum_values_is_data():
    if os.path.exists(CANARY):
        os.unlink(CANARY)
    names = HOSTILE + LOOKALIKES
    schema = {"type": "object", "required": HOSTILE[:3],
              "properties": {name: {"enum": [name, "plain"]} for name in names},
              "additionalProperties": {"const": HOSTILE[0]}}
    source, consts = generate(schema)
    for text in HOSTILE:
        assert text not in source
    assert "'" not in source and '"' not in source and not string_tokens(source)
    assert set(names) <= set(consts)
    good = {name: name for name in names} | {"other": HOSTILE[0]}
    missing = {name: value for name, value in good.items() if name != HOSTILE[1]}
    assert_sure(schema, [good, {name: "plain" for name in HOSTILE[:3]}],
                [{name: name + " " for name in names}, {HOSTILE[0]: "plain"}, good | {"other": "plain"}, missing,
                 {"K[0]": "plain", "x": "K[0]"} | {name: "plain" for name in HOSTILE[:3]}])
    assert not os.path.exists(CANARY)


def test_code_in_bounds_and_types_is_refused_or_data():
    # a bound is a constant whatever its text; a type name is looked up, never written
    assert "__import__" not in generate({"minimum": "__import__('os')"})[0]
    with pytest.raises(Unsupported):
        generate({"type": "__import__('os').system('x')"})


def test_audit_refuses_a_literal_or_a_foreign_name():
    _audit("def check(x):\n    if x is None: return False\n    return True\n")
    with pytest.raises(AssertionError):
        _audit("def check(x):\n    return x == 'a'\n")
    with pytest.raises(AssertionError):
        _audit("def check(x):\n    return open(x)\n")
    with pytest.raises(AssertionError):
        _audit("def check(x):\n    return x == 1.5\n")
