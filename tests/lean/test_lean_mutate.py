"""The mutation operators without Lean: each operator's worked example, its
golden mutant of a generated file, exact falsity of every statement mutant,
and the killed / stillborn / survived classification.

Set MMVERIFY_UPDATE_GOLDEN=1 to rewrite tests/lean/golden/mutants/*.txt.
"""
from __future__ import annotations

import os

import pytest

from mmverify.lean_gen import mutate, mutate_run
from mmverify.lean_gen import runner
from mmverify.lean_gen import syntax

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
TARGETS = ("forms.lean", "forms_violated.lean", "dragon_dance_refuted.lean")


def _read(name):
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as fh:
        return fh.read()


def target_texts():
    return [(name, _read(name)) for name in TARGETS]


def mini_file(statement: str, form: str = "range") -> str:
    return ("/-\n  example\n-/\n\nnamespace Ex\n\n"
            f"/-- gate g ({form}, level A, hard): example\n    scale: 10^0; example -/\n"
            f"theorem ex : {statement} := by decide\n#print axioms ex\n\nend Ex\n")


EXAMPLE_FORM = {"change_partition_total": "partition_sum", "remove_domain_member": "finite_domain"}


def test_at_least_ten_operators_with_unique_names():
    names = [op.name for op in mutate.OPERATORS]
    assert len(names) >= 10 and len(set(names)) == len(names)
    assert {op.expect for op in mutate.OPERATORS} == {mutate.KERNEL, mutate.AUDIT}


@pytest.mark.parametrize("op", mutate.OPERATORS, ids=lambda op: op.name)
def test_worked_example(op):
    before, after = op.example
    if op.proof is None:
        m = mutate.apply(op, mini_file(before, EXAMPLE_FORM.get(op.name, "range")))
        assert m is not None
        assert m.after == f"theorem ex : {after} := by decide"
        assert syntax.eval_prop(syntax.parse_prop(before)) is True
        assert syntax.eval_prop(syntax.parse_prop(after)) is False
    else:
        m = mutate.apply(op, mini_file("30 ≤ 40"), spelling="native_decide")
        assert m is not None and before in m.before
        head, _, tail = after.partition("…")
        assert head.strip() in m.after and tail.strip() in m.after


@pytest.mark.parametrize("op", mutate.OPERATORS, ids=lambda op: op.name)
def test_golden_mutant_of_a_generated_file(op):
    found = None
    for label, text in target_texts():
        found = mutate.apply(op, text, label, spelling="native_decide")
        if found:
            break
    assert found is not None, f"{op.name} found no site in {TARGETS}"
    report = (f"operator: {op.name}\nfile: {found.label}\ntheorem: {found.target}\n"
              f"rejected by: {found.expect}\n"
              + "".join(f"- {line}\n" for line in found.before.split("\n"))
              + "".join(f"+ {line}\n" for line in found.after.split("\n")))
    path = os.path.join(GOLDEN, "mutants", f"{op.name}.txt")
    if os.environ.get("MMVERIFY_UPDATE_GOLDEN") == "1":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(report)
    with open(path, encoding="utf-8") as fh:
        assert report == fh.read()
    # the mutant differs from its file in that theorem only
    original = dict(target_texts())[found.label]
    assert found.text.replace(found.after, found.before) == original


@pytest.mark.parametrize("op", [op for op in mutate.OPERATORS if op.proof is None], ids=lambda op: op.name)
def test_statement_mutants_are_false(op):
    for label, text in target_texts():
        m = mutate.apply(op, text, label)
        if m is None:
            continue
        stmt = m.after.split(" : ", 1)[1].rsplit(" := ", 1)[0]
        assert syntax.eval_prop(syntax.parse_prop(stmt)) is False


def test_native_decide_is_spelled_for_the_target():
    op = mutate.operator("proof_native_decide")
    assert "by nativeDecide" in mutate.apply(op, mini_file("1 ≤ 2"), spelling="nativeDecide").after
    assert "by native_decide" in mutate.apply(op, mini_file("1 ≤ 2"), spelling="native_decide").after


def test_axiom_mutant_proves_a_false_statement_with_its_axiom():
    m = mutate.apply(mutate.operator("axiom_proof"), mini_file("1 ≤ 2"))
    assert m.after.splitlines()[0] == f"axiom {mutate.MUTANT_AXIOM} : False"
    assert m.after.splitlines()[1] == f"theorem ex : ¬ (1 ≤ 2) := False.elim {mutate.MUTANT_AXIOM}"


def test_every_operator_finds_a_site_on_the_anchors():
    from mmverify.lean_gen import project

    texts = [(f.relpath, f.text) for f in project.anchor_files()]
    found = mutate.mutants(texts)
    missing = [x[0] for x in found if isinstance(x, tuple)]
    assert missing == []


# ------------------------------------------------------------ classification

def _fake_run(results, stray=()):
    return runner.RunResult(results, "Lean (test)", "test", 0.01, 1, tuple(stray))


def _r(name, status, negated=False, axioms=(), errors=(), parse_error=False):
    return runner.DeclResult(name, status, negated, axioms, tuple(errors), parse_error)


@pytest.fixture
def mutant():
    return mutate.apply(mutate.operator("negate_true_statement"), mini_file("1 ≤ 2"))


@pytest.mark.parametrize("target, probe, stray, outcome, by", [
    (_r("Ex.ex", runner.FAILED, errors=["failed to reduce to 'true'"]), _r("P", runner.AUDIT_FAILED, axioms=None),
     (), mutate.KILLED, mutate.KERNEL),
    (_r("Ex.ex", runner.AUDIT_FAILED, axioms=("sorryAx",)), _r("P", runner.AUDIT_FAILED, axioms=None),
     (), mutate.KILLED, mutate.AUDIT),
    (_r("Ex.ex", runner.PROVED), _r("P", runner.AUDIT_FAILED, axioms=None), (), mutate.SURVIVED, None),
    (_r("Ex.ex", runner.FAILED, errors=["unknown tactic"], parse_error=True),
     _r("P", runner.AUDIT_FAILED, axioms=None), (), mutate.STILLBORN, None),
    (_r("Ex.ex", runner.FAILED, errors=["x"]), _r("P", runner.FAILED, errors=["type mismatch"]), (),
     mutate.STILLBORN, None),
    (_r("Ex.ex", runner.FAILED, errors=["x"]), _r("P", runner.AUDIT_FAILED, axioms=None), ("line 1: junk",),
     mutate.STILLBORN, None),
])
def test_judge_classification(monkeypatch, mutant, target, probe, stray, outcome, by):
    results = {"Ex.ex": target, f"{mutate_run.PROBE_NS}.probe": probe}
    monkeypatch.setattr(runner, "check_text", lambda *a, **k: _fake_run(results, stray))
    got = mutate_run.judge(mutant, toolchain=object(), version="test")
    assert got.outcome == outcome and got.rejected_by == by


def test_probe_restates_the_mutated_statement(mutant):
    probe = mutate_run.probe_text(mutant)
    assert "theorem probe : ¬ (1 ≤ 2) := sorry" in probe


def test_value_mutants_one_per_form_each_false():
    """One mutant per gate form, made by changing ONE artifact value (through the
    gate layer and the IR), never the statement text: each states a false claim."""
    from mmverify.lean_gen import project
    from mmverify.tasks import default_anchors_dir

    files = project.anchor_files(default_anchors_dir())
    ms = mutate.value_mutants(files, default_anchors_dir())
    assert [m.operator for m in ms] == [op.name for op in mutate.VALUE_OPERATORS]
    for m in ms:
        assert isinstance(m, mutate.Mutant), m
        assert m.expect == mutate.KERNEL and "->" in m.label
        (site,) = [s for s in mutate.theorems(m.text) if s.name == m.target]
        assert syntax.eval_prop(site.statement) is False
        original = next(s for s in mutate.theorems(next(f.text for f in files if m.label.startswith(f.relpath)))
                        if s.name == m.target)
        assert syntax.eval_prop(original.statement) is True
        assert m.text.count("\n") == next(f.text for f in files if m.label.startswith(f.relpath)).count("\n")
