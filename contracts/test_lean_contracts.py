"""Contracts of the Lean layer over the bundled anchors.

Without Lean:
* the committed ``LeanProofs/`` files are exactly what ``mmverify lean emit
  --anchors`` generates now (no drift), for every task present;
* every emitted file is well-formed, every statement is true by exact
  evaluation, and every decided gate instance has its obligation.

With Lean (``@pytest.mark.lean``; skipped with the reason otherwise,
``MMVERIFY_REQUIRE_LEAN=1`` makes the skip a failure):
* gate/Lean agreement: each obligation is ``proved`` (pass) or ``refuted``
  (fail) exactly as the gate layer says, with axioms within {propext, Quot.sound};
* the mutation suite kills every mutant, none stillborn: the text operators
  and one value mutant per gate form (one artifact value changed, the file
  keeping the gate's old verdict).
"""
from __future__ import annotations

import os

import pytest

from mmverify.lean_gen import project, runner, syntax, wellformed
from mmverify.lean_gen.testing import require_lean
from mmverify.tasks import default_anchors_dir, load_index

ANCHORS = default_anchors_dir()
IDS = [t["id"] for t in load_index(ANCHORS)]
PRESENT = [t for t in IDS if os.path.exists(os.path.join(ANCHORS, t, "task.json"))]
LEANPROOFS = runner.project_dir()


@pytest.fixture(scope="module")
def files():
    return project.anchor_files(ANCHORS, PRESENT)


def test_committed_lean_files_do_not_drift(files):
    if not LEANPROOFS.is_dir():
        pytest.skip("no LeanProofs/ folder in this installation")
    d = project.drift(files, LEANPROOFS)
    # files of tasks whose anchors are not present yet are not judged
    absent = [project.camel(t) for t in IDS if t not in PRESENT]
    stale = [s for s in d["stale"] if not any(f"/{a}" in s for a in absent)]
    assert d["changed"] == [] and d["missing"] == [] and stale == [], (
        f"LeanProofs/ differs from the anchors ({d}); run `mmverify lean emit --anchors`")


def test_toolchain_is_pinned():
    text = (LEANPROOFS / "lean-toolchain").read_text(encoding="utf-8").strip()
    assert text == project.TOOLCHAIN and text.startswith("leanprover/lean4:v4.")


def test_every_file_is_well_formed_and_every_statement_true(files):
    for f in files:
        assert wellformed.check(f.text) == [], f.relpath
        for o in f.oset.obligations:
            assert syntax.eval_prop(o.statement) is True, (f.relpath, o.name)
            assert syntax.eval_prop(o.claim) == o.holds


def test_every_decided_instance_has_an_obligation(files):
    from mmverify.reading.artifact import parse_file
    from mmverify.gates import evaluate_gates
    from mmverify.tasks import load_task

    oracles = {f.oset.task_id: f for f in files if f.oset.artifact == "oracle artifact"}
    for tid in PRESENT:
        task = load_task(tid, ANCHORS)
        report = evaluate_gates(task, parse_file(task.oracle_path).data)
        decided = [i for i in report.instances if i.decided]
        f = oracles[tid]
        independent = [u for u in f.oset.unstated if u.reason == "independent_of_values"]
        assert len(f.oset.obligations) + len(f.oset.vouched) + len(independent) == len(decided), tid
        assert [u for u in f.oset.unstated if u.reason == "not_expressible"] == [], tid
        # what is left out of the kernel's count is named: a self-comparison reads one value twice
        for u in independent:
            assert len(set(u.sources)) < len(u.sources), (tid, u)


def test_dragon_dance_reference_case(files):
    by = {f.relpath: f for f in files}
    orig = by.get("Obligations/Cumcm2024ADragonDance/PaperA016Original.lean")
    oracle = by.get("Obligations/Cumcm2024ADragonDance.lean")
    if orig is None or oracle is None:
        pytest.skip("dragon-dance anchors not present")
    assert "theorem cumcm_2024_a_dragon_dance_q5_handle_speed_limit : " \
           "¬ (1406276 * 1604793 ≤ 2 * 1000000 * 1000000) := by decide" in orig.text
    assert "theorem cumcm_2024_a_dragon_dance_q5_handle_speed_limit : " \
           "1246266 * 1604793 ≤ 2 * 1000000 * 1000000 := by decide" in oracle.text


@pytest.mark.lean
def test_gate_and_lean_verdicts_agree(files):
    from mmverify.lean_gen import check

    tc = require_lean()
    report = check.check_files(files, tc)
    assert report.stray_errors == ()
    bad = [(r.file, r.instance, r.expected, r.lean, r.errors[:1]) for r in report.disagreements]
    assert bad == [], bad
    for r in report.rows:
        assert set(r.axioms or ()) <= runner.ALLOWED_AXIOMS


@pytest.mark.lean
def test_mutation_suite_kills_every_mutant(files):
    from mmverify.lean_gen import mutate, mutate_run

    tc = require_lean()
    extra = mutate.value_mutants(files, ANCHORS)
    suite = mutate_run.run_suite([(f.relpath, f.text) for f in files], tc, mutate.OPERATORS, extra)
    assert suite.total == len(mutate.OPERATORS) + len(mutate.VALUE_FORMS) and suite.not_applicable == ()
    assert {o.mutant.operator for o in suite.outcomes} >= {op.name for op in mutate.VALUE_OPERATORS}
    assert suite.stillborn == 0, [o.as_dict() for o in suite.outcomes if o.outcome != mutate.KILLED]
    assert suite.killed == suite.total, [o.as_dict() for o in suite.outcomes if o.outcome != mutate.KILLED]
