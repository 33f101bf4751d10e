"""The six gate forms: exact verdicts (hypothesis: values on both sides of every
bound give the verdict exact comparison gives), [*] expansion, gaps, wrong
types, tolerance reporting, report shape."""
from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.helpers.gatekit import Str, data, gate, lab_task, no_floats, with_gates

from mmverify.gates import GateInstance, GateReport, compile_gates, evaluate_gates

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


def decimals(lo=-1000, hi=1000, places=4):
    return st.decimals(min_value=lo, max_value=hi, places=places, allow_nan=False, allow_infinity=False)


def text(d: Decimal) -> str:
    return format(d, "f")


def F(d) -> Fraction:
    return Fraction(Decimal(d) if isinstance(d, str) else d)


def one(report: GateReport) -> GateInstance:
    assert len(report.instances) == 1, report.instances
    return report.instances[0]


def near(anchor: st.SearchStrategy) -> st.SearchStrategy:
    """Values on both sides of (and exactly at) a bound."""
    return st.one_of(anchor, decimals(places=6))


# ------------------------------------------------------------------ range

@SETTINGS
@given(lo=decimals(), width=decimals(0, 50), x=decimals(-1100, 1100, 6), lo_strict=st.booleans(),
       hi_strict=st.booleans(), has_lo=st.booleans(), has_hi=st.booleans(), at=st.sampled_from([None, "lo", "hi"]))
def test_range_verdict_is_exact_comparison(lab, lo, width, x, lo_strict, hi_strict, has_lo, has_hi, at):
    assume(has_lo or has_hi)
    hi = lo + width
    assume(not (has_lo and has_hi and width == 0 and (lo_strict or hi_strict)))
    if at == "lo":
        x = lo
    elif at == "hi":
        x = hi
    spec = gate("g", "range", path="result.x")
    if has_lo:
        spec.update(min=text(lo), min_strict=lo_strict)
    if has_hi:
        spec.update(max=text(hi), max_strict=hi_strict)
    inst = one(evaluate_gates(with_gates(lab, spec), data(x=x)))
    ok = True
    if has_lo:
        ok &= F(x) > F(lo) if lo_strict else F(x) >= F(lo)
    if has_hi:
        ok &= F(x) < F(hi) if hi_strict else F(x) <= F(hi)
    assert inst.verdict == ("pass" if ok else "fail")
    assert inst.reason == (None if ok else "violated")
    assert inst.operands == (F(x),)
    assert inst.lower == (F(lo) if has_lo else None) and inst.upper == (F(hi) if has_hi else None)
    assert inst.values == (text(x) if x != 0 else "0",) or F(inst.values[0]) == F(x)


def test_range_detail_names_value_and_bound(lab):
    inst = one(evaluate_gates(with_gates(lab, gate("g", "range", path="result.x", min="60")), data(x="59.9")))
    assert inst.verdict == "fail" and "59.9" in inst.detail and "minimum 60" in inst.detail
    assert inst.headline().startswith("g (hard range) FAIL")


def test_range_strict_bound_is_honoured(lab):
    spec = gate("g", "range", path="result.x", min="0", min_strict=True)
    assert one(evaluate_gates(with_gates(lab, spec), data(x=0))).verdict == "fail"
    assert one(evaluate_gates(with_gates(lab, spec), data(x="0.000001"))).verdict == "pass"


# ---------------------------------------------------------------- integer

@SETTINGS
@given(x=st.one_of(decimals(-50, 50, 3), st.integers(-5, 5).map(Decimal)), binary=st.booleans())
def test_integer_verdict_is_exact(lab, x, binary):
    inst = one(evaluate_gates(with_gates(lab, gate("g", "integer", path="result.n", binary=binary)), data(n=x)))
    fx = F(x)
    ok = fx in (0, 1) if binary else fx.denominator == 1
    assert inst.verdict == ("pass" if ok else "fail")
    assert inst.binary is binary


def test_integer_accepts_integral_decimal_text(lab):
    spec = gate("g", "integer", path="result.n")
    assert one(evaluate_gates(with_gates(lab, spec), data(n=Decimal("224.0")))).verdict == "pass"
    assert one(evaluate_gates(with_gates(lab, spec), data(n=Decimal("224.0000001")))).verdict == "fail"


# ------------------------------------------------------------------ order

@SETTINGS
@given(xs=st.lists(decimals(-20, 20, 1), min_size=2, max_size=4), strict=st.booleans())
def test_order_chain_verdict_is_exact(lab, xs, strict):
    names = ["x", "y", "z", "w"][: len(xs)]
    spec = gate("g", "order", paths=[f"result.{n}" for n in names], strict=strict)
    inst = one(evaluate_gates(with_gates(lab, spec), data(**dict(zip(names, xs)))))
    ok = all((a < b) if strict else (a <= b) for a, b in zip(xs, xs[1:]))
    assert inst.verdict == ("pass" if ok else "fail")
    assert inst.operands == tuple(F(v) for v in xs)


@SETTINGS
@given(xs=st.lists(decimals(-5, 5, 0), min_size=1, max_size=6), strict=st.booleans())
def test_order_over_a_list_gives_one_instance_per_adjacent_pair(lab, xs, strict):
    spec = gate("g", "order", path="result.nums[*]", strict=strict)
    report = evaluate_gates(with_gates(lab, spec), data(nums=xs))
    assert len(report.instances) == len(xs) - 1
    for i, inst in enumerate(report.instances):
        a, b = F(xs[i]), F(xs[i + 1])
        assert inst.index == i and inst.paths == (f"result.nums[{i}]", f"result.nums[{i + 1}]")
        assert inst.verdict == ("pass" if (a < b if strict else a <= b) else "fail")


# --------------------------------------------------------------- identity

RELS = ["==", "<=", ">=", "<", ">"]


def holds(rel, a, b):
    return {"==": a == b, "<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[rel]


@SETTINGS
@given(a=decimals(-30, 30, 3), b=decimals(-30, 30, 3), c=decimals(-900, 900, 3), rel=st.sampled_from(RELS),
       exact=st.booleans())
def test_identity_verdict_is_exact(lab, a, b, c, rel, exact):
    if exact:
        c = a * b  # on the bound
    spec = gate("g", "identity", expr=f"x * y {rel} z", vars={"x": "result.x", "y": "result.y", "z": "result.z"})
    inst = one(evaluate_gates(with_gates(lab, spec), data(x=a, y=b, z=c)))
    lhs, rhs = F(a) * F(b), F(c)
    assert inst.verdict == ("pass" if holds(rel, lhs, rhs) else "fail")
    assert inst.lhs_value == lhs and inst.rhs_value == rhs
    assert inst.bindings == (("x", F(a)), ("y", F(b)), ("z", F(c)))
    assert inst.relation == rel


@SETTINGS
@given(a=decimals(-10, 10, 2), b=decimals(-10, 10, 2), rel=st.sampled_from(RELS))
def test_identity_polynomial_with_constants(lab, a, b, rel):
    spec = gate("g", "identity", expr=f"x**2 - 3*x*y/4 + 0.125 {rel} -y**3 + 1e-2",
                vars={"x": "result.x", "y": "result.y"})
    inst = one(evaluate_gates(with_gates(lab, spec), data(x=a, y=b)))
    x, y = F(a), F(b)
    lhs = x ** 2 - Fraction(3, 4) * x * y + Fraction(1, 8)
    rhs = -(y ** 3) + Fraction(1, 100)
    assert inst.verdict == ("pass" if holds(rel, lhs, rhs) else "fail")
    assert inst.lhs_value == lhs and inst.rhs_value == rhs


def test_identity_dragon_dance_case(lab):
    spec = gate("q5.handle_speed_limit", "identity", level="B", expr="v_head * ratio_max <= 2",
                vars={"v_head": "result.x", "ratio_max": "result.y"})
    task = with_gates(lab, spec)
    bad = one(evaluate_gates(task, data(x="1.406276", y="1.604793")))
    assert bad.verdict == "fail" and bad.reason == "violated"
    assert "1.406276 * 1.604793" in bad.detail and "2.256781880868 > 2" in bad.detail
    assert bad.lhs_value == Fraction(1406276, 10**6) * Fraction(1604793, 10**6) > 2
    good = one(evaluate_gates(task, data(x="1.246266", y="1.604793")))
    assert good.verdict == "pass" and good.lhs_value < 2


def test_identity_division_by_zero_is_a_fail(lab):
    spec = gate("g", "identity", expr="x / y <= 1", vars={"x": "result.x", "y": "result.y"})
    inst = one(evaluate_gates(with_gates(lab, spec), data(x=1, y=0)))
    assert inst.verdict == "fail" and inst.reason == "undefined"


def test_identity_pairs_list_vars_by_index_and_broadcasts_scalars(lab):
    spec = gate("g", "identity", expr="lo + d <= hi",
                vars={"lo": "result.items[*].low", "hi": "result.items[*].high", "d": "result.x"})
    items = [{"low": 1, "high": 3}, {"low": 2, "high": 2}, {"low": 0, "high": 10}]
    report = evaluate_gates(with_gates(lab, spec), data(items=items, x=1))
    assert [i.verdict for i in report.instances] == ["pass", "fail", "pass"]
    assert [i.index for i in report.instances] == [0, 1, 2]
    assert report.instances[1].paths == ("result.items[1].low", "result.items[1].high", "result.x")
    assert report.instances[1].name == "g[1]"


# ---------------------------------------------------------- finite_domain

LABELS = ["plan A", "Plan B", "c"]


@SETTINGS
@given(value=st.one_of(st.sampled_from(["plan a", "  PLAN   A ", "plan b", "C", "plan c", "A", "", "planA"]),
                       st.sampled_from(["1", "2", "2.0", "3", "0.5"]).map(Decimal)))
def test_finite_domain_labels_fold_and_numbers_compare_exactly(lab, value):
    spec = gate("g", "finite_domain", path="result.label", values=LABELS + ["1", "2"])
    inst = one(evaluate_gates(with_gates(lab, spec), data(label=value)))
    if isinstance(value, str):
        folded = " ".join(value.split()).casefold()
        ok = folded in {v.casefold() for v in LABELS + ["1", "2"]}
    else:
        ok = Fraction(value) in (1, 2)
    assert inst.verdict == ("pass" if ok else "fail")
    if ok:
        assert inst.member is not None and 0 <= inst.member < 5


def test_finite_domain_wrong_type_fails(lab):
    spec = gate("g", "finite_domain", path="result.label", values=["a"])
    for bad in (True, [1], {"a": 1}):
        inst = one(evaluate_gates(with_gates(lab, spec), data(label=bad)))
        assert inst.verdict == "fail" and inst.reason == "not_a_label"


# ---------------------------------------------------------- partition_sum

@SETTINGS
@given(parts=st.lists(decimals(0, 100, 2), min_size=0, max_size=6), total=decimals(0, 600, 2),
       exact=st.booleans(), tol=st.sampled_from([None, "0.01", "0.5"]))
def test_partition_sum_is_exact_with_optional_tolerance(lab, parts, total, exact, tol):
    if exact:
        total = sum(parts, Decimal(0))
    spec = gate("g", "partition_sum", parts="result.nums[*]", total="result.total")
    if tol:
        spec.update(tolerance=tol, tolerance_reason="rounded in the statement")
    inst = one(evaluate_gates(with_gates(lab, spec), data(nums=parts, total=total)))
    s = sum((F(p) for p in parts), Fraction(0))
    ok = abs(s - F(total)) <= (F(tol) if tol else 0)
    assert inst.verdict == ("pass" if ok else "fail")
    assert inst.parts_sum == s and inst.total == F(total)
    assert inst.tolerance == tol
    assert inst.tolerance_value == (F(tol) if tol else 0)


def test_partition_sum_list_of_paths_and_declared_total(lab):
    spec = gate("g", "partition_sum", parts=["result.x", "result.y", "result.z"], total_value="36")
    assert one(evaluate_gates(with_gates(lab, spec), data(x=13, y=12, z=11))).verdict == "pass"
    inst = one(evaluate_gates(with_gates(lab, spec), data(x=13, y=13, z=11)))
    assert inst.verdict == "fail" and "37 != total 36" in inst.detail


def test_partition_sum_per_element_when_the_total_is_a_list(lab):
    spec = gate("g", "partition_sum", parts=["result.items[*].low", "result.items[*].high"],
                total="result.items[*].value")
    items = [{"low": 1, "high": 2, "value": 3}, {"low": 1, "high": 2, "value": 4}]
    report = evaluate_gates(with_gates(lab, spec), data(items=items))
    assert [i.verdict for i in report.instances] == ["pass", "fail"]
    assert report.instances[1].parts == (1, 2) and report.instances[1].total == 4


# -------------------------------------------------------------- tolerance

def test_tolerance_is_part_of_the_predicate_and_reported(lab):
    spec = gate("g", "identity", expr="x == y", vars={"x": "result.x", "y": "result.y"}, tolerance="0.001",
                tolerance_reason="the statement rounds to three decimals")
    task = with_gates(lab, spec)
    inside = one(evaluate_gates(task, data(x="1.0005", y="1")))
    assert inside.verdict == "pass" and inside.tolerance == "0.001"
    assert "tolerance 0.001" in inside.detail and "rounds to three decimals" not in inside.detail
    assert inside.as_dict()["tolerance"] == "0.001"
    edge = one(evaluate_gates(task, data(x="1.001", y="1")))
    assert edge.verdict == "pass"
    outside = one(evaluate_gates(task, data(x="1.0010001", y="1")))
    assert outside.verdict == "fail"


def test_range_tolerance_widens_both_sides(lab):
    spec = gate("g", "range", path="result.x", min="0", max="1", tolerance="0.5", tolerance_reason="test")
    task = with_gates(lab, spec)
    assert [one(evaluate_gates(task, data(x=v))).verdict for v in ("-0.5", "1.5", "-0.51", "1.51")] == \
        ["pass", "pass", "fail", "fail"]


# --------------------------------------------------- expansion and gaps

def test_list_gate_expands_one_instance_per_element(lab):
    spec = gate("g", "range", path="result.items[*].value", min="0", max="1")
    items = [{"value": 0.5}, {"value": 2}, {}, {"value": None}, {"value": Str("0.5")}]
    report = evaluate_gates(with_gates(lab, spec), data(items=items))
    assert [(i.index, i.verdict, i.reason) for i in report.instances] == [
        (0, "pass", None), (1, "fail", "violated"), (2, "gap", "missing"), (3, "gap", "missing"),
        (4, "fail", "not_a_number")]
    assert report.instances[1].paths == ("result.items[1].value",)


@pytest.mark.parametrize("items,reason,verdict", [
    (None, "missing", "gap"), ([], "empty_list", "gap"), ({"a": 1}, "not_a_list", "fail"), ("x", "not_a_list", "fail")])
def test_absent_or_malformed_list_gives_one_witnessed_instance(lab, items, reason, verdict):
    spec = gate("g", "range", path="result.items[*].value", min="0")
    d = data() if items is None else data(items=items)
    inst = one(evaluate_gates(with_gates(lab, spec), d))
    assert (inst.verdict, inst.reason) == (verdict, reason)
    assert inst.paths == ("result.items[*].value",) and inst.index is None


@pytest.mark.parametrize("form,fields", [
    ("range", {"path": "result.x", "min": "0"}),
    ("integer", {"path": "result.x"}),
    ("order", {"paths": ["result.x", "result.y"]}),
    ("identity", {"expr": "x <= y", "vars": {"x": "result.x", "y": "result.y"}}),
    ("finite_domain", {"path": "result.x", "values": ["1"]}),
    ("partition_sum", {"parts": ["result.x"], "total": "result.y"}),
])
def test_absent_input_is_a_gap_never_a_pass(lab, form, fields):
    task = with_gates(lab, gate("g", form, **fields))
    for d in (data(y=1), data(x=None, y=1), {}, {"result": None}):
        inst = one(evaluate_gates(task, d))
        assert inst.verdict == "gap" and inst.reason == "missing", (d, inst)
        assert inst.operands == ()


@pytest.mark.parametrize("value", [Str("1.5"), True, False, [1], {"v": 1}, "NaN"])
def test_wrong_type_is_a_fail_not_a_number(lab, value):
    task = with_gates(lab, gate("g", "range", path="result.x", min="0"))
    inst = one(evaluate_gates(task, data(x=value)))
    assert inst.verdict == "fail" and inst.reason == "not_a_number"
    assert inst.operands == ()


def test_wrong_type_wins_over_absent(lab):
    task = with_gates(lab, gate("g", "order", paths=["result.x", "result.y"]))
    inst = one(evaluate_gates(task, data(x="text")))
    assert inst.verdict == "fail" and inst.reason == "not_a_number"


# ---------------------------------------------------------------- report

def test_report_counts_failures_and_summary(lab):
    task = with_gates(lab,
                      gate("h", "range", path="result.x", max="1"),
                      gate("s", "range", severity="soft", path="result.y", max="1"),
                      gate("gap", "range", path="result.z", max="1"),
                      gate("ok", "integer", path="result.n"))
    report = evaluate_gates(task, data(x=2, y=2, n=3))
    assert [i.gate_id for i in report.hard_failures] == ["h"]
    assert [i.gate_id for i in report.soft_failures] == ["s"]
    assert [i.gate_id for i in report.gaps] == ["gap"]
    c = report.counts
    assert (c["total"], c["pass"], c["fail"], c["gap"], c["hard_failures"]) == (4, 1, 2, 1, 1)
    assert c["by_form"]["range"] == {"pass": 0, "fail": 2, "gap": 1}
    assert c["by_form"]["integer"] == {"pass": 1, "fail": 0, "gap": 0}
    lines = report.summary_lines()
    assert lines[0].startswith("gates    4 instance(s): 1 pass, 2 fail (1 hard), 1 gap")
    assert len(lines) == 4 and any("h: 2 outside" in ln for ln in lines)


def test_as_dict_is_deterministic_json_without_floats_or_descriptions(lab):
    task = with_gates(lab,
                      gate("i", "identity", expr="x * y <= 2", vars={"x": "result.x", "y": "result.y"}),
                      gate("p", "partition_sum", parts="result.nums[*]", total_value="3"),
                      gate("d", "finite_domain", path="result.label", values=["a"]))
    d = data(x="1.5", y="1.5", nums=[1, 2], label="a")
    one_, two = evaluate_gates(task, d).as_dict(), evaluate_gates(task, d).as_dict()
    text = json.dumps(one_, sort_keys=True)
    assert text == json.dumps(two, sort_keys=True)
    assert no_floats(one_)
    assert "test gate" not in text  # descriptions stay out of the report
    inst = one_["instances"][0]
    assert Fraction(inst["exact"]["lhs_value"]) == Fraction(9, 4) and inst["verdict"] == "fail"


def test_compile_is_cached_per_task_and_refreshed_when_gates_change(lab):
    a = compile_gates(lab)
    assert compile_gates(lab) is a
    other = with_gates(lab, gate("g", "range", path="result.x", min="5"))
    assert compile_gates(other)[0].id == "g"
    assert compile_gates(lab) is not None
