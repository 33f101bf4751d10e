"""Obligations that say something: every emitted statement depends on the
artifact's values, and a value that breaks the gate flips it.

Without Lean the flip is checked by the IR evaluator; with a kernel
(``@pytest.mark.lean``) the kernel rejects every mutated statement stated with
the old verdict and proves it stated with the new one.
"""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.gatekit import data, gate, lab_task, with_gates

from mmverify.reading.artifact import parse_file
from mmverify.gates import evaluate_gates
from mmverify.lean_gen import emit, falsify, ir, mutate, project, runner, syntax
from mmverify.lean_gen.ir import Obligation, ObligationSet
from mmverify.lean_gen.testing import require_lean
from mmverify.tasks import default_anchors_dir, load_task, task_ids

ANCHORS = default_anchors_dir()
FORMS = mutate.VALUE_FORMS


@pytest.fixture(scope="module")
def files():
    return project.anchor_files(ANCHORS)


@pytest.fixture(scope="module")
def per_task(files):
    """task id -> {form: ValueMutation} over its oracle file."""
    out = {}
    for f in files:
        if f.oset.artifact != "oracle artifact":
            continue
        task = load_task(f.oset.task_id, ANCHORS)
        out[task.id] = falsify.per_form(task, parse_file(task.oracle_path).data, f.oset.obligations)
    return out


# ------------------------------------------------------------- the anchors

def test_no_obligation_is_independent_of_the_artifact(files):
    for f in files:
        for o in f.oset.obligations:
            assert o.reads, (f.relpath, o.name, "reads no artifact value")
            assert not ir.independent_of_values(o.claim), (f.relpath, o.name)
            # a witness: one artifact input, set to another value, flips the statement
            hit = ir.falsifier(o.claim)
            assert hit is not None and hit[0] in o.reads, (f.relpath, o.name)
            assert syntax.eval_prop(ir.substitute(o.claim, *hit)) != o.holds


def test_tautologies_left_are_comparisons_of_distinct_values(files):
    """A relation with two identical sides is left only where each side reads
    something else (two fields, or a field and a constant of the statement);
    no integer-form obligation is one."""
    for f in files:
        for o in f.oset.obligations:
            if not o.tautology:
                continue
            assert o.form != "integer", (f.relpath, o.name)
            for r in syntax.relations(o.claim):
                left, right = ir.side_reads(r)
                assert left != right, (f.relpath, o.name, left, right)


def test_every_task_has_obligations_and_every_form_flips(per_task, files):
    assert set(per_task) == set(task_ids(ANCHORS))
    forms_by_task = {}
    for f in files:
        if f.oset.artifact == "oracle artifact":
            forms_by_task[f.oset.task_id] = {o.form for o in f.oset.obligations}
    for tid, by_form in per_task.items():
        assert by_form, tid
        assert set(by_form) == forms_by_task[tid]
        for form, m in by_form.items():
            assert m is not None, (tid, form, "no single value breaks any obligation of this form")
            assert m.flips and m.path in m.obligation.reads
            assert syntax.eval_prop(m.false_statement) is False
            assert syntax.eval_prop(m.true_statement) is True
            assert m.before != m.after


def test_vouched_and_unstated_are_named_in_the_file(files):
    for f in files:
        for v in f.oset.vouched:
            assert v.instance_name in f.text
            assert syntax.eval_prop(v.statement) is True
        for u in f.oset.unstated:
            assert u.instance_name in f.text


def test_replay_vouched_records_read_only_replayed_values(files):
    """A replay-vouched record reads only replayed values, or compares a claim
    with the replayed value that reproduces it exactly; no obligation left is
    either (a claim off its replay stays an obligation)."""
    kinds, exact = set(), 0
    for f in files:
        for v in f.oset.vouched:
            kinds.add(v.kind)
            if v.kind == ir.VOUCHED_REPLAY:
                assert v.sources and any(ir.is_replay_path(p) for p in v.sources)
                if not all(ir.is_replay_path(p) for p in v.sources):
                    exact += 1
                    claim = v.statement.body if isinstance(v.statement, syntax.Not) else v.statement
                    assert ir.is_tautology(claim)
            else:
                assert v.form == "finite_domain"
        for o in f.oset.obligations:
            assert not all(ir.is_replay_path(p) for p in o.sources)
            assert not (o.tautology and any(ir.is_replay_path(p) for p in o.sources))
    assert kinds == {ir.VOUCHED_REPLAY, ir.VOUCHED_LABEL}
    assert exact > 0


def test_ledger_counts(files):
    from mmverify.lean_gen.check import ledger

    led = ledger(files)
    assert led.obligations == sum(len(f.oset.obligations) for f in files)
    assert led.tautologies == sum(o.tautology for f in files for o in f.oset.obligations)
    assert led.replay_vouched + led.label_vouched == sum(len(f.oset.vouched) for f in files)
    assert led.replay_vouched > 0 and led.label_vouched > 0
    assert led.by_form.get("integer", 0) > 0


# ------------------------------------------------------------- one per form

@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


FORM_CASES = {
    "range": (gate("g", "range", path="result.x", min="0.5", max="6"), dict(x="2.25")),
    "integer": (gate("g", "integer", path="result.n"), dict(n="12")),
    "order": (gate("g", "order", paths=["result.x", "result.y", "result.z"]), dict(x="1", y="1.5", z="2")),
    "identity": (gate("g", "identity", expr="a * b <= 2 + 1", vars={"a": "result.x", "b": "result.y"}),
                 dict(x="1.2", y="2")),
    "finite_domain": (gate("g", "finite_domain", path="result.n", values=["1", "2", "3"]), dict(n="2")),
    "partition_sum": (gate("g", "partition_sum", parts=["result.x", "result.y"], total="result.total"),
                      dict(x="2.5", y="1.25", total="3.75")),
}


def _mutations(lab):
    out = []
    for form, (spec, values) in FORM_CASES.items():
        task = with_gates(lab, spec)
        art = data(**values)
        s = ir.obligation_set(task, evaluate_gates(task, art), "t", "T")
        (o,) = s.obligations
        assert o.form == form and o.holds
        m = falsify.value_mutation(task, art, o)
        assert m is not None, form
        out.append(m)
    return out


def test_every_form_flips_by_one_value(lab):
    ms = _mutations(lab)
    assert [m.obligation.form for m in ms] == list(FORMS)
    for m in ms:
        assert m.verdict == "fail" and m.flips
        assert syntax.eval_prop(m.false_statement) is False


def _file(ms, statements, tag):
    obls = tuple(Obligation(name=f"{m.obligation.form}_{k}", task_id="t", gate_id="g", index=k,
                            form=m.obligation.form, level="A", severity="hard", claim=stmt, holds=True,
                            decimals=m.obligation.decimals, sources=m.obligation.sources,
                            units=m.obligation.units, encoding="mutated")
                 for k, (m, stmt) in enumerate(zip(ms, statements)))
    return emit.emit(ObligationSet("t", tag, f"Mut{tag}", obls))


@pytest.mark.lean
def test_kernel_rejects_each_form_mutated(lab):
    tc = require_lean()
    ms = _mutations(lab)
    res = runner.check_files([_file(ms, [m.false_statement for m in ms], "False"),
                              _file(ms, [m.true_statement for m in ms], "True")], tc)
    for name, r in res.results.items():
        want = runner.FAILED if name.startswith("MutFalse.") else {runner.PROVED, runner.REFUTED}
        assert (r.status == want) if isinstance(want, str) else (r.status in want), (name, r)
        assert not r.parse_error, (name, r.errors)


@pytest.mark.lean
def test_kernel_rejects_each_task_mutated(per_task):
    tc = require_lean()
    ms = [m for by_form in per_task.values() for m in by_form.values()]
    res = runner.check_files([_file(ms, [m.false_statement for m in ms], "False"),
                              _file(ms, [m.true_statement for m in ms], "True")], tc)
    assert len(res.results) == 2 * len(ms)
    for name, r in res.results.items():
        if name.startswith("MutFalse."):
            assert r.status == runner.FAILED and not r.parse_error, (name, r)
        else:
            assert r.status in (runner.PROVED, runner.REFUTED), (name, r)


# ------------------------------------------------------------- promises

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(x=st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False, allow_infinity=False),
       lo=st.integers(-100, 100), width=st.integers(0, 50))
def test_range_claim_flips_beyond_its_bounds(lab, x, lo, width):
    """A value moved past a bound always fails, and its statement is false."""
    task = with_gates(lab, gate("g", "range", path="result.x", min=str(lo), max=str(lo + width)))
    for moved in (lo - 1 - abs(x), lo + width + 1 + abs(x)):
        s = ir.obligation_set(task, evaluate_gates(task, data(x=format(moved, "f"))), "t", "T")
        (o,) = s.obligations
        assert not o.holds and syntax.eval_prop(o.claim) is False


@SETTINGS
@given(parts=st.lists(st.decimals(min_value=0, max_value=100, places=2, allow_nan=False, allow_infinity=False),
                      min_size=2, max_size=2))
def test_partition_statement_is_invariant_under_part_order(lab, parts):
    spec = gate("g", "partition_sum", parts=["result.x", "result.y"], total="result.total")
    task = with_gates(lab, spec)
    total = format(sum(parts), "f")
    a = ir.obligation_set(task, evaluate_gates(task, data(x=format(parts[0], "f"), y=format(parts[1], "f"),
                                                          total=total)), "t", "T").obligations[0]
    b = ir.obligation_set(task, evaluate_gates(task, data(x=format(parts[1], "f"), y=format(parts[0], "f"),
                                                          total=total)), "t", "T").obligations[0]
    assert a.holds and b.holds
    assert syntax.eval_prop(a.claim) == syntax.eval_prop(b.claim)
    assert sorted(syntax.eval_term(t) for t in a.claim.left.terms) == \
        sorted(syntax.eval_term(t) for t in b.claim.left.terms)


def test_a_paper_file_does_not_repeat_the_oracle_statements(files):
    """A panel file states only what the oracle's file does not already state
    for the same gate instance; each instance it leaves out is named there as
    ``same_as_oracle`` and is an obligation or vouched record of the oracle's
    file, word for word. A paper value that differs from the oracle's keeps
    its own obligation."""
    by_task: dict[str, list] = {}
    for f in files:
        by_task.setdefault(f.oset.task_id, []).append(f)
    left_out = kept = 0
    for group in by_task.values():
        oracle = next(f for f in group if f.oset.artifact == "oracle artifact")
        stated = {(o.gate_id, o.index): o.statement_text for o in oracle.oset.obligations}
        vouched = {(v.gate_id, v.index): v.statement for v in oracle.oset.vouched}
        for f in group:
            if f is oracle:
                continue
            for o in f.oset.obligations:
                kept += 1
                assert stated.get((o.gate_id, o.index)) != o.statement_text, (f.relpath, o.name)
            for u in f.oset.unstated:
                if u.reason == project.SAME_AS_ORACLE:
                    left_out += 1
                    assert (u.gate_id, u.index) in stated or (u.gate_id, u.index) in vouched, (f.relpath, u)
                    assert u.instance_name in f.text
    assert left_out > 0 and kept > 0


def test_a_changed_paper_value_keeps_its_own_obligation():
    oracle_file = next(f for f in project.anchor_files(ANCHORS) if f.oset.artifact == "oracle artifact"
                       and f.oset.obligations)
    o = oracle_file.oset.obligations[0]
    changed = ir.substitute(o.claim, o.sources[0], 10 ** 9 + 7) if o.sources else o.claim
    twin = dataclasses.replace(o, claim=changed)
    paper = ObligationSet(o.task_id, "panel paper X", "M", (o, twin))
    out = project.without_repeats(paper, oracle_file.oset)
    assert [x.claim for x in out.obligations] == [changed]
    assert [u.reason for u in out.unstated] == [project.SAME_AS_ORACLE]
