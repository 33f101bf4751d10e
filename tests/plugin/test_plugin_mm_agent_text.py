"""Opt-in text extraction (``--from-text``): label patterns declared as data in
the task folder, values marked low-trust, never by default."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from tests.helpers.mm_agent_fixture import TASK, build_run

from mmverify.plugin.mm_agent import adapt_run
from mmverify.tasks import TaskLoadError

# the required containers the adapter adds, empty, when a run gives nothing inside them
CONTAINERS = {"dual_temporal_bayes": {}, "momentum_model": {}, "randomness_tests": {}}

BUNDLED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "anchors")
LABELS = {"labels": [
    {"label": "Median Ljung-Box p-value", "path": "experiment_result.randomness_tests.median_ljung_box_p"},
    {"label": "Median runs-test p-value", "path": "experiment_result.randomness_tests.median_runs_p",
     "fields": ["execution_result"]},
    {"label": "Matches rejecting independence at", "path":
     "experiment_result.randomness_tests.matches_rejecting_iid_at_5pct"},
    {"label": "Loaded", "path": "experiment_result.data_source.points"},
]}


def anchors_with(tmp_path, labels):
    anchors = tmp_path / "anchors"
    shutil.copytree(os.path.join(BUNDLED, TASK), anchors / TASK)
    index = json.load(open(os.path.join(BUNDLED, "index.json")))
    index["tasks"] = [t for t in index["tasks"] if t["id"] == TASK]
    (anchors / "index.json").write_text(json.dumps(index))
    if labels is not None:
        (anchors / TASK / "mm_agent_labels.json").write_text(json.dumps(labels))
    return str(anchors)


def test_labelled_numbers_are_taken_only_when_asked_and_marked_low_trust(tmp_path):
    anchors = anchors_with(tmp_path, LABELS)
    run = build_run(str(tmp_path / "run"), block=False)
    assert adapt_run(run, TASK, anchors_dir=anchors).artifact == {"problem_id": "2024-C", "task_id": TASK, "experiment_result": CONTAINERS}
    proc = subprocess.run([sys.executable, "-m", "mmverify", "adapt", "mm-agent", run, "--task", TASK,
                           "--anchors", anchors, "--from-text"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # most fields have no label: still incomplete
    art = json.loads(proc.stdout)
    tests = art["experiment_result"]["randomness_tests"]
    assert tests == {"median_ljung_box_p": 0.712832, "median_runs_p": 0.290172}
    prov = art["_provenance"]
    assert set(prov) == {"experiment_result.randomness_tests.median_ljung_box_p",
                         "experiment_result.randomness_tests.median_runs_p",
                         "experiment_result.data_source.points"}
    assert all(p["trust"] == "low" and p["source"] == "text" for p in prov.values())
    assert prov["experiment_result.randomness_tests.median_runs_p"]["field"] == "execution_result"
    assert "LOW TRUST (text) experiment_result.randomness_tests.median_ljung_box_p = 0.712832" in proc.stderr
    # "at 5%: 0" -- the number after the label is a percentage: not converted, not taken
    assert "matches_rejecting_iid_at_5pct" not in tests
    assert "a percentage" in proc.stderr
    assert art["experiment_result"]["data_source"] == {"points": 7284}


def test_results_files_win_and_disagreement_is_reported(tmp_path):
    anchors = anchors_with(tmp_path, LABELS)
    run = build_run(str(tmp_path / "run"), order=(1, 2, 3))
    f = os.path.join(run, "code", "main2.results.json")
    data = json.load(open(f))
    data["experiment_result.randomness_tests.median_ljung_box_p"] = 0.5
    json.dump(data, open(f, "w"))
    r = adapt_run(run, TASK, anchors_dir=anchors, from_text=True)
    assert r.artifact["experiment_result"]["randomness_tests"]["median_ljung_box_p"] == 0.5
    assert "_provenance" not in r.artifact
    assert any("a results file gives this field" in s["reason"] for s in r.report["from_text"]["skipped"])


def test_ambiguous_text_and_failed_subtasks_are_not_used(tmp_path):
    labels = {"labels": [{"label": "Strongest transition probability", "path":
                          "experiment_result.dual_temporal_bayes.strongest_transition.probability"},
                         {"label": "Median Ljung-Box p-value",
                          "path": "experiment_result.randomness_tests.median_ljung_box_p"}]}
    anchors = anchors_with(tmp_path, labels)
    run = build_run(str(tmp_path / "run"), block=False, fail=(3,))
    sol_file = os.path.join(run, "json", "2024_C.json")
    sol = json.load(open(sol_file))
    sol["tasks"][0]["solution_interpretation"] += " Median Ljung-Box p-value: 0.71."
    json.dump(sol, open(sol_file, "w"))
    r = adapt_run(run, TASK, anchors_dir=anchors, from_text=True)
    assert r.artifact == {"problem_id": "2024-C", "task_id": TASK, "experiment_result": CONTAINERS}
    reasons = " | ".join(s["reason"] for s in r.report["from_text"]["skipped"])
    assert "ambiguous: 0.712832" in reasons and "0.71 (task 2 solution_interpretation" in reasons
    assert "text of entries whose code did not pass is not read: task 3" in reasons


@pytest.mark.parametrize("labels, field", [
    ({"labels": [{"label": "x", "path": "experiment_result.unknown"}]}, "labels[0].path"),
    ({"labels": [{"label": "x", "path": "experiment_result.top_swing_features[0].feature"}]}, "labels[0].path"),
    ({"labels": [{"label": "", "path": "experiment_result.data_source.points"}]}, "labels[0].label"),
    ({"labels": [{"label": "x", "path": "experiment_result.data_source.points", "fields": ["markdown"]}]},
     "labels[0].fields"),
    ({"labels": [{"label": "x", "path": "experiment_result.data_source.points", "regex": ".*"}]}, "labels[0]"),
    ({"patterns": []}, "(top level)"),
])
def test_malformed_label_files_are_task_errors(tmp_path, labels, field):
    anchors = anchors_with(tmp_path, labels)
    run = build_run(str(tmp_path / "run"), block=False, no_code=True)
    with pytest.raises(TaskLoadError) as exc:
        adapt_run(run, TASK, anchors_dir=anchors, from_text=True)
    assert exc.value.field == field
    proc = subprocess.run([sys.executable, "-m", "mmverify", "adapt", "mm-agent", run, "--task", TASK,
                           "--anchors", anchors, "--from-text"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3 and "mm_agent_labels.json" in proc.stderr


def test_without_a_label_file_text_gives_nothing(tmp_path):
    anchors = anchors_with(tmp_path, None)
    run = build_run(str(tmp_path / "run"), block=False)
    r = adapt_run(run, TASK, anchors_dir=anchors, from_text=True)
    assert r.artifact == {"problem_id": "2024-C", "task_id": TASK, "experiment_result": CONTAINERS}
    assert r.report["from_text"]["labels_file"] is None and r.report["from_text"]["used"] == []
