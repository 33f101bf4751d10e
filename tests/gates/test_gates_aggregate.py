"""Identity gates over a list's largest or smallest element (``{"max": path}``,
``{"min": path}`` in ``vars``): the loader's rules, the verdict against its
definition on every path (instances, verdicts only, the all-pass check), the
record, and the Lean claim stated element by element."""
from __future__ import annotations

import decimal
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.gates.test_quick_inline import _agree, fuzz_settings
from tests.helpers.gatekit import data, gate, lab_task, with_gates

from mmverify.gates import compile_gates, evaluate_gates
from mmverify.lean_gen import syntax
from mmverify.lean_gen.ir import is_tautology
from mmverify.tasks import TaskLoadError

RELATIONS = ("==", "<=", ">=", "<", ">")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


def agg(gid: str, expr: str, kind: str = "max", path: str = "result.nums[*]", tol: str | None = None, **more):
    spec = gate(gid, "identity", expr=expr, vars={"x": "result.x", "a": {kind: path}, **more})
    if tol is not None:
        spec.update(tolerance=tol, tolerance_reason="test")
    return spec


def holds(x: Fraction, relation: str, a: Fraction, tol: Fraction) -> bool:
    d = x - a
    return {"==": abs(d) <= tol, "<=": d <= tol, "<": d < tol, ">=": d >= -tol, ">": d > -tol}[relation]


# ------------------------------------------------------------------ the loader

@pytest.mark.parametrize("spec,words", [
    (gate("g", "identity", expr="x == a + 1", vars={"x": "result.x", "a": {"max": "result.nums[*]"}}),
     "stand alone"),
    (gate("g", "identity", expr="x == a", vars={"x": "result.x", "a": {"max": "result.y"}}), "[*] list"),
    (gate("g", "identity", expr="x == a", vars={"x": "result.items[*].low", "a": {"max": "result.nums[*]"}}),
     "every other variable a scalar"),
    (gate("g", "identity", expr="x == a", vars={"x": {"min": "result.nums[*]"}, "a": {"max": "result.nums[*]"}}),
     "at most one"),
])
def test_defective_aggregates_are_rejected(lab, spec, words):
    with pytest.raises(TaskLoadError) as info:
        compile_gates(with_gates(lab, spec))
    assert words in info.value.problem, info.value.problem


def test_an_unknown_aggregate_is_rejected_by_the_task_schema(lab, tmp_path):
    from tests.helpers.taskfactory import base_task, paper, write_task

    from tests.helpers.gatekit import lab_schema

    from mmverify.tasks import load_task

    spec = gate("g", "identity", expr="x == a", vars={"x": "result.x", "a": {"sum": "result.nums[*]"}})
    metrics = [{"id": "x", "path": "result.x", "unit": "1", "direction": "target_value", "weight": 1,
                "band": {"abs": "1"}}]
    write_task(str(tmp_path), base_task("t-agg", metrics, [paper("P1", {"x": "1"}, oracle=True)], [spec]),
               lab_schema(), {"result": {"x": 1}})
    with pytest.raises(TaskLoadError, match=r"gates/0/vars/a"):
        compile_gates(load_task("t-agg", str(tmp_path)))


# ------------------------------------------------------------------ the verdict

small = st.decimals(min_value=-50, max_value=50, places=1, allow_nan=False, allow_infinity=False)


@given(relation=st.sampled_from(RELATIONS), kind=st.sampled_from(["max", "min"]), left=st.booleans(),
       tol=st.sampled_from([None, "0.5"]), x=small, nums=st.lists(small, min_size=1, max_size=6))
@fuzz_settings(300)
def test_the_verdict_is_the_definition_on_every_path(lab, relation, kind, left, tol, x, nums):
    expr = f"a {relation} x" if left else f"x {relation} a"
    task = with_gates(lab, agg("g", expr, kind, tol=tol))
    artifact = data(x=str(x), nums=[str(v) for v in nums])
    (inst,) = evaluate_gates(task, artifact).instances
    (light,) = evaluate_gates(task, artifact, hard_only=True).instances
    a = (max if kind == "max" else min)(Fraction(v) for v in nums)
    want = holds(a, relation, Fraction(x), Fraction(tol or 0)) if left else \
        holds(Fraction(x), relation, a, Fraction(tol or 0))
    assert inst.verdict == light.verdict == ("pass" if want else "fail")
    assert inst.paths == ("result.x", *(f"result.nums[{i}]" for i in range(len(nums))))
    _agree(task, artifact)
    # the Lean claim, element by element, says the same
    claim, _, _ = inst_claim(inst)
    assert syntax.eval_prop(claim) is want


def inst_claim(inst):
    from mmverify.gates.registry import FORM_TABLE

    return FORM_TABLE["identity"].claim(inst, inst.tolerance_value)


def test_unusable_inputs_give_the_usual_gaps_and_fails(lab):
    task = with_gates(lab, agg("g", "x == a"))
    def one(artifact):
        (inst,) = evaluate_gates(task, artifact).instances
        return inst.verdict, inst.reason
    assert one(data(x="1", nums=[])) == ("gap", "empty_list")
    assert one(data(x="1")) == ("gap", "missing")
    assert one(data(nums=["1"])) == ("gap", "missing")
    assert one(data(x="1", nums=["1", True])) == ("fail", "not_a_number")
    assert one(data(x="1", nums="1")) == ("fail", "not_a_list")


def test_an_inflated_best_fails_where_at_least_every_element_passed(lab):
    """The point of the aggregate: ``best >= x[*]`` lets a best above every plan
    pass; ``best == max(x[*])`` does not."""
    per_row = with_gates(lab, gate("g", "identity", expr="x >= a", vars={"x": "result.x", "a": "result.nums[*]"}))
    whole = with_gates(lab, agg("g", "x == a"))
    inflated = data(x="1000", nums=["3", "7", "5"])
    assert {i.verdict for i in evaluate_gates(per_row, inflated).instances} == {"pass"}
    assert [i.verdict for i in evaluate_gates(whole, inflated).instances] == ["fail"]
    assert [i.verdict for i in evaluate_gates(whole, data(x="7", nums=["3", "7", "5"])).instances] == ["pass"]


def test_the_record_names_the_list_and_its_largest_element(lab):
    task = with_gates(lab, agg("g", "x == a"))
    (inst,) = evaluate_gates(task, data(x="7", nums=["3", "7.0", "5"])).instances
    assert "largest of 3 value(s) of result.nums[*]" in inst.detail
    assert dict(inst.bindings)["a"] == 7 and inst.operands == (7, 3, 7, 5)
    assert inst.aggregate == ("a", "max", 1, 3)
    assert inst.as_dict()["exact"]["rhs_value"] == "7"


def test_the_lean_claim_is_stated_element_by_element(lab):
    task = with_gates(lab, agg("g", "x == a", "min"))
    (inst,) = evaluate_gates(task, data(x="3", nums=["3", "7", "5"])).instances
    claim, d, how = inst_claim(inst)
    text = syntax.print_prop(claim)
    # every element at least x, and one element at most x
    assert text == "3 ≤ 3 ∧ 3 ≤ 7 ∧ 3 ≤ 5 ∧ (3 ≤ 3 ∨ 7 ≤ 3 ∨ 5 ≤ 3)", text
    assert not is_tautology(claim) and "smallest of 3" in how
    srcs = {lit.src for r in syntax.relations(claim) for side in (r.left, r.right)
            for lit in syntax.term_literals(side)}
    assert srcs == {"result.x", "result.nums[0]", "result.nums[1]", "result.nums[2]"}


def test_a_claim_whose_relations_all_compare_equal_terms_is_a_tautology():
    lit = syntax.Lit(7, syntax.NAT, None)
    same = syntax.Rel("≤", lit, lit)
    assert is_tautology(syntax.conj([same, syntax.disj([same, same])]))
    other = syntax.Rel("=", lit, syntax.Lit(8, syntax.NAT, None))
    assert not is_tautology(syntax.disj([same, other]))


def test_exact_context_untouched(lab):
    task = with_gates(lab, agg("g", "x == a", tol="0.1"))
    prior = decimal.getcontext()
    evaluate_gates(task, data(x=str(Decimal("7.05")), nums=["7"]))
    assert decimal.getcontext() is prior
