"""Emitted Lean text: golden files (one obligation per invariant form, and the
dragon-dance identity proved and refuted), determinism, and the
well-formedness checker on every emitted file and on broken ones.

Set MMVERIFY_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
"""
from __future__ import annotations

import os

import pytest
from tests.helpers.gatekit import Str, data, gate, lab_task

from mmverify.gates import evaluate_gates
from mmverify.lean_gen import emit, ir, project, wellformed

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")

FORM_GATES = [
    gate("mirror.side_range", "range", path="result.x", min="2", max="8"),
    gate("mirror.count_integer", "integer", path="result.n"),
    gate("plan.binary", "integer", path="result.w", binary=True),
    gate("q.min_le_mean_le_max", "order", paths=["result.y", "result.z", "result.total"]),
    gate("q5.handle_speed_limit", "identity", level="B", expr="v_head * ratio_max <= 2",
         vars={"v_head": "result.y", "ratio_max": "result.z"}),
    gate("plan.case_domain", "finite_domain", path="result.n", values=["1", "2", "3"]),
    gate("plan.label_domain", "finite_domain", path="result.label", values=["alpha", "beta"]),
    gate("plot.area_partition", "partition_sum", parts=["result.x", "result.y"], total="result.total"),
]
FORM_DATA = dict(x="2.5", y="1.246266", z="1.604793", n="3", w="1", label=Str("Beta"), total="3.746266")


def golden(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("MMVERIFY_UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(path, encoding="utf-8") as fh:
        assert text == fh.read(), f"emitted text differs from {path} (MMVERIFY_UPDATE_GOLDEN=1 to accept)"


@pytest.fixture(scope="module")
def anchors(tmp_path_factory):
    return str(tmp_path_factory.mktemp("anchors"))


def file_for(task, values, tag):
    report = evaluate_gates(task, data(**values))
    oset = ir.obligation_set(task, report, f"golden {tag}", emit.namespace_for(task.id, tag))
    return project.render(oset), oset


def test_golden_one_obligation_per_form(anchors):
    task = lab_task(anchors, FORM_GATES, task_id="t-forms")
    text, oset = file_for(task, FORM_DATA, "Oracle")
    forms = {o.form for o in oset.obligations}
    assert forms == {"range", "integer", "order", "identity", "finite_domain", "partition_sum"}
    assert all(o.holds for o in oset.obligations)
    golden("forms.lean", text)


def test_golden_forms_violated(anchors):
    task = lab_task(anchors, FORM_GATES, task_id="t-forms")
    bad = dict(x="1.5", y="1.406276", z="1.604793", n="2.5", w="2", label=Str("gamma"), total="1.5")
    text, oset = file_for(task, bad, "Violations")
    assert oset.obligations and not any(o.holds for o in oset.obligations)
    golden("forms_violated.lean", text)


def test_golden_dragon_dance(anchors):
    spec = gate("q5.handle_speed_limit", "identity", level="B", expr="v_head * ratio_max <= 2",
                vars={"v_head": "result.x", "ratio_max": "result.y"})
    task = lab_task(anchors, [spec], task_id="cumcm-2024-a-dragon-dance")
    proved, o1 = file_for(task, dict(x="1.246266", y="1.604793"), "Oracle")
    refuted, o2 = file_for(task, dict(x="1.406276", y="1.604793"), "PaperA016Original")
    assert "theorem cumcm_2024_a_dragon_dance_q5_handle_speed_limit : " \
           "1246266 * 1604793 ≤ 2 * 1000000 * 1000000 := by decide" in proved
    assert "theorem cumcm_2024_a_dragon_dance_q5_handle_speed_limit : " \
           "¬ (1406276 * 1604793 ≤ 2 * 1000000 * 1000000) := by decide" in refuted
    assert o1.obligations[0].expected == "proved" and o2.obligations[0].expected == "refuted"
    golden("dragon_dance_proved.lean", proved)
    golden("dragon_dance_refuted.lean", refuted)


def test_emission_is_deterministic(anchors):
    task = lab_task(anchors, FORM_GATES, task_id="t-forms")
    assert file_for(task, FORM_DATA, "Oracle")[0] == file_for(task, FORM_DATA, "Oracle")[0]


def test_comment_text_cannot_open_or_close_a_comment():
    for evil in ["a -/ b", "/- x", "-/-/", "/-/", "x\n-/\ny", "ü/-", "a--/b"]:
        out = emit.comment_text(evil)
        assert "/-" not in out and "-/" not in out and "\n" not in out
    assert emit.comment_text("x" * 1000, limit=20).endswith("...")


# --------------------------------------------------------------- checker

def test_every_anchor_file_is_well_formed():
    files = project.anchor_files()
    assert files
    for f in files:
        assert wellformed.check(f.text) == [], f.relpath


@pytest.fixture(scope="module")
def good(anchors):
    task = lab_task(anchors, FORM_GATES, task_id="t-forms")
    return file_for(task, FORM_DATA, "Oracle")[0]


def _replace_first_proof(text, new):
    return text.replace(":= by decide", new, 1)


@pytest.mark.parametrize("mutation, expect", [
    (lambda t: _replace_first_proof(t, ":= sorry"), "expected 'theorem"),
    (lambda t: _replace_first_proof(t, ":= by native_decide"), "expected 'theorem"),
    (lambda t: _replace_first_proof(t, ":= by nativeDecide"), "expected 'theorem"),
    (lambda t: _replace_first_proof(t, ":= by decide\naxiom bad : False"), "expected '#print axioms"),
    (lambda t: "import Mathlib\n" + t, "header comment"),
    (lambda t: t.replace("namespace ", "set_option maxRecDepth 100000\nnamespace ", 1), "namespace"),
    (lambda t: t.replace(" -/\ntheorem", " -/ -/\ntheorem", 1), "comment closer"),
    (lambda t: t.replace("/-- gate", "/-- gate /-", 1), "nested comment"),
    (lambda t: t.replace(" ≤ ", " ≥ ", 1), "outside the subset"),
    (lambda t: t.replace("∧", "∧ (", 1), "outside the subset"),
    (lambda t: t.replace("25 ≤ 80", "(25 ≤ 80)", 1), "outside the subset"),
    (lambda t: t.replace("theorem t_forms_mirror", "theorem t-forms.mirror", 1), "expected 'theorem"),
    (lambda t: t.replace("#print axioms t_forms_mirror_side_range", "#print axioms other", 1), "#print axioms"),
    (lambda t: t.replace("end TForms_Oracle", "end Other", 1), "does not close"),
    (lambda t: t + "#eval 1\n", "after the end"),
    (lambda t: t.rstrip("\n"), "newline"),
    (lambda t: t.replace("20 ≤ 25", "20 ≤ 5 - 3", 1), "Nat relation"),
])
def test_checker_rejects_broken_files(good, mutation, expect):
    assert wellformed.check(good) == []
    broken = mutation(good)
    assert broken != good
    problems = wellformed.check(broken)
    assert problems, "a broken file passed the checker"
    assert any(expect in p for p in problems), problems


def test_checker_finds_forbidden_words_outside_comments(good):
    assert wellformed.forbidden_words(good) == []
    assert wellformed.forbidden_words("theorem x : 1 = 1 := by native_decide")
    assert wellformed.forbidden_words("/- sorry in a comment is harmless -/") == []
