"""The verdict path (``evaluate_gates(..., records=False)``, what the reward
reads) compares a parsed Decimal as it is where the records compare its
Fraction: both must give every instance the same verdict, most of all at the
bounds, where an inexact comparison would show. Numbers are planted at the
gate inputs of every task, drawn around every constant its gates hold (bounds
with their tolerance, domain members, 0 and 1), a few units in the last place
away, with trailing zeros, or far out in exponent."""
from __future__ import annotations

import copy
import pickle
from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.hostile import set_at
from tests.helpers.hostile.strategies import fuzz_settings

from mmverify.reading.artifact import parse_file
from mmverify.gates import compile_gates, evaluate_gates
from mmverify.reading.numbers import exact_decimal
from mmverify.reading.paths import WILDCARD
from mmverify.replay import run_replay
from mmverify.tasks import load_all

TASKS = load_all()
ORACLES = {t.id: parse_file(t.oracle_path).data for t in TASKS}
REPLAYED = {t.id: run_replay(t, ORACLES[t.id]) for t in TASKS}


def _constants(task) -> list[Fraction]:
    out = {Fraction(0), Fraction(1)}
    for g in compile_gates(task):
        tol = g.tolerance or Fraction(0)
        for bound in (g.lower, g.upper):
            if bound is not None:
                out.update({bound.value, bound.value - tol, bound.value + tol})
        out.update(v for v in g.domain_numbers if v is not None)
        if g.total_value is not None:
            out.add(g.total_value)
    return sorted(out)


def _inputs(task) -> list[tuple]:
    """Concrete segments of every artifact value a gate reads ([*] as element 0 or 1)."""
    out = []
    for g in compile_gates(task):
        for p in g.inputs:
            if p.segments and p.segments[0] == "$replay":
                continue
            for k in (0, 1) if p.is_list else (None,):
                out.append(tuple(k if s == WILDCARD else s for s in p.segments))
    return sorted(set(out), key=repr)


CONSTANTS = {t.id: _constants(t) for t in TASKS}
INPUTS = {t.id: _inputs(t) for t in TASKS}


@st.composite
def near(draw, constants: list[Fraction]) -> Decimal | int:
    """A number at, or a few units in some decimal place from, one of ``constants``."""
    base = exact_decimal(draw(st.sampled_from(constants)))
    if not isinstance(base, Decimal):      # 1/3 and the like: the nearest 30-digit decimal
        base = Decimal(base.numerator) / Decimal(base.denominator)
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return base
    if kind == 1:                          # the same value with trailing zeros
        return Decimal(f"{base:f}" + ("" if "." in f"{base:f}" else ".") + "0" * draw(st.integers(1, 6)))
    if kind == 2:                          # a JSON integer
        return int(base.to_integral_value())
    if kind == 3:                          # far out
        return Decimal(f"{draw(st.sampled_from(['1', '-1', '9.5', '-3.25']))}E{draw(st.integers(-300, 300))}")
    step = Decimal(f"1E{-draw(st.integers(0, 25))}")
    return base + draw(st.integers(-3, 3)) * step if kind == 4 else base * draw(st.sampled_from([-1, 2]))


@st.composite
def planted_numbers(draw):
    task = draw(st.sampled_from([t for t in TASKS if INPUTS[t.id]]))
    data = copy.deepcopy(ORACLES[task.id])
    targets = INPUTS[task.id]
    for segs in draw(st.lists(st.sampled_from(targets), min_size=1, max_size=6, unique=True)):
        set_at(data, segs, draw(near(CONSTANTS[task.id])))
    return task, data


def _verdicts(instances) -> list[tuple]:
    return [(i.gate_id, i.index, i.verdict, i.reason, i.paths) for i in instances]


@given(case=planted_numbers())
@fuzz_settings(300)
def test_verdict_path_equals_records_near_every_bound(case):
    task, data = case
    replayed = REPLAYED[task.id]
    records = evaluate_gates(task, data, replayed)
    verdicts = evaluate_gates(task, data, replayed, records=False)
    assert _verdicts(verdicts.instances) == _verdicts(records.instances)


def test_every_task_has_planted_inputs_and_the_oracles_agree():
    assert sum(1 for t in TASKS if INPUTS[t.id]) == len(TASKS)
    for task in TASKS:
        replayed = REPLAYED[task.id]
        records = evaluate_gates(task, ORACLES[task.id], replayed)
        verdicts = evaluate_gates(task, ORACLES[task.id], replayed, records=False)
        assert _verdicts(verdicts.instances) == _verdicts(records.instances)


def test_records_equal_full_constructions_and_make_their_exact_data_once():
    # make_instance leaves fields at their class defaults and the exact data to
    # exact_source: the record must still equal the one __init__ builds from
    # every field, and its exact data be the Fractions of what it read
    from dataclasses import MISSING, fields, replace

    from mmverify.gates.model import LAZY_EXACT, GateInstance

    for f in fields(GateInstance):
        if f.default is not MISSING and f.name not in LAZY_EXACT:
            assert isinstance(getattr(GateInstance, f.name), (str, bool, int, tuple, Fraction, type(None)))
    forms = set()
    for inst in (i for t in TASKS for i in evaluate_gates(t, ORACLES[t.id], REPLAYED[t.id]).instances):
        assert inst.__dict__.get("exact_source") is not None or inst.form in ("finite_domain", "partition_sum")
        built = GateInstance(**{f.name: getattr(inst, f.name) for f in fields(GateInstance)})
        assert built == inst and replace(inst) == inst
        assert inst.__dict__["exact_source"] is None               # made once, then dropped
        if inst.form in ("range", "integer", "order", "identity"):
            assert all(type(x) is Fraction for x in inst.operands) and inst.operands
            forms.add(inst.form)
    assert forms == {"range", "integer", "order", "identity"}


def test_exact_data_refuses_a_verdict_its_fractions_do_not_give():
    # the Fraction form of the predicate re-decides before exact data is handed
    # out (to Lean, the audit, a report's exact block): a record whose verdict
    # disagrees is an internal error, never silently shown
    import pytest

    from mmverify.gates import forms
    from mmverify.gates.exact import read

    gate = next(g for t in TASKS for g in compile_gates(t) if g.form == "range" and g.upper is not None)
    r = read("x", Decimal("1E+200"))                     # above every upper bound in the anchors
    wrong = forms._range(gate, (gate, None, [r]), r.number, ("pass", None), gate.tolerance or Fraction(0))
    with pytest.raises(AssertionError, match="exact data gives"):
        _ = wrong.operands
    right = forms.decide_range(gate, (gate, None, [r]), [r], gate.tolerance or Fraction(0))
    assert right.verdict == "fail" and right.operands == (Fraction(10) ** 200,)


# ------------------------------------------------------------- the quick check

def _quick_agrees(task, data, replayed) -> bool:
    """hard_gates_pass is one-sided: when it answers, every hard and claim
    instance passes and the verified paths are the report's. Returns whether it answered."""
    from mmverify.gates.quick import hard_gates_pass
    from mmverify.replay import gate_view

    quick = hard_gates_pass(task, gate_view(data, replayed), replayed)
    if quick is None:
        return False
    report = evaluate_gates(task, data, replayed)
    hard = [i for i in report.instances if i.scored]      # hard and claim gates
    assert all(i.verdict == "pass" for i in hard), [i.name for i in hard if i.verdict != "pass"]
    assert quick.verified() == report.verified()
    assert not quick.hard_failures and not quick.instances
    _deferred_agrees(task, data, replayed, report)
    return True


def _deferred_agrees(task, data, replayed, report) -> None:
    """score_gates: what a score reads of it, before its instances are made, is
    what the full report says; made, it equals the full report."""
    from mmverify.gates import score_gates

    deferred = score_gates(task, data, replayed)
    assert "instances" not in deferred.__dict__
    assert deferred.hard_failures == report.hard_failures == ()
    assert deferred.hard_gaps() == report.hard_gaps() == ()
    assert deferred.verified() == report.verified()
    assert deferred.any_failure() == any(i.verdict == "fail" for i in report.instances)
    assert pickle.loads(pickle.dumps(deferred)) == report       # pickling makes the instances
    assert deferred == report and deferred.as_dict() == report.as_dict()
    assert deferred.instances is deferred.instances              # made once


def test_quick_check_answers_on_every_oracle():
    for task in TASKS:
        assert _quick_agrees(task, ORACLES[task.id], REPLAYED[task.id]), task.id


@given(case=planted_numbers())
@fuzz_settings(300)
def test_quick_check_is_one_sided_near_every_bound(case):
    task, data = case
    replayed = REPLAYED[task.id]
    answered = _quick_agrees(task, data, replayed)
    if not answered:   # then some hard instance does not pass
        hard = [i for i in evaluate_gates(task, data, replayed).instances if i.scored]
        assert any(i.verdict != "pass" for i in hard)


def test_records_pickle_with_their_detail_and_exact_data():
    import pickle

    task = next(t for t in TASKS if t.id == "cumcm-2025-c-nipt")
    for inst in evaluate_gates(task, ORACLES[task.id], REPLAYED[task.id]).instances:
        back = pickle.loads(pickle.dumps(inst))
        assert back == inst and back.detail == inst.detail and back.as_dict() == inst.as_dict()
        assert back.operands == inst.operands


def test_score_gates_evaluates_now_when_a_hard_gate_does_not_pass():
    """An artifact whose hard gate fails (or cannot be checked) gets its
    instances at once, as evaluate_gates gives them."""
    from mmverify.gates import score_gates

    task = next(t for t in TASKS if t.id == "cumcm-2024-a-dragon-dance")
    data = copy.deepcopy(ORACLES[task.id])
    hard = next(g for g in compile_gates(task) if g.hard and not g.inputs[0].is_list
                and g.inputs[0].segments[0] != "$replay")
    set_at(data, hard.inputs[0].segments, "not a number")
    replayed = run_replay(task, data)
    got = score_gates(task, data, replayed)
    assert "instances" in got.__dict__ and got.hard_failures
    assert got == evaluate_gates(task, data, replayed)


def test_generated_check_names_only_its_own_constants():
    """The generated all-pass source of every task compiles in a namespace of
    its own constants and a few builtins, and is the same when made again."""
    from mmverify.gates.quick import _special
    from mmverify.gates.quickcode import generate

    for task in TASKS:
        source, names = generate(compile_gates(task), _special)
        assert source == generate(compile_gates(task), _special)[0]
        assert "import" not in source and "__" not in source.replace("__class__", "")
        compile(source, task.id, "exec")


GATES = [(t.id, g) for t in TASKS for g in compile_gates(t) if g.form not in ("order", "partition_sum")]


@st.composite
def gate_rows(draw):
    """A gate with one row of values: numbers near the task's constants, and
    for a domain also its members' labels with other case and spacing."""
    tid, gate = draw(st.sampled_from(GATES))
    row = []
    for _ in gate.inputs:
        if gate.form == "finite_domain" and draw(st.booleans()):
            label = draw(st.sampled_from(list(gate.domain) + ["none of them"]))
            row.append(draw(st.sampled_from([label, label.upper(), f"  {label} ", label.replace(" ", "  ")])))
        else:
            row.append(draw(near(CONSTANTS[tid])))
    return gate, row


@given(case=gate_rows())
@fuzz_settings(400)
def test_row_tests_are_the_form_predicates(case):
    """predicates.row_test, what the all-pass check runs on every row, is
    ``verdict_<form>(...) == pass`` on every row of usable values."""
    from mmverify.gates.formtable import FORM_TABLE
    from mmverify.gates.predicates import row_test

    gate, row = case
    tol = gate.tolerance or Fraction(0)
    verdict = FORM_TABLE[gate.form].verdict
    for values in (row, [Fraction(x) if not isinstance(x, str) else x for x in row]):
        assert row_test(gate, tol, verdict)(values) == (verdict(gate, values, tol)[0] == "pass")


@given(parts=st.lists(st.one_of(st.integers(-10**30, 10**30),
                                st.decimals(allow_nan=False, allow_infinity=False),
                                st.builds(lambda m, e: Decimal(f"{m}E{e}"), st.integers(-999, 999),
                                          st.one_of(st.integers(-30, 30), st.integers(-60_000, 60_000)))), max_size=8),
       total=st.decimals(allow_nan=False, allow_infinity=False),
       tol=st.sampled_from([Fraction(0), Fraction(1, 3), Fraction(1, 100), Fraction(5)]))
@fuzz_settings(150)
def test_partition_sum_in_decimal_is_the_fraction_sum(parts, total, tol):
    """sum_holds (the Decimal sum, or Fractions where it would round) is
    partition_holds on the Fractions, for any magnitudes."""
    from mmverify.gates.predicates import partition_holds, sum_holds

    want = partition_holds([Fraction(p) for p in parts], Fraction(total), tol)[1]
    assert sum_holds([*parts, total], tol) == want
    assert sum_holds([*parts, Fraction(total)], tol) == want


def test_a_tasks_first_artifact_is_evaluated_at_once():
    """A process that scores one artifact of a task never generates its
    all-pass check (score_gates evaluates that first one at once); from the
    second on the check runs and the records wait."""
    from dataclasses import replace

    from mmverify.gates import score_gates
    from mmverify.gates.quick import _PLANS, worth_it

    wordle = next(t for t in TASKS if t.id == "mcm-2023-c-wordle")
    task = replace(wordle, gates=tuple(list(wordle.gates)))    # compiled anew: gates not seen yet
    gates = compile_gates(task)
    assert id(gates) not in _PLANS or _PLANS[id(gates)][0] is not gates
    first = score_gates(task, ORACLES[task.id], REPLAYED[task.id])
    assert "instances" in first.__dict__ and (id(gates) not in _PLANS or _PLANS[id(gates)][0] is not gates)
    second = score_gates(task, ORACLES[task.id], REPLAYED[task.id])
    assert "instances" not in second.__dict__ and worth_it(task)
    assert first == second


def test_deferred_records_made_by_several_threads_at_once():
    """Threads reading one deferred report and panel at the same time all get
    the records (equal ones), and none fails."""
    from concurrent.futures import ThreadPoolExecutor

    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.gates.quick import hard_gates_pass
    from mmverify.replay import gate_view

    task = next(t for t in TASKS if t.id == "cumcm-2025-c-nipt")
    art = parse_file(task.oracle_path)
    assert hard_gates_pass(task, gate_view(art.data, REPLAYED[task.id]), REPLAYED[task.id]) is not None
    for _ in range(5):
        score_artifact(task, art)          # past the task's first artifact: deferred from here on
        report = score_artifact(task, art)
        assert "instances" not in report.gates.__dict__
        with ThreadPoolExecutor(8) as pool:
            docs = list(pool.map(lambda r: r.as_dict(), [report] * 16))
        assert all(d == docs[0] for d in docs)


def test_records_now_or_when_read_give_the_same_report():
    """score_artifact(..., records=True), what a batch row and the verifier
    ask for, makes the instances and records at once; the report is the one
    whose records wait, on every oracle and on one breaking a hard gate."""
    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.reading.artifact import from_python

    for task in TASKS:
        art = parse_file(task.oracle_path)
        score_artifact(task, art)                       # past the task's first artifact
        now, later = score_artifact(task, art, records=True), score_artifact(task, art)
        assert "instances" in now.gates.__dict__ and "metrics" in now.panel.__dict__
        assert now.as_dict() == later.as_dict() and now == later
    task = next(t for t in TASKS if t.id == "cumcm-2024-a-dragon-dance")
    data = copy.deepcopy(ORACLES[task.id])
    hard = next(g for g in compile_gates(task) if g.hard and not g.inputs[0].is_list
                and g.inputs[0].segments[0] != "$replay")
    set_at(data, hard.inputs[0].segments, "not a number")
    art = from_python(data)
    assert score_artifact(task, art, records=True).as_dict() == score_artifact(task, art).as_dict()


def test_an_all_pass_check_that_cannot_be_compiled_always_declines(monkeypatch):
    """Should the generated check not compile, the task's artifacts are
    evaluated instance by instance: the same reports, nothing raised."""
    from dataclasses import replace

    from mmverify.gates import quick, score_gates

    def refuse(*_args):
        raise SyntaxError("too many nested parentheses")

    wordle = next(t for t in TASKS if t.id == "mcm-2023-c-wordle")
    task = replace(wordle, gates=tuple(list(wordle.gates)))
    monkeypatch.setattr(quick, "compile_check", refuse)
    for _ in range(3):
        got = score_gates(task, ORACLES[task.id], REPLAYED[task.id])
        assert "instances" in got.__dict__
        assert got == evaluate_gates(task, ORACLES[task.id], REPLAYED[task.id])
    assert quick.hard_gates_pass(task, ORACLES[task.id], REPLAYED[task.id]) is None
