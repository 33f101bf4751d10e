"""The all-pass check decides rows in place (an identity's sides written out
with Python's operators under the exact context, a range, integer, domain or
order comparison written out): it must answer exactly when every hard
instance passes. With usable values everywhere it answers if and only if the
instances all pass, and whenever it answers, the verified paths are the
report's. Values are drawn at and around the gates' constants, far out in
exponent, as ints and Fractions (terminating or not, small or with huge
denominators), and now and then not usable at all (NaN, infinities, a
boolean, text, null)."""
from __future__ import annotations

import dataclasses
import decimal
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.gatekit import gate, lab_task, with_gates
from tests.helpers.hostile.strategies import fuzz_settings

from mmverify.reading.artifact import parse_file
from mmverify.gates import compile_gates, evaluate_gates
from mmverify.gates.identity import compile_identity, pair_holds
from mmverify.gates.identity_decimal import compile_decimal_check
from mmverify.gates.quick import hard_gates_pass
from mmverify.gates.quickcode import usable
from mmverify.replay import gate_view, run_replay
from mmverify.tasks import load_all

SCALARS = {"x": "result.x", "y": "result.y", "z": "result.z", "w": "result.w"}
ITEMS = {"v": "result.items[*].value", "l": "result.items[*].low", "h": "result.items[*].high"}

SCALAR_EXPRS = [
    "x == y + z", "x <= y", "x > y", "x * y >= z", "x == 2", "-x < 2.5e-3 * y ** 3 - w",
    "(x - y) ** 2 * ((x - y) ** 2 - 1) >= 0",
    "((x - y) ** 2 + z ** 2 - 99/100 * (w * x) ** 2) * ((x - y) ** 2 + z ** 2 - 101/100 * (w * x) ** 2) <= 0",
    "((x - 17800) * (z - y) - y * (w - x)) ** 2 <= 1/10000 * ((x - 17800) ** 2 + y ** 2) * ((w - x) ** 2 + (z - y) ** 2)",
    "x ** 0 + y == 1", "x / y >= z", "x == 1/3 * y", "(x + y) ** 3 >= (x + y) ** 2 * z",
]
LIST_EXPRS = ["l <= v", "v <= h", "v == 2", "x >= v", "(v - l) ** 2 >= x * h", "v * l == h + x", "v - l > 1/3"]
TOLERANCES = [None, "0.001", "0.5", "1e-30"]
WIDE = decimal.Context(prec=200)
CONSTANTS = [Fraction(0), Fraction(1), Fraction(2), Fraction(-1), Fraction(17800), Fraction(99, 100),
             Fraction(101, 100), Fraction(1, 3), Fraction(5, 2), Fraction(1, 1000)]


def _identity(gid: str, expr: str, pool: dict[str, str], tol: str | None) -> dict:
    names = {n: p for n, p in pool.items() if n in _names(expr)}
    spec = gate(gid, "identity", expr=expr, vars=names)
    if tol is not None:
        spec.update(tolerance=tol, tolerance_reason="rounded in the statement")
    return spec


def _names(expr: str) -> set[str]:
    return set(re.findall(r"(?<![0-9.eE])[A-Za-z_][A-Za-z0-9_]*", expr))


@st.composite
def number(draw, unusable: bool = True):
    """A number near a constant (a few units in some place away, with trailing
    zeros, negative zero), far out in exponent, an int, a Fraction; with
    ``unusable``, now and then a value no gate reads as a number."""
    kind = draw(st.integers(0, 9 if unusable else 8))
    base = draw(st.sampled_from(CONSTANTS))
    if kind == 0:
        return Decimal(base.numerator) / Decimal(base.denominator) if base.denominator != 3 else Decimal("0.3333")
    if kind == 1:
        step = Decimal(f"1E{-draw(st.integers(0, 40))}")
        start = Decimal(base.numerator) / Decimal(base.denominator)
        return WIDE.add(start, WIDE.multiply(draw(st.integers(-3, 3)), step))
    if kind == 2:
        return Decimal(f"{draw(st.sampled_from(['1', '-1', '9.5', '-3.25', '1.0000']))}E{draw(st.integers(-300, 300))}")
    if kind == 3:
        return draw(st.sampled_from([Decimal("-0"), Decimal("0.000"), Decimal("-0E+5"), Decimal("1.000")]))
    if kind == 4:
        return draw(st.one_of(st.integers(-3, 3), st.integers(-10**40, 10**40)))
    if kind == 5:
        return base + Fraction(draw(st.integers(-3, 3)), draw(st.sampled_from([3, 7, 1000, 2**60, 2**700])))
    if kind == 6:
        return Fraction(draw(st.integers(-10**6, 10**6)), draw(st.sampled_from([1, 2, 4, 5, 8, 10, 1024, 10**6])))
    if kind in (7, 8):
        return draw(st.decimals(allow_nan=False, allow_infinity=False, places=draw(st.integers(0, 6)),
                                min_value=-10**5, max_value=10**5))
    return draw(st.sampled_from([Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"), Decimal("sNaN"),
                                 True, False, None, "1.5", [], {}]))


def _all_usable(values) -> bool:
    return all(usable(v) for v in values)


def _agree(task, data, replayed=None, both_sided: bool = True) -> None:
    """hard_gates_pass answers only when every hard instance passes, with the
    report's verified paths; with ``both_sided``, it answers whenever they do."""
    prior = decimal.getcontext()
    quick = hard_gates_pass(task, gate_view(data, replayed), replayed)
    assert decimal.getcontext() is prior           # the exact context is the check's own
    report = evaluate_gates(task, data, replayed)
    hard = [i for i in report.instances if i.scored]   # hard and claim gates
    passed = all(i.verdict == "pass" for i in hard)
    if quick is not None:
        assert passed, [(i.name, i.verdict, i.reason) for i in hard if i.verdict != "pass"]
        assert quick.verified() == report.verified()
    if both_sided:
        assert (quick is not None) == passed, [(i.name, i.verdict, i.reason) for i in hard if i.verdict != "pass"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


@given(expr=st.sampled_from(SCALAR_EXPRS), tol=st.sampled_from(TOLERANCES),
       values=st.tuples(number(), number(), number(), number()))
@fuzz_settings(400)
def test_identity_rows_in_place_decide_as_the_instances(lab, expr, tol, values):
    task = with_gates(lab, _identity("g", expr, SCALARS, tol))
    data = {"result": dict(zip("xyzw", values))}
    _agree(task, data, both_sided=_all_usable(values))


@given(expr=st.sampled_from(LIST_EXPRS), tol=st.sampled_from(TOLERANCES), x=number(),
       rows=st.lists(st.tuples(number(), number(), number()), min_size=1, max_size=4))
@fuzz_settings(300)
def test_identity_rows_over_a_list_decide_as_the_instances(lab, expr, tol, x, rows):
    pool = dict(ITEMS, x="result.x")
    task = with_gates(lab, _identity("g", expr, pool, tol))
    items = [{"value": v, "low": lo, "high": hi} for v, lo, hi in rows]
    data = {"result": {"x": x, "items": items}}
    _agree(task, data, both_sided=_all_usable([x, *(v for row in rows for v in row)]))


SMALL = [Decimal(0), Decimal("0.0"), Decimal(1), Decimal("1.000"), 1, 0, Fraction(1), Fraction(1, 2), Decimal("0.5"),
         Decimal(2), Decimal("2.5"), Decimal("-1"), Decimal("-1.0000000000000000000000000000001"), Fraction(5, 2),
         Decimal("2.5000000000000000000000000000001"), Decimal("0.001"), Decimal("-0.001")]
values_near = st.one_of(st.sampled_from(SMALL), number())


@st.composite
def form_gates(draw):
    """One range, integer, finite-domain or order gate, with a value or a list
    to read (equal neighbours and values at the bounds are common)."""
    form = draw(st.sampled_from(["range", "range_list", "integer", "integer_list", "domain", "domain_list",
                                 "order"]))
    strict = draw(st.booleans())
    tol = draw(st.sampled_from(TOLERANCES))
    extra = {} if tol is None else {"tolerance": tol, "tolerance_reason": "rounded in the statement"}
    x = draw(values_near)
    nums = draw(st.lists(values_near, min_size=1, max_size=4))
    label = draw(st.sampled_from(["Plan A", "plan  a", " PLAN A ", "Plan B", "none", "FY1", "fy1", "2", "0.5"]))
    if form == "range":
        spec = gate("g", "range", path="result.x", min="-1", max="2.5", min_strict=strict, max_strict=not strict,
                    **extra)
    elif form == "range_list":
        spec = gate("g", "range", path="result.nums[*]", min="0", min_strict=strict, **extra)
    elif form == "integer":
        spec = gate("g", "integer", path="result.x", binary=strict)
    elif form == "integer_list":
        spec = gate("g", "integer", path="result.nums[*]", binary=strict)
    elif form == "domain":
        spec = gate("g", "finite_domain", path="result.label" if strict else "result.x",
                    values=["Plan A", "FY1", "2", "0.5"])
    elif form == "domain_list":
        spec = gate("g", "finite_domain", path="result.nums[*]", values=["0", "1", "-1"])
    else:
        spec = gate("g", "order", path="result.nums[*]", strict=strict, **extra)
    return spec, {"result": {"x": x, "nums": nums, "label": label}}


@given(case=form_gates())
@fuzz_settings(400)
def test_range_integer_domain_and_order_in_place_decide_as_the_instances(lab, case):
    spec, data = case
    _agree(with_gates(lab, spec), data, both_sided=_all_usable([data["result"]["x"], *data["result"]["nums"]]))


@given(x=number(unusable=False), y=number(unusable=False))
@fuzz_settings(200)
def test_a_label_or_number_domain_in_place_decides_as_the_instances(lab, x, y):
    task = with_gates(lab, gate("d", "finite_domain", path="result.x", values=["2", "0.5", "1", "Plan A"]),
                      gate("dl", "finite_domain", path="result.nums[*]", values=["0", "1", "-1"]))
    _agree(task, {"result": {"x": x, "nums": [y, x]}})


# ------------------------------------------------------------- replayed values

TASKS = {t.id: t for t in load_all()}
REPLAY_TASKS = sorted(tid for tid, t in TASKS.items() if run_replay(t, parse_file(t.oracle_path).data) is not None)
ORACLES = {tid: parse_file(TASKS[tid].oracle_path).data for tid in REPLAY_TASKS}
REPLAYED = {tid: run_replay(TASKS[tid], ORACLES[tid]) for tid in REPLAY_TASKS}


@st.composite
def replayed_values(draw):
    """A replay task's oracle with its replayed values (Fractions) moved: kept,
    a little off, non-terminating, with a huge power-of-two denominator, or
    another value near one of its own."""
    tid = draw(st.sampled_from(REPLAY_TASKS))
    report = REPLAYED[tid]
    names = sorted(report.values)
    values = dict(report.values)
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=6, unique=True)):
        v = values[draw(st.sampled_from(names))] if draw(st.booleans()) else values[name]
        values[name] = draw(st.sampled_from([
            v, v + Fraction(1, 10**6), v - Fraction(1, 10**6), v + Fraction(1, 3), v * Fraction(1, 3),
            v + Fraction(1, 2**700), v - Fraction(1, 2), v + Fraction(1, 2), -v, Fraction(0)]))
    return TASKS[tid], ORACLES[tid], dataclasses.replace(report, values=values)


@given(case=replayed_values())
@fuzz_settings(200)
def test_replayed_fractions_in_place_decide_as_the_instances(case):
    task, data, replayed = case
    _agree(task, data, replayed)


# ------------------------------------------------------------- plain cases

def test_the_exact_context_is_restored_when_the_check_declines_or_fails(lab):
    task = with_gates(lab, _identity("g", "x * x == y", SCALARS, None))
    prior = decimal.getcontext()
    for data in ({"result": {"x": Decimal(3), "y": Decimal(9)}}, {"result": {"x": Decimal(3), "y": Decimal(8)}},
                 {"result": {"x": "3", "y": Decimal(9)}}, {"result": {"x": Decimal("1E+200"), "y": Decimal(1)}}):
        _agree(task, data, both_sided=_all_usable(data["result"].values()))
        assert decimal.getcontext() is prior


RANGE = dict(path="result.x", min="-1", max="2.5")
TOL = dict(tolerance="0.5", tolerance_reason="rounded in the statement")
DOMAIN = dict(values=["Plan A", "FY1", "2", "0.5"])


@pytest.mark.parametrize("spec,value,want", [
    (gate("g", "range", **RANGE, max_strict=True), Decimal("2.5"), False),
    (gate("g", "range", **RANGE, max_strict=True), Decimal("2.4999999999999999999999999999999"), True),
    (gate("g", "range", **RANGE), Decimal("2.50000"), True), (gate("g", "range", **RANGE), Fraction(5, 2), True),
    (gate("g", "range", **RANGE, min_strict=True), Decimal("-1.0"), False),
    (gate("g", "range", **RANGE, min_strict=True), Fraction(-1), False), (gate("g", "range", **RANGE), -1, True),
    (gate("g", "range", **RANGE, max_strict=True, **TOL), Decimal(3), False),
    (gate("g", "range", **RANGE, max_strict=True, **TOL), Decimal("2.9999999999999999999999999999999"), True),
    (gate("g", "range", **RANGE, **TOL), Fraction(-3, 2), True), (gate("g", "range", **RANGE, **TOL), Decimal("-1.5001"), False),
    (gate("g", "integer", path="result.x"), Decimal("2.0"), True),
    (gate("g", "integer", path="result.x"), Decimal("2.5"), False),
    (gate("g", "integer", path="result.x"), Fraction(4, 2), True),
    (gate("g", "integer", path="result.x"), Fraction(1, 2), False),
    (gate("g", "integer", path="result.x"), Decimal("1E+300"), True),
    (gate("g", "integer", path="result.x"), Decimal("1E-300"), False),
    (gate("g", "integer", path="result.x"), 7, True),
    (gate("g", "integer", path="result.x", binary=True), Decimal("1.000"), True),
    (gate("g", "integer", path="result.x", binary=True), Decimal("-0"), True),
    (gate("g", "integer", path="result.x", binary=True), Fraction(1), True),
    (gate("g", "integer", path="result.x", binary=True), 2, False),
    (gate("g", "finite_domain", path="result.label", **DOMAIN), "none", False),
    (gate("g", "finite_domain", path="result.label", **DOMAIN), "Plan B", False),
    (gate("g", "finite_domain", path="result.label", **DOMAIN), " plan  A", True),
    (gate("g", "finite_domain", path="result.label", **DOMAIN), "FY1", True),
    (gate("g", "finite_domain", path="result.label", **DOMAIN), "fy1 ", True),
    (gate("g", "finite_domain", path="result.x", **DOMAIN), Decimal("0.50"), True),
    (gate("g", "finite_domain", path="result.x", **DOMAIN), Fraction(1, 2), True),
    (gate("g", "finite_domain", path="result.x", **DOMAIN), Decimal("0.5000001"), False),
    (gate("g", "finite_domain", path="result.x", **DOMAIN), 2, True),
])
def test_range_integer_and_domain_values_at_the_edges(lab, spec, value, want):
    task = with_gates(lab, spec)
    data = {"result": {"label": value} if isinstance(value, str) else {"x": value}}
    _agree(task, data)
    assert (hard_gates_pass(task, data) is not None) == want


@pytest.mark.parametrize("strict,nums,want", [
    (True, [Decimal(1), Decimal("1.0")], False), (False, [Decimal(1), Decimal("1.0"), Fraction(1)], True),
    (True, [0, Decimal("0.5"), Fraction(2, 3), 1], True), (False, [Decimal(2), Decimal("1.9999999999999999999999999999999")], False),
    (True, [Decimal(5)], True),
])
def test_order_of_a_list_at_the_edges(lab, strict, nums, want):
    task = with_gates(lab, gate("g", "order", path="result.nums[*]", strict=strict))
    data = {"result": {"nums": nums}}
    _agree(task, data)
    assert (hard_gates_pass(task, data) is not None) == want


@pytest.mark.parametrize("expr,tol,values,want", [
    ("x == y + z", "0.001", ("1.001", "0.5", "0.5"), True), ("x == y + z", "0.001", ("0.999", "0.5", "0.5"), True),
    ("x == y + z", "0.001", ("1.0010000000000000000000000000000001", "0.5", "0.5"), False),
    ("x <= y", "0.5", ("2.5", "2", "0"), True), ("x < y", "0.5", ("2.5", "2", "0"), False),
    ("x >= y", "0.5", ("1.5", "2", "0"), True), ("x > y", "0.5", ("1.5", "2", "0"), False),
    ("x * y >= z", "1e-30", ("1", "1", "1.000000000000000000000000000001"), True),
    ("x * y >= z", "1e-30", ("1", "1", "1.0000000000000000000000000000011"), False),
    ("x <= y", "0.001", ("1E+300", "1E+300", "0"), True), ("x == y", "0.001", ("1E-300", "-1E-300", "0"), True),
])
def test_rows_at_the_tolerance_edge(lab, expr, tol, values, want):
    task = with_gates(lab, _identity("g", expr, SCALARS, tol))
    data = {"result": dict(zip("xyz", map(Decimal, values)))}
    _agree(task, data)
    assert (hard_gates_pass(task, data) is not None) == want


@pytest.mark.parametrize("expr,values,want", [
    ("x ** 0 + y == 1", (Decimal(0), Decimal(0)), True),         # Decimal 0 ** 0 is undecided: the pairs say 1
    ("x * x * x * x == y", (Decimal("1E+30000"), Decimal("1E+120000")), True),   # past EXACT's 100,000 digits
    ("x * x == y", (Decimal("1.00000000000000000000000000001"), Decimal("1.00000000000000000000000000002")), False),
    ("x - y == 0", (Decimal("-0"), Decimal("0")), True),
    ("x == y", (Decimal("0.1"), Fraction(1, 10)), True),
    ("x + y == 1", (Fraction(1, 3), Fraction(2, 3)), True),
    ("x + y <= 1", (Decimal("0.5"), Fraction(1, 2) + Fraction(1, 2**700)), False),
])
def test_edge_rows_in_place(lab, expr, values, want):
    task = with_gates(lab, _identity("g", expr, SCALARS, None))
    data = {"result": dict(zip("xy", values))}
    _agree(task, data)
    assert (hard_gates_pass(task, data) is not None) == want


@pytest.mark.parametrize("expr", [
    "(x - y) ** 2 * ((x - y) ** 2 - 1) >= 0", "((x - 2) ** 2 + y ** 2 - 3 * (x * y) ** 2) * ((x - 2) ** 2 + y ** 2) <= 0.5",
    "(x * y) ** 2 - (x * y) ** 3 + (x * y) ** 2 == x", "-(x - y) ** 2 < (y - x) ** 2 + 1",
])
@given(x=number(unusable=False), y=number(unusable=False), tol=st.sampled_from(["0", "0.001", "1e-30"]))
@fuzz_settings(60)
def test_decimal_check_with_shared_parts_equals_the_exact_relation(expr, x, y, tol):
    # a part written twice is computed once, a square as a product: the same exact verdict
    holds = compile_decimal_check(expr, ["x", "y"])
    relation, evaluate = compile_identity(expr, ["x", "y"])
    tol_f = Fraction(Decimal(tol))
    got = holds((x, y), tol_f)
    if isinstance(x, Fraction) or isinstance(y, Fraction):
        assert got is None
    elif got is not None:
        assert got == pair_holds(relation, *evaluate([Fraction(x), Fraction(y)]), tol_f)


@given(values=st.lists(st.one_of(number(), st.text(max_size=3)), max_size=6), labels=st.booleans())
@fuzz_settings(300)
def test_all_usable_is_usable_of_every_value(values, labels):
    from mmverify.gates.quickcode import all_usable

    assert all_usable(values, labels) == all(usable(v, labels) for v in values)


@st.composite
def chains_and_sums(draw):
    """An order chain of single values or a partition of single values (a
    total read or constant), on values that are often equal or sum exactly."""
    pool = [Decimal(1), Decimal("1.0"), 1, Fraction(1), Decimal("0.5"), Fraction(1, 2), Decimal(2), Fraction(1, 3),
            Decimal("0.3333333333333333333333333333333"), Decimal("1E-300"), Decimal("-0")]
    x, y, z, w = (draw(st.one_of(st.sampled_from(pool), number())) for _ in range(4))
    tol = draw(st.sampled_from(TOLERANCES))
    extra = {} if tol is None else {"tolerance": tol, "tolerance_reason": "rounded in the statement"}
    if draw(st.booleans()):
        spec = gate("g", "order", paths=["result.x", "result.y", "result.z"], strict=draw(st.booleans()), **extra)
    elif draw(st.booleans()):
        spec = gate("g", "partition_sum", parts=["result.x", "result.y", "result.z"], total="result.w", **extra)
    else:
        spec = gate("g", "partition_sum", parts=["result.x", "result.y"], total_value=draw(st.sampled_from(["1", "2.5", "0"])),
                    **extra)
    return spec, {"result": {"x": x, "y": y, "z": z, "w": w}}


@given(case=chains_and_sums())
@fuzz_settings(300)
def test_chains_and_partitions_of_single_values_in_place_decide_as_the_instances(lab, case):
    spec, data = case
    _agree(with_gates(lab, spec), data, both_sided=_all_usable(data["result"].values()))


@pytest.mark.parametrize("spec,values,want", [
    (gate("g", "order", paths=["result.x", "result.y", "result.z"], strict=True), (1, Decimal("1.0"), 2), False),
    (gate("g", "order", paths=["result.x", "result.y", "result.z"]), (1, Decimal("1.0"), Fraction(1)), True),
    (gate("g", "order", paths=["result.x", "result.y", "result.z"]), (1, Decimal("2"), Fraction(3, 2)), False),
    (gate("g", "partition_sum", parts=["result.x", "result.y"], total="result.z"),
     (Decimal("0.1"), Decimal("0.2"), Decimal("0.3")), True),
    (gate("g", "partition_sum", parts=["result.x", "result.y"], total="result.z"),
     (Fraction(1, 3), Decimal("0.5"), Fraction(5, 6)), True),          # a Fraction and a Decimal: the form's own check
    (gate("g", "partition_sum", parts=["result.x", "result.y"], total="result.z"),
     (Decimal("1E+300"), Decimal("1E-300"), Decimal("1E+300")), False),   # the sum needs 601 digits: exact
    (gate("g", "partition_sum", parts=["result.x", "result.y"], total_value="1", tolerance="0.001",
          tolerance_reason="rounded"), (Decimal("0.5"), Decimal("0.501"), 0), True),
    (gate("g", "partition_sum", parts=["result.x", "result.y"], total_value="1", tolerance="0.001",
          tolerance_reason="rounded"), (Decimal("0.5"), Decimal("0.5010000000000000000000000000001"), 0), False),
])
def test_chains_and_partitions_at_the_edges(lab, spec, values, want):
    task = with_gates(lab, spec)
    data = {"result": dict(zip("xyz", values))}
    _agree(task, data)
    assert (hard_gates_pass(task, data) is not None) == want


def _replayed_bounds():
    for tid in REPLAY_TASKS:
        for g in compile_gates(TASKS[tid]):
            if g.hard and g.form == "range" and g.inputs[0].segments[0] == "$replay":
                name = g.inputs[0].text[len("$replay."):]
                for bound in (g.lower, g.upper):
                    if bound is not None:
                        for step in (0, Fraction(1, 10**9), -Fraction(1, 10**9)):
                            yield tid, name, bound.value + step


@pytest.mark.parametrize("tid,name,value", list(_replayed_bounds()))
def test_replayed_values_at_and_beside_a_range_bound(tid, name, value):
    replayed = dataclasses.replace(REPLAYED[tid], values=dict(REPLAYED[tid].values, **{name: value}))
    _agree(TASKS[tid], ORACLES[tid], replayed)


@given(nums=st.lists(st.one_of(st.sampled_from([Decimal("0.5"), 1, Fraction(1, 2), Decimal("0.25")]), number()),
                     max_size=4),
       x=st.one_of(st.sampled_from([Decimal(0), Decimal("0.5"), 1]), number()),
       w=st.one_of(st.sampled_from([Decimal(1), Decimal("1.5"), Decimal(2), 0]), number()),
       tol=st.sampled_from(TOLERANCES), ranged=st.booleans(), first=st.booleans())
@fuzz_settings(300)
def test_partitions_over_a_list_in_place_decide_as_the_instances(lab, nums, x, w, tol, ranged, first):
    # an empty list of parts adds none; a list a range also reads must not be empty
    extra = {} if tol is None else {"tolerance": tol, "tolerance_reason": "rounded in the statement"}
    summed = gate("g", "partition_sum", parts=["result.nums[*]", "result.x"], total="result.w", **extra)
    specs = [summed]
    if ranged:
        specs.insert(0 if first else 1, gate("r", "range", path="result.nums[*]", min="-5"))
    data = {"result": {"nums": nums, "x": x, "w": w}}
    _agree(with_gates(lab, *specs), data, both_sided=_all_usable([x, w, *nums]) and (bool(nums) or not ranged))


@pytest.mark.parametrize("values", [
    ("ab", 10**6, Decimal(1)), ([1], 10**6, Decimal(1)), (True, Decimal(2), Decimal(1)),
    (Decimal("Infinity"), Decimal(2), Decimal(1)), (None, 3, 1), ({"a": 1}, 2, 1), (Decimal("NaN"), 1, 1),
])
def test_values_not_usable_never_reach_the_arithmetic(lab, values):
    # text or a list times a large int would be a large repetition: such a value is declined first
    task = with_gates(lab, gate("r", "range", path="result.z", min="0"), _identity("g", "x * y >= z", SCALARS, None))
    data = {"result": dict(zip("xyz", values))}
    _agree(task, data, both_sided=False)
    assert hard_gates_pass(task, data) is None


class _Arithmetic:
    """A value whose arithmetic must never run: it is not usable."""

    def _refuse(self, *_):
        raise AssertionError("arithmetic on a value that is not usable")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __pow__ = __neg__ = __abs__ = _refuse


@pytest.mark.parametrize("expr", ["x * y >= z", "(x - y) ** 2 >= z", "x + y == z", "-x <= z"])
def test_arithmetic_runs_on_usable_values_only(lab, expr):
    task = with_gates(lab, gate("r", "range", path="result.z", min="0"), _identity("g", expr, SCALARS, None))
    data = {"result": {"x": _Arithmetic(), "y": Decimal(2), "z": Decimal(1)}}
    assert hard_gates_pass(task, data) is None
