"""MM-Agent adapter: run folders in MM-Agent's own layout and in the documented
small model, adapted through ``mmverify adapt mm-agent`` (subprocess) and the
library function."""
import json
import os
import subprocess
import sys
from decimal import Decimal

import pytest
from taskfactory import speed_task

import mmverify
from mmverify.plugin.mm_agent import adapt_run, missing_required, parse_subtasks, render_report

TID = "t-speed"
SPEED_LIMIT = {"id": "speed_limit", "form": "identity", "level": "B", "severity": "hard",
               "expr": "speed * ratio <= 2", "vars": {"speed": "result.speed", "ratio": "result.ratio"},
               "description": "every handle moves at most 2 m/s"}


@pytest.fixture()
def anchors(tmp_path):
    return speed_task(str(tmp_path / "anchors"), TID, gates=[SPEED_LIMIT])


def dump(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2)


def mm_agent_run(root, results=True, stdout=""):
    """A run folder as MM-Agent writes it (json/<name>.json with 'tasks', code/main<k>.py),
    plus the results files of the convention."""
    solution = {
        "problem_background": "A dragon of 223 benches moves along a spiral ...",
        "problem_requirement": "Q1 ... Q5",
        "problem_analysis": "...",
        "tasks": [
            {"task_description": "Q1: positions and handle count", "task_analysis": "...",
             "preliminary_formulas": "r = b * theta", "mathematical_modeling_process": "...",
             "task_code": "import json\n...", "is_pass": True,
             "execution_result": "handles = 224\nresult.handles = 224\n",
             "solution_interpretation": "There are 224 handles.", "subtask_outcome_analysis": "...",
             "charts": []},
            {"task_description": "Q3/Q5: pitch and head speed",
             "preliminary_formulas": ["v_max = 2 / ratio"], "task_code": "...",
             "execution_result": stdout or "The maximum head speed is about 1.25 m/s\n",
             "solution_interpretation": "The head may move at 1.246266 m/s."},
        ],
    }
    dump(os.path.join(root, "json", "2024_A.json"), solution)
    os.makedirs(os.path.join(root, "code"), exist_ok=True)
    for k in (1, 2):
        open(os.path.join(root, "code", f"main{k}.py"), "w").write("print('solving')\n")
    if results:
        dump(os.path.join(root, "code", "main1.results.json"), {"result.handles": 224})
        dump(os.path.join(root, "code", "main2.results.json"),
             {"result.pitch": 0.4, "result.speed": 1.246266, "result.ratio": 1.604793,
              "_comment": "written by main2.py"})
    return str(root)


def adapt(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mmverify", "adapt", "mm-agent", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


# ------------------------------------------------------------- end to end

def test_mm_agent_run_is_adapted_into_an_artifact_that_scores(anchors, tmp_path):
    run = mm_agent_run(tmp_path / "run")
    out = tmp_path / "artifact.json"
    proc = adapt(run, "--task", TID, "--anchors", anchors, "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "complete  yes" in proc.stdout
    art = json.load(open(out))
    assert art["result"] == {"handles": 224, "pitch": 0.4, "speed": 1.246266, "ratio": 1.604793}
    assert art["task_id"] == TID and "_provenance" not in art
    assert mmverify.reward(TID, str(out), anchors) == 1.0
    score = subprocess.run([sys.executable, "-m", "mmverify", "score", str(out), "--anchors", anchors,
                            "--format", "json"], capture_output=True, text=True, timeout=120)
    assert score.returncode == 0, score.stderr  # the task is told from task_id
    assert json.loads(score.stdout)["oeval"] == 1.0


def test_run_without_results_files_reports_every_missing_field(anchors, tmp_path):
    run = mm_agent_run(tmp_path / "run", results=False)
    proc = adapt(run, "--task", TID, "--anchors", anchors, "--output", str(tmp_path / "a.json"),
                 "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["complete"] is False and report["results_files"] == []
    assert report["missing_required"] == []     # the required container is added, empty
    assert any("result" in note for note in report["notes"])
    assert {m["path"] for m in report["missing_metric_fields"]} == {"result.speed", "result.pitch",
                                                                   "result.handles"}
    assert {(g["gate"], g["path"]) for g in report["missing_gate_fields"]} == {
        ("speed_limit", "result.speed"), ("speed_limit", "result.ratio")}
    assert report["solution"]["subtasks"] == 2
    assert report["from_stdout"]["used"] == []  # never guessed from prose or stdout unless asked
    assert json.load(open(tmp_path / "a.json")) == {"task_id": TID, "result": {}}


def test_from_stdout_fills_only_exactly_named_numeric_paths_and_marks_them(anchors, tmp_path):
    run = mm_agent_run(tmp_path / "run", results=False, stdout=(
        "result.speed = 1.246266\n"
        "  result.ratio=1.604793  \n"
        "result.pitch = 0.4 m\n"          # a unit after the number: not the form, not used
        "speed = 1.3\n"                   # not a field path
        "result.handles = 224\n"
        "result.handles = 225\n"))        # ambiguous: not used
    # the artifact goes to stdout, the report to stderr, without --output
    proc = adapt(run, "--task", TID, "--anchors", anchors, "--from-stdout")
    assert proc.returncode == 1
    art = json.loads(proc.stdout)
    # execution_result of subtask 1 says "result.handles = 224" once more: still ambiguous overall
    assert art["result"] == {"speed": 1.246266, "ratio": 1.604793}
    assert art["_provenance"] == {"result.speed": "stdout", "result.ratio": "stdout"}
    assert "LOW TRUST (stdout) result.speed = 1.246266" in proc.stderr
    assert "ambiguous" in proc.stderr and "result.handles" in proc.stderr


def test_usage_and_task_errors(anchors, tmp_path):
    proc = adapt(str(tmp_path / "nowhere"), "--task", TID, "--anchors", anchors)
    assert proc.returncode == 2 and "not found" in proc.stderr
    run = mm_agent_run(tmp_path / "run")
    proc = adapt(run, "--task", "no-such-task", "--anchors", anchors)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr


# ---------------------------------------------------------------- library

def test_small_model_with_subtasks_workdirs_and_results_json(anchors, tmp_path):
    root = tmp_path / "run"
    dump(str(root / "solution.json"), {"problem": "dragon", "subtasks": [
        {"id": "q1", "description": "count", "workdir": "q1"},
        {"id": "q5", "script_path": "q5/solve.py"},
        {"id": "escape", "workdir": "../../.."}]})
    dump(str(root / "q1" / "results.json"), {"result.handles": 224, "result.pitch": 0.4})
    dump(str(root / "q5" / "solve.results.json"), {"result.speed": 1.246266, "result.ratio": 1.604793})
    res = adapt_run(str(root), TID, anchors_dir=anchors)
    assert res.complete, render_report(res.report)
    files = {f["path"]: f["subtask"] for f in res.report["results_files"]}
    assert files == {os.path.join("q1", "results.json"): "q1", os.path.join("q5", "solve.results.json"): "q5"}
    assert res.report["fields"]["result.speed"] == {"source": "results",
                                                    "file": os.path.join("q5", "solve.results.json")}
    assert mmverify.reward(TID, res.artifact, anchors) == 1.0


def test_conflicting_results_are_left_out_not_guessed(anchors, tmp_path):
    root = tmp_path / "run"
    dump(str(root / "a" / "results.json"), {"result.speed": 1.2, "result.handles": 224})
    dump(str(root / "b" / "results.json"), {"result.speed": 1.25, "result.handles": 224.0})
    res = adapt_run(str(root), TID, anchors_dir=anchors)
    assert "speed" not in res.artifact["result"] and res.artifact["result"]["handles"] == 224
    conflict = res.report["conflicts"][0]
    assert conflict["path"] == "result.speed" and {v["value"] for v in conflict["values"]} == {"1.2", "1.25"}
    assert not res.complete and "CONFLICT" in render_report(res.report)
    assert res.report["solution"]["path"] is None  # no solution JSON: results files alone


def test_bad_results_files_are_reported(anchors, tmp_path):
    root = tmp_path / "run"
    os.makedirs(root / "x")
    (root / "x" / "results.json").write_text('{"result.speed": NaN}')
    dump(str(root / "y" / "results.json"), {"result.items[*].v": 1, "not a path": 2, "result.pitch": 0.4})
    res = adapt_run(str(root), TID, anchors_dir=anchors)
    problems = {f["path"]: [p["code"] for p in f["problems"]] for f in res.report["results_files"]}
    assert problems[os.path.join("x", "results.json")] == ["non_finite_number"]
    assert problems[os.path.join("y", "results.json")] == ["bad_path", "bad_path"]
    assert res.artifact["result"] == {"pitch": Decimal("0.4")}


def test_indexed_paths_build_lists_and_holes_are_reported(anchors, tmp_path):
    root = tmp_path / "run"
    dump(str(root / "results.json"), {"result.extra[0].key": "a", "result.extra[2].key": "c"})
    res = adapt_run(str(root), TID, anchors_dir=anchors)
    assert res.artifact["result"]["extra"] == [{"key": "a"}, None, {"key": "c"}]
    assert res.report["sparse_lists"] == ["result.extra[1]"]


def test_subtask_parsing_is_tolerant():
    assert parse_subtasks(None) == [] and parse_subtasks({"tasks": "x"}) == []
    subs = parse_subtasks({"tasks": [{}, "junk", {"task_id": 7, "execution_result": ["a", "b"],
                                                   "task_code": 3, "script": "s.py"}]})
    assert [s.id for s in subs] == ["1", "7"]
    assert subs[1].execution_output == "a\nb" and subs[1].code is None and subs[1].script_path == "s.py"


def test_missing_required_lists_nested_requirements():
    schema = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "object", "required": ["x"], "properties": {"x": {"type": "object", "required": ["y"]}}},
        "b": {"type": "array", "items": {"type": "object", "required": ["k"]}}}}
    assert missing_required(schema, {}) == ["a", "a.x", "a.x.y", "b"]
    assert missing_required(schema, {"a": {"x": {}}, "b": [{"k": 1}, {}]}) == ["a.x.y", "b[1].k"]
