"""MM-Agent adapter on run folders in MM-Agent's own layout (see mm_agent_fixture):
the emitted block, a structured run scored against the same numbers handed in
directly, the same run without the block, a run without code, a failed
subtask, reordered tasks, stray keys and files. Through the real CLI."""
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.mm_agent_fixture import NUMBERS, STAMP, TASK, build_run, direct_artifact, emitted_block, script

from mmverify.plugin.mm_agent import adapt_run, read_results, render_report
from mmverify.plugin.mm_agent_layout import AMBIGUOUS, Entry, UNMATCHED, match_entries
from mmverify.tasks import load_task, schema_at
from mmverify.reading import paths

# the required containers the adapter adds, empty, when a run gives nothing inside them
CONTAINERS = {"dual_temporal_bayes": {}, "momentum_model": {}, "randomness_tests": {}}
BUNDLED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "anchors")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, text=True, timeout=120)


def adapt(run, *args):
    return cli("adapt", "mm-agent", run, "--task", TASK, *args)


def score(path):
    proc = cli("score", str(path), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    report.pop("artifact")
    return report


@pytest.fixture(scope="module")
def structured(tmp_path_factory):
    return build_run(str(tmp_path_factory.mktemp("structured")))


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return build_run(str(tmp_path_factory.mktemp("plain")), block=False)


# ------------------------------------------------------------- the block

def test_emit_prompt_names_every_scored_and_gated_field_with_its_unit():
    proc = cli("adapt", "mm-agent", "--emit-prompt", TASK)
    assert proc.returncode == 0, proc.stderr
    task = load_task(TASK)
    for m in task.metrics:
        top = m.path.text.split("[")[0]
        assert top in proc.stdout, m.path.text
    assert "experiment_result.data_source.matches [count] number (gated)" in proc.stdout
    assert "experiment_result.randomness_tests.median_runs_p [1] number (scored, gated)" in proc.stdout
    assert "warning_correlation [1] number (scored, gated)" in proc.stdout
    assert "main<k>.results.json" in proc.stdout and "def write_results(results):" in proc.stdout
    compile(proc.stdout, "block", "exec")  # pastes into a Python code template as it is
    assert proc.stdout == emitted_block()


def test_emit_prompt_usage_and_task_errors(tmp_path):
    assert cli("adapt", "mm-agent", "--emit-prompt", "no-such-task").returncode == 3
    assert cli("adapt", "mm-agent", str(tmp_path), "--emit-prompt", TASK).returncode == 2
    assert cli("adapt", "mm-agent").returncode == 2
    assert cli("adapt", "mm-agent", str(tmp_path)).returncode == 2                      # no --task
    assert cli("adapt", "mm-agent", str(tmp_path / "nope"), "--task", TASK).returncode == 2
    assert cli("adapt", "mm-agent", str(tmp_path), "--task", "no-such-task").returncode == 3


# ------------------------------------------------------------- acceptance

def test_structured_run_scores_like_the_same_numbers_handed_in_directly(structured, tmp_path):
    out = tmp_path / "adapted.json"
    proc = adapt(structured, "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "complete  yes" in proc.stdout
    direct = tmp_path / "direct.json"
    direct.write_text(json.dumps(direct_artifact()))
    adapted, handed_in = score(out), score(direct)
    assert adapted == handed_in
    assert adapted["status"] == "scored" and adapted["oeval"] > 0
    art = json.load(open(out))
    assert "_provenance" not in art and art["task_id"] == TASK and art["problem_id"] == "2024-C"


def test_same_run_without_the_block_reports_what_is_missing_and_invents_nothing(plain, tmp_path):
    out = tmp_path / "adapted.json"
    report_file = tmp_path / "report.json"
    proc = adapt(plain, "--output", str(out), "--report", str(report_file))
    assert proc.returncode == 1
    # no value is invented; only the required containers are there, empty
    assert json.load(open(out)) == {"problem_id": "2024-C", "task_id": TASK, "experiment_result": CONTAINERS}
    report = json.load(open(report_file))
    assert [s["results"].split(":")[0] for s in report["subtasks"]] == ["absent"] * 3
    assert "was the --emit-prompt block in the template?" in proc.stdout
    task = load_task(TASK)
    assert {m["metric"] for m in report["missing_metric_fields"]} == {m.id for m in task.metrics}
    assert "experiment_result.data_source.matches" in {g["path"] for g in report["missing_gate_fields"]}
    assert report["from_text"] == {"enabled": False, "labels_file": None, "used": [], "skipped": [],
                                   "trust": None}
    assert "complete  NO" in proc.stdout


# ------------------------------------------------------------- layout cases

def test_tasks_are_matched_to_scripts_by_code_not_by_position(tmp_path):
    a = adapt_run(build_run(str(tmp_path / "a"), order=(3, 1, 2)), TASK)
    b = adapt_run(build_run(str(tmp_path / "b"), order=(1, 2, 3)), TASK)
    assert a.complete and b.complete and a.artifact == b.artifact
    assert [(s["position"], s["number"]) for s in a.report["subtasks"]] == [(1, 3), (2, 1), (3, 2)]
    assert a.report["fields"]["experiment_result.data_source.points"]["file"] == "code/main1.results.json"


def test_edited_or_duplicated_code_is_not_attributed(tmp_path):
    run = build_run(str(tmp_path), order=(1, 2, 3))
    with open(os.path.join(run, "code", "main2.py"), "a") as fh:
        fh.write("# edited after the run\nprint('changed')\n")
    r = adapt_run(run, TASK)
    row = r.report["subtasks"][1]
    assert row["status"] == UNMATCHED and row["number"] is None
    assert r.artifact["experiment_result"].get("randomness_tests", {}) == {}   # at most an empty container
    assert any(i["path"] == "code/main2.results.json" for i in r.report["ignored_files"])
    entries = [Entry(position=1, status="", code="x"), Entry(position=2, status="", code="y")]
    assert match_entries(entries, {1: "x", 2: "x", 3: "y"}) == ()
    assert entries[0].status == AMBIGUOUS and entries[0].matches == (1, 2) and entries[1].number == 3


def test_line_end_whitespace_does_not_break_the_match(tmp_path):
    entries = [Entry(position=1, status="", code="a = 1\nprint(a)\n")]
    match_entries(entries, {4: "a = 1   \r\nprint(a)"})
    assert entries[0].number == 4


def test_failed_subtask_is_reported_and_its_numbers_are_not_read(tmp_path):
    run = build_run(str(tmp_path), fail=(3,))
    assert os.path.isfile(os.path.join(run, "code", "main3.results.json"))  # written before it crashed
    proc = adapt(run)
    assert proc.returncode == 1
    assert "-> task 3: failed; code/main3.results.json: not read (code never passed)" in proc.stderr
    assert "IGNORED   code/main3.results.json: belongs to task 3, whose code never passed" in proc.stderr
    art = json.loads(proc.stdout)
    assert art["experiment_result"].get("dual_temporal_bayes", {}) == {}     # at most an empty container
    assert art["experiment_result"]["randomness_tests"]["median_runs_p"] == 0.290172


def test_run_without_code_is_reported_as_such(tmp_path):
    run = build_run(str(tmp_path), no_code=True)
    r = adapt_run(run, TASK)
    assert not r.complete and r.report["has_code"] is False
    assert {s["status"] for s in r.report["subtasks"]} == {"no_code"}
    assert any("this run has no code" in n for n in r.report["notes"])
    assert r.artifact == {"problem_id": "2024-C", "task_id": TASK, "experiment_result": CONTAINERS}
    assert "no code (MM-Agent writes none for a problem without data)" in render_report(r.report)


def test_stray_keys_are_rejected_and_stray_files_ignored_both_listed(tmp_path):
    run = build_run(str(tmp_path), stray=True)
    proc = adapt(run)
    assert proc.returncode == 0, proc.stderr  # the stray keys are extra, every asked field is there
    art = json.loads(proc.stdout)
    assert "accuracy" not in art and "cv_accuracy" not in json.dumps(art) and "model_path" not in art
    assert "REJECTED  code/main1.results.json: key 'accuracy'" in proc.stderr
    assert "REJECTED  code/main1.results.json: key 'experiment_result.momentum_model.cv_accuracy'" in proc.stderr
    assert "IGNORED   code/results.json: no convention names this file" in proc.stderr


def test_nested_unknown_keys_and_bad_paths_are_rejected(tmp_path):
    schema = load_task(TASK).artifact_schema
    f = tmp_path / "main3.results.json"
    f.write_text(json.dumps({
        "experiment_result.top_swing_features": [{"feature": "x", "warning_correlation": 0.1, "p_value": 0.2}],
        "experiment_result.top_swing_features[*].feature": "y",
        "experiment_result..x": 1, "$replay.q1": 2,
        "experiment_result.dual_temporal_bayes.swing_warning_rate": 0.01}))
    pairs, problems, rejected = read_results(str(f), schema)
    assert pairs == {"experiment_result.dual_temporal_bayes.swing_warning_rate": Decimal("0.01")}
    assert len(rejected) == 4 and not problems
    assert "experiment_result.top_swing_features[0].p_value" in rejected[0]["reason"]


def test_stale_results_file_from_an_earlier_attempt_is_ignored(tmp_path):
    run = build_run(str(tmp_path), order=(1, 2, 3))
    code = script(2, None)  # the passing version does not write results; the old file stays
    with open(os.path.join(run, "code", "main2.py"), "w") as fh:
        fh.write(code)
    sol_file = os.path.join(run, "json", "2024_C.json")
    sol = json.load(open(sol_file))
    sol["tasks"][1]["task_code"] = code
    json.dump(sol, open(sol_file, "w"))
    r = adapt_run(run, TASK)
    assert r.report["subtasks"][1]["results"].startswith("stale")
    assert r.artifact["experiment_result"].get("randomness_tests", {}) == {}   # at most an empty container


def test_conflicting_subtasks_leave_the_field_out(tmp_path):
    run = build_run(str(tmp_path), order=(1, 2, 3))
    f = os.path.join(run, "code", "main2.results.json")
    data = json.load(open(f))
    data["experiment_result.data_source.matches"] = 30
    json.dump(data, open(f, "w"))
    r = adapt_run(run, TASK)
    assert [c["path"] for c in r.report["conflicts"]] == ["experiment_result.data_source.matches"]
    assert "matches" not in r.artifact["experiment_result"]["data_source"] and not r.complete


def test_solution_file_choice(tmp_path):
    run = build_run(str(tmp_path))
    shutil.copy(os.path.join(run, "json", "2024_C.json"), os.path.join(run, "json", "other.json"))
    assert adapt_run(run, TASK).complete  # the file named after the folder wins
    renamed = os.path.join(str(tmp_path), "renamed")
    os.rename(run, renamed)
    r = adapt_run(renamed, TASK)
    assert r.report["solution"]["error"]["code"] == "no_solution" and "--solution" in r.report["solution"]["error"]["message"]
    proc = adapt(renamed, "--solution", os.path.join(renamed, "json", "2024_C.json"))
    assert proc.returncode == 0, proc.stderr
    assert STAMP.startswith("2024_C_")


def test_not_a_run_folder(tmp_path):
    proc = adapt(str(tmp_path))
    assert proc.returncode == 1 and "not an MM-Agent run folder" in proc.stderr


# ------------------------------------------------------------- properties

_KEYS = st.sampled_from(["experiment_result.data_source.points", "experiment_result.unknown",
                         "accuracy", "experiment_result.top_swing_features[0].feature",
                         "experiment_result.top_swing_features[1].bogus", "problem_id", "_comment",
                         "experiment_result.momentum_model.final_momentum_range"])
_VALUES = st.one_of(st.integers(-5, 10_000), st.text(max_size=5), st.booleans(),
                    st.dictionaries(st.sampled_from(["feature", "x"]), st.integers(0, 3), max_size=2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_every_accepted_key_is_described_and_every_other_is_listed(tmp_path, data):
    schema = load_task(TASK).artifact_schema
    f = tmp_path / "main1.results.json"
    f.write_text(json.dumps(data))
    pairs, problems, rejected = read_results(str(f), schema)
    assert not problems
    assert len(pairs) + len(rejected) == len(data)
    for key in pairs:
        assert schema_at(schema, paths.parse_path(key)) is not None
    assert {r["key"] for r in rejected} | set(pairs) == set(data)
    assert NUMBERS  # the fixture's numbers are the ones the block asks for
