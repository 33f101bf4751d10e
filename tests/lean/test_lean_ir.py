"""Obligation IR: exact scaling, the claim of each form, polarity, names, and
agreement of the integer claim with the exact gate verdict (no Lean needed)."""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.gatekit import Str, data, gate, lab_task, with_gates

from mmverify.gates import evaluate_gates
from mmverify.lean_gen import ir
from mmverify.lean_gen import syntax

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


def oset(task, artifact):
    return ir.obligation_set(task, evaluate_gates(task, artifact), "test", "Test")


def only(task, artifact) -> ir.Obligation:
    s = oset(task, artifact)
    assert len(s.obligations) == 1, s
    return s.obligations[0]


def decimals(lo=-1000, hi=1000, places=4):
    return st.decimals(min_value=lo, max_value=hi, places=places, allow_nan=False, allow_infinity=False)


# ------------------------------------------------------------------- scaling

def test_decimals_and_scaling():
    assert ir.decimals(Fraction(1246266, 10**6)) == 6
    assert ir.decimals(Fraction(464)) == 0
    assert ir.decimals(Fraction(-1, 8)) == 3
    assert ir.common_decimals([Fraction(3, 10), None, Fraction(1, 4)]) == 2
    assert ir.scaled(Fraction(-1, 8), 3) == -125
    with pytest.raises(ir.NotExpressible):
        ir.decimals(Fraction(1, 3))


# -------------------------------------------------------------------- forms

def test_range_claims(lab):
    o = only(with_gates(lab, gate("r", "range", path="result.x", min="0.30", max="6")), data(x="0.4"))
    assert o.statement_text == "3 ≤ 4 ∧ 4 ≤ 60" and o.decimals == 1 and o.holds
    o = only(with_gates(lab, gate("r", "range", path="result.x", min="60", min_strict=True)), data(x="59.9"))
    assert o.statement_text == "¬ (600 < 599)" and not o.holds and o.expected == "refuted"
    o = only(with_gates(lab, gate("r", "range", path="result.x", min="-1", max="1")), data(x="-0.5"))
    assert o.statement_text == "(-10 : Int) ≤ (-5 : Int) ∧ (-5 : Int) ≤ (10 : Int)"


def test_range_tolerance_adds_on_the_far_side(lab):
    spec = gate("r", "range", path="result.x", min="2", max="6", tolerance="0.05", tolerance_reason="rounding")
    o = only(with_gates(lab, spec), data(x="6.04"))
    assert o.statement_text == "200 ≤ 604 + 5 ∧ 604 ≤ 600 + 5"
    assert o.tolerance == "0.05"


def test_integer_claims(lab):
    t = with_gates(lab, gate("i", "integer", path="result.n"))
    # divisibility of the scaled magnitude, at least one decimal place: nothing pre-folded
    assert only(t, data(n="224")).statement_text == "2240 % 10 = 0"
    assert only(t, data(n="224.0")).statement_text == "2240 % 10 = 0"
    o = only(t, data(n="2.5"))
    assert o.statement_text == "¬ (25 % 10 = 0)" and not o.holds
    # a negative value: its magnitude (no negative operand is ever divided)
    assert only(t, data(n="-2.5")).statement_text == "¬ (25 % 10 = 0)"
    assert only(t, data(n="-3")).statement_text == "30 % 10 = 0"
    assert only(t, data(n="1.25")).statement_text == "¬ (125 % 100 = 0)"
    tt = with_gates(lab, gate("i", "integer", path="result.n", tolerance="0.01", tolerance_reason="rounding"))
    assert only(tt, data(n="2.995")).statement_text == "2995 % 1000 ≤ 10 ∨ 1000 ≤ 2995 % 1000 + 10"
    assert only(tt, data(n="3.005")).holds
    assert only(tt, data(n="3.02")).statement_text == "¬ (302 % 100 ≤ 1 ∨ 100 ≤ 302 % 100 + 1)"
    tb = with_gates(lab, gate("b", "integer", path="result.n", binary=True))
    assert only(tb, data(n="1")).statement_text == "1 = 0 ∨ 1 = 1"
    assert only(tb, data(n="2")).statement_text == "¬ (2 = 0 ∨ 2 = 1)"
    assert only(tb, data(n="0.5")).statement_text == "¬ (5 = 0 ∨ 5 = 1 * 10)"


@SETTINGS
@given(x=decimals(-10**6, 10**6, 3), tol=st.sampled_from([None, "0.001", "0.05", "0.25"]))
def test_integer_claim_agrees_and_is_never_a_tautology(lab, x, tol):
    extra = dict(tolerance=tol, tolerance_reason="rounding") if tol else {}
    t = with_gates(lab, gate("i", "integer", path="result.n", **extra))
    o = only(t, data(n=format(x, "f")))
    assert o.holds == (min(abs(x - int(x)), 1 - abs(x - int(x))) <= Decimal(tol or 0))
    assert not o.tautology and o.reads == ("result.n",)
    assert ir.falsifier(o.claim) is not None
    assert not syntax.check_types(o.claim)


def test_order_claims(lab):
    t = with_gates(lab, gate("o", "order", paths=["result.x", "result.y", "result.z"]))
    assert only(t, data(x="1", y="1.5", z="2")).statement_text == "10 ≤ 15 ∧ 15 ≤ 20"
    ts = with_gates(lab, gate("o", "order", paths=["result.x", "result.y"], strict=True))
    assert only(ts, data(x="2", y="2")).statement_text == "¬ (2 < 2)"


def test_identity_dragon_dance(lab):
    spec = gate("q5.handle_speed_limit", "identity", expr="v_head * ratio_max <= 2",
                vars={"v_head": "result.x", "ratio_max": "result.y"})
    t = with_gates(lab, spec)
    ok = only(t, data(x="1.246266", y="1.604793"))
    assert ok.statement_text == "1246266 * 1604793 ≤ 2 * 1000000 * 1000000"
    assert ok.holds and ok.decimals == 6 and ok.expr == "v_head * ratio_max <= 2"
    bad = only(t, data(x="1.406276", y="1.604793"))
    assert bad.statement_text == "¬ (1406276 * 1604793 ≤ 2 * 1000000 * 1000000)"
    assert bad.expected == "refuted"


def test_identity_subtraction_moves_to_the_other_side(lab):
    spec = gate("g", "identity", expr="x - y >= 0.5", vars={"x": "result.x", "y": "result.y"})
    o = only(with_gates(lab, spec), data(x="3", y="2.25"))
    # 0.5 <= x - y  ->  1/2 + y <= x at scale 10^2, both sides times 100
    assert o.statement_text == "1 * 50 + 225 ≤ 300"
    assert "moved" in o.encoding


def test_identity_nested_difference_is_int(lab):
    spec = gate("g", "identity", expr="(x - y) * (x - z) <= 0", vars={"x": "result.x", "y": "result.y",
                                                                      "z": "result.z"})
    o = only(with_gates(lab, spec), data(x="2", y="1", z="3"))
    assert o.statement_text == "((2 : Int) - (1 : Int)) * ((2 : Int) - (3 : Int)) ≤ (0 : Int)"


def test_identity_division_and_tolerance(lab):
    spec = gate("g", "identity", expr="x / y == 0.5", vars={"x": "result.x", "y": "result.y"},
                tolerance="0.01", tolerance_reason="rounded in the statement")
    o = only(with_gates(lab, spec), data(x="1.01", y="2"))
    assert o.holds
    assert syntax.eval_prop(o.claim)
    assert o.statement_text.count("≤") == 2  # == with a tolerance: two inequalities


def test_finite_domain_numbers_and_labels(lab):
    t = with_gates(lab, gate("d", "finite_domain", path="result.n", values=["1", "2", "3"]))
    assert only(t, data(n="2")).statement_text == "2 = 1 ∨ 2 = 2 ∨ 2 = 3"
    assert only(t, data(n="4")).statement_text == "¬ (4 = 1 ∨ 4 = 2 ∨ 4 = 3)"
    tl = with_gates(lab, gate("d", "finite_domain", path="result.label", values=["A", "Bb"]))
    # a label domain is vouched (the kernel cannot see text), never a kernel obligation
    s = oset(tl, data(label=Str("  bb ")))
    assert s.obligations == ()
    (v,) = s.vouched
    a, bb = ir.label_code("a"), ir.label_code("bb")
    assert v.kind == ir.VOUCHED_LABEL and v.verdict == "pass"
    assert syntax.print_prop(v.statement) == f"{bb} = {a} ∨ {bb} = {bb}"
    (v,) = oset(tl, data(label=Str("c"))).vouched
    assert v.verdict == "fail" and syntax.print_prop(v.statement).startswith("¬ (")


def test_label_codes_are_injective_and_bounded():
    codes = {ir.label_code(s) for s in ["", "a", "\x00a", "a\x00", "b", "ab", "ä"]}
    assert len(codes) == 7
    long = "x" * 10_000
    assert ir.label_code(long, cap=9) == ir.label_code("x" * 9)


def test_hostile_label_never_enters_the_file(lab):
    from mmverify.lean_gen import emit

    tl = with_gates(lab, gate("d", "finite_domain", path="result.label", values=["A"]))
    evil = "-/ sorry axiom x : False /- " * 1000
    s = oset(tl, data(label=Str(evil)))
    text = emit.emit(s)
    assert "sorry" not in text and "axiom x" not in text and "False" not in text
    assert len(text) < 2000  # the code is cut to one byte more than the longest member


def test_partition_claims(lab):
    t = with_gates(lab, gate("p", "partition_sum", parts=["result.x", "result.y"], total="result.total"))
    assert only(t, data(x="0.25", y="0.75", total="1")).statement_text == "25 + 75 = 100"
    assert only(t, data(x="0.25", y="0.7", total="1")).statement_text == "¬ (25 + 70 = 100)"
    tt = with_gates(lab, gate("p", "partition_sum", parts=["result.x", "result.y"], total_value="100",
                              tolerance="0.5", tolerance_reason="rounded percentages"))
    assert only(tt, data(x="33.3", y="66.6")).statement_text == "333 + 666 ≤ 1000 + 5 ∧ 1000 ≤ 333 + 666 + 5"


def test_list_paths_expand_with_indexed_names(lab):
    t = with_gates(lab, gate("g.nonneg", "range", path="result.nums[*]", min="0"))
    s = oset(t, data(nums=["1", "-2"]))
    assert [o.name for o in s.obligations] == ["t_lab_g_nonneg_0", "t_lab_g_nonneg_1"]
    assert [o.holds for o in s.obligations] == [True, False]
    assert s.obligations[1].sources == ("result.nums[1]",)


def test_gaps_and_undecided_failures_have_no_obligation(lab):
    t = with_gates(lab, gate("a", "range", path="result.x", min="0"), gate("b", "range", path="result.y", min="0"),
                   gate("c", "identity", expr="x / y <= 1", vars={"x": "result.x", "y": "result.z"}))
    s = oset(t, data(x=Str("abc"), z="0"))
    assert s.obligations == ()
    reasons = {(u.gate_id, u.verdict, u.reason) for u in s.unstated}
    assert ("a", "fail", "not_a_number") in reasons
    assert ("b", "gap", "missing") in reasons


def test_oversized_claims_are_listed_not_emitted(lab):
    members = [str(i) for i in range(1, ir.MAX_CONNECTIVE_PARTS + 2)]
    t = with_gates(lab, gate("d", "finite_domain", path="result.n", values=members))
    s = oset(t, data(n="3"))
    assert s.obligations == () and [(u.gate_id, u.reason) for u in s.unstated] == [("d", "too_large")]
    t = with_gates(lab, gate("p", "partition_sum", parts="result.nums[*]", total="result.total"))
    s = oset(t, data(nums=["1"] * ir.MAX_RELATION_LITERALS, total=str(ir.MAX_RELATION_LITERALS)))
    assert s.obligations == () and s.unstated[0].reason == "too_large"
    ok = oset(t, data(nums=["1"] * 100, total="100"))
    assert len(ok.obligations) == 1 and "(1 : Nat) + (1 : Nat)" in ok.obligations[0].statement_text


# -------------------------------------------------------------------- names

def test_names_are_sanitised_and_unique():
    assert ir.obligation_name("cumcm-2024-a-dragon-dance", "q5.handle_speed_limit", None) == \
        "cumcm_2024_a_dragon_dance_q5_handle_speed_limit"
    assert ir.obligation_name("t", "g", 3) == "t_g_3"
    assert ir.sanitise_ident("9-lives") == "o_9_lives"
    assert ir.unique_names(["a_1", "a_1", "a_1"]) == ["a_1", "a_1_c2", "a_1_c3"]
    assert ir.camel("mcm-2025-c-olympic-medals") == "Mcm2025COlympicMedals"


def test_collision_between_scalar_and_element_names_is_resolved(lab):
    t = with_gates(lab, gate("g_0", "range", path="result.x", min="0"), gate("g", "range", path="result.nums[*]",
                                                                             min="0"))
    names = [o.name for o in oset(t, data(x="1", nums=["2"])).obligations]
    assert names == ["t_lab_g_0", "t_lab_g_0_c2"]


# ---------------------------------------------------------------- agreement

class _Fake:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_claim_that_disagrees_with_the_gate_is_an_error():
    inst = _Fake(gate_id="g", index=None, form="range", level="A", severity="hard", paths=("r.x",),
                 verdict="pass", reason=None, decided=True, tolerance=None, tolerance_value=Fraction(0),
                 operands=(Fraction(-1),), lower=Fraction(0), lower_strict=False, upper=None, upper_strict=False,
                 name="g")
    report = _Fake(instances=(inst,))
    task = _Fake(id="t", gates=(), artifact_schema={})
    with pytest.raises(ir.IRAgreementError):
        ir.obligation_set(task, report, "x", "X")


@SETTINGS
@given(x=decimals(places=6), lo=decimals(places=3), w=decimals(Decimal('0.01'), 100, 2), strict=st.booleans())
def test_range_claim_agrees_with_gate_verdict(lab, x, lo, w, strict):
    spec = gate("r", "range", path="result.x", min=format(lo, "f"), max=format(lo + w, "f"), min_strict=strict)
    o = only(with_gates(lab, spec), data(x=format(x, "f")))
    assert syntax.eval_prop(o.statement) is True  # the emitted statement is always true
    assert syntax.eval_prop(o.claim) == o.holds


@SETTINGS
@given(a=decimals(-50, 50, 3), b=decimals(-50, 50, 4), c=decimals(-50, 50, 2),
       expr=st.sampled_from(["a * b <= c", "a - b == c", "a * a + b >= c", "(a - b) * c < 1.5",
                             "a / 3 + b <= c * c", "a * b * c > -a", "2 * a - 3 * b <= c / 4"]))
def test_identity_claim_agrees_with_exact_relation(lab, a, b, c, expr):
    spec = gate("g", "identity", expr=expr, vars={"a": "result.x", "b": "result.y", "c": "result.z"})
    rep = evaluate_gates(with_gates(lab, spec), data(x=format(a, "f"), y=format(b, "f"), z=format(c, "f")))
    s = ir.obligation_set(with_gates(lab, spec), rep, "t", "T")
    (inst,) = rep.instances
    if not inst.decided:
        assert s.obligations == ()
        return
    (o,) = s.obligations
    # independent check: sympy's exact evaluation of the relation
    env = {"a": sympy.Rational(str(a)), "b": sympy.Rational(str(b)), "c": sympy.Rational(str(c))}
    op = next(op for op in ("<=", ">=", "==", "<", ">") if op in expr)
    left, right = (sympy.sympify(side, locals=env, rational=True) for side in expr.split(op))
    truth = {"<=": left <= right, ">=": left >= right, "==": left == right, "<": left < right,
             ">": left > right}[op]
    assert bool(truth) == o.holds
    assert syntax.eval_prop(o.statement) is True
    assert not syntax.check_types(o.claim)
