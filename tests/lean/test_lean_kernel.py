"""Real kernel runs (``@pytest.mark.lean``): the golden files are proved or
refuted as their gates say, the axiom audit is clean, the runner sees through
cheating proofs, and every mutation operator's mutant is killed.

Skipped with the reason when no Lean 4 toolchain is found; with
MMVERIFY_REQUIRE_LEAN=1 the skip is a failure.
"""
from __future__ import annotations

import os

import pytest

from mmverify.lean_gen import mutate, mutate_run
from mmverify.lean_gen import runner
from mmverify.lean_gen.testing import require_lean

pytestmark = pytest.mark.lean

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
FILES = ("forms.lean", "forms_violated.lean", "dragon_dance_proved.lean", "dragon_dance_refuted.lean")


def _read(name):
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def toolchain():
    return require_lean()


def test_golden_files_in_one_process(toolchain):
    res = runner.check_files([_read(n) for n in FILES], toolchain)
    assert res.stray_errors == ()
    by_status = res.counts()
    assert by_status[runner.FAILED] == 0 and by_status[runner.AUDIT_FAILED] == 0, res.output[:2000]
    for name, r in res.results.items():
        expected = runner.REFUTED if ("Violations" in name or "Original" in name) else runner.PROVED
        assert r.status == expected, (name, r)
        assert set(r.axioms) <= runner.ALLOWED_AXIOMS
    assert res.results["Cumcm2024ADragonDance_PaperA016Original."
                       "cumcm_2024_a_dragon_dance_q5_handle_speed_limit"].status == runner.REFUTED
    assert res.results["Cumcm2024ADragonDance_Oracle."
                       "cumcm_2024_a_dragon_dance_q5_handle_speed_limit"].status == runner.PROVED


def test_false_statement_fails_and_cheats_fail_the_audit(toolchain):
    spelling = mutate_run.native_spelling(toolchain)
    text = ("namespace K\n"
            "theorem f : 1406276 * 1604793 ≤ 2 * 1000000 * 1000000 := by decide\n#print axioms f\n"
            "theorem s : 1 = 2 := sorry\n#print axioms s\n"
            f"theorem n : 2 ≤ 3 := by {spelling}\n#print axioms n\n"
            "axiom bad : False\ntheorem a : 1 = 2 := False.elim bad\n#print axioms a\n"
            "theorem i : (-3 : Int) * (2 : Int) < (0 : Int) := by decide\n#print axioms i\n"
            "end K\n")
    res = runner.check_text(text, toolchain)
    assert res.results["K.f"].status == runner.FAILED and not res.results["K.f"].parse_error
    assert res.results["K.s"].status == runner.AUDIT_FAILED and "sorryAx" in res.results["K.s"].axioms
    assert res.results["K.n"].status == runner.AUDIT_FAILED
    assert any("ofReduceBool" in a or "trustCompiler" in a for a in res.results["K.n"].axioms)
    assert res.results["K.a"].status == runner.AUDIT_FAILED and "K.bad" in res.results["K.a"].axioms
    assert res.results["K.i"].status == runner.PROVED


def test_every_operator_is_killed_on_the_golden_files(toolchain):
    suite = mutate_run.run_suite([(n, _read(n)) for n in FILES], toolchain)
    assert suite.not_applicable == ()
    details = [o.as_dict() for o in suite.outcomes if o.outcome != mutate.KILLED]
    assert suite.stillborn == 0 and suite.survived == 0, details
    assert suite.killed == suite.total == len(mutate.OPERATORS)
    rejected = {o.mutant.operator: o.rejected_by for o in suite.outcomes}
    assert rejected == {op.name: op.expect for op in mutate.OPERATORS}
