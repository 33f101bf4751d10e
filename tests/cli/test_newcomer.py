"""What a new user meets first, through the real command line: local schema
violations, gate and score agreeing, readable messages, file errors, one
spelling per option, progress on a terminal only, the examples, oracle
findings marked as audited, and a clear word when the anchors are not found."""
from __future__ import annotations

import copy
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmverify.reading.artifact import parse_file
from mmverify.plugin.exactjson import dumps_exact
from mmverify.plugin.selfcheck import distinct_artifact, find_leaks
from mmverify.tasks import load_task

REPO = Path(__file__).resolve().parents[2]
DRAGON = "cumcm-2024-a-dragon-dance"
ORACLE = REPO / "anchors" / DRAGON / "oracle.json"
SAMPLE = REPO / "examples" / "sample" / f"{DRAGON}_result.json"


def cli(*args, cwd=None, env=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "mmverify", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=300)


def oracle_data():
    return json.loads(ORACLE.read_text(encoding="utf-8"))


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ----------------------------------------------------- schema violations stay local

def test_slips_in_unscored_metadata_are_warnings(tmp_path):
    data = oracle_data()
    del data["problem_id"]
    data["experiment_result"]["q1"]["sample_rows"] = "lots"
    path = write(tmp_path, f"{DRAGON}_result.json", data)
    r = cli("score", path, "--format", "json")
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["status"] == "scored" and rep["oeval"] == 1.0
    effects = {e["field"]: e["effect"]["kind"] for e in rep["schema_errors"]}
    assert effects == {"(top level)": "warning", "experiment_result.q1.sample_rows": "warning"}
    problems = {e["problem"] for e in rep["schema_errors"]}
    assert 'required field "problem_id" is missing' in problems
    assert '"lots" is a string; expected an integer' in problems
    # the same artifact, all-or-nothing on request
    r = cli("score", path, "--format", "json", "--strict-schema")
    rep = json.loads(r.stdout)
    assert r.returncode == 1 and rep["status"] == "invalid" and rep["oeval"] == 0


def test_a_bad_scored_value_costs_only_its_metric(tmp_path):
    data = oracle_data()
    data["experiment_result"]["q3"]["minimum_pitch_m"] = "0.4"      # a numeric string is not a number
    path = write(tmp_path, f"{DRAGON}_result.json", data)
    rep = json.loads(cli("score", path, "--format", "json").stdout)
    assert rep["status"] in ("scored", "infeasible")
    (err,) = rep["schema_errors"]
    assert err["effect"]["kind"] == "local"
    assert err["effect"]["scored_fields"] == ["experiment_result.q3.minimum_pitch_m"]
    by_path = {m["path"]: m for m in rep["metrics"]}
    assert by_path["experiment_result.q3.minimum_pitch_m"]["read_status"] == "missing"
    others = [m for p, m in by_path.items() if p != "experiment_result.q3.minimum_pitch_m"]
    assert all(pm["r"] == 1.0 for m in others for pm in m["papers"] if pm["status"] == "scored")


def test_task_level_strict_schema(tmp_path):
    anchors = tmp_path / "anchors"
    src = REPO / "anchors" / DRAGON
    shutil.copytree(src, anchors / DRAGON)
    spec = json.loads((anchors / DRAGON / "task.json").read_text(encoding="utf-8"))
    spec["strict_schema"] = True
    (anchors / DRAGON / "task.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    data = oracle_data()
    del data["problem_id"]
    path = write(tmp_path, f"{DRAGON}_result.json", data)
    rep = json.loads(cli("score", path, "--anchors", anchors, "--format", "json").stdout)
    assert rep["status"] == "invalid" and rep["oeval"] == 0
    gate = json.loads(cli("gate", path, "--anchors", anchors, "--format", "json").stdout)
    assert gate["status"] == "invalid"


# ----------------------------------------------------------- gate and score agree

def _cases():
    base = oracle_data()
    no_meta = copy.deepcopy(base)
    del no_meta["problem_id"]
    over = copy.deepcopy(base)
    over["experiment_result"]["q5"]["max_head_speed_mps"] = 1.406276     # 1.406276 x 1.604793 > 2
    unwitnessed = copy.deepcopy(base)
    del unwitnessed["experiment_result"]["q5"]["max_speed_ratio_when_head_1mps"]
    gap = copy.deepcopy(base)
    del gap["experiment_result"]["q2"]["terminal_time_s"]
    wrong_type = copy.deepcopy(base)
    wrong_type["experiment_result"]["q1"]["handles"] = True
    return {"oracle": base, "no_meta": no_meta, "over": over, "unwitnessed": unwitnessed, "gap": gap,
            "wrong_type": wrong_type}


@pytest.mark.parametrize("strict", [False, True])
def test_gate_and_score_give_the_same_verdict(tmp_path, strict):
    flag = ["--strict-schema"] if strict else []
    for name, data in _cases().items():
        path = write(tmp_path, f"{DRAGON}_{name}.json", data)
        s = cli("score", path, "--format", "json", *flag)
        g = cli("gate", path, "--format", "json", *flag)
        score_status, gate_status = json.loads(s.stdout)["status"], json.loads(g.stdout)["status"]
        expected = "feasible" if score_status in ("scored", "not_scored") else score_status
        assert gate_status == expected, (name, strict, score_status, gate_status)
        assert s.returncode == g.returncode, (name, strict)


def test_gate_lists_missing_fields_and_unwitnessed_claims_without_leaking(tmp_path):
    task = load_task(DRAGON)
    data = distinct_artifact(parse_file(str(ORACLE)).data, task)
    del data["experiment_result"]["q5"]["max_speed_ratio_when_head_1mps"]
    del data["experiment_result"]["q2"]["terminal_time_s"]
    path = tmp_path / f"{DRAGON}_probe.json"
    path.write_text(dumps_exact(data), encoding="utf-8")
    checked = parse_file(str(path)).data
    for fmt in ("json", "table", "md"):
        r = cli("gate", path.name, "--format", fmt, cwd=tmp_path)   # (a relative name: no temp-folder digits)
        assert r.returncode in (0, 1) and r.stdout, r.stderr
        assert not find_leaks(r.stdout, task, checked), fmt
    out = json.loads(cli("gate", path, "--format", "json").stdout)
    assert [f["path"] for f in out["missing_scored_fields"]] == ["experiment_result.q2.terminal_time_s"]
    assert [c["path"] for c in out["unwitnessed_claims"]] == ["experiment_result.q5.max_head_speed_mps"]
    table = cli("gate", path).stdout
    assert "missing  experiment_result.q2.terminal_time_s" in table
    assert "claim    experiment_result.q5.max_head_speed_mps: unwitnessed" in table
    # and score zeroes that claim (its values are all moved off the anchors, so the
    # dragon's claim gates also refute it: either rule zeroes it)
    rep = json.loads(cli("score", path, "--format", "json").stdout)
    assert any(r["rule"] in ("unwitnessed_claim", "refuted_claim") and r["metric"] == "q5.max_head_speed"
               for r in rep["rules"])
    q5 = next(m for m in rep["metrics"] if m["id"] == "q5.max_head_speed")
    assert all(p["r"] == 0 for p in q5["papers"])


# ----------------------------------------------------------------------- messages

def test_messages_use_json_words(tmp_path):
    data = oracle_data()
    data["experiment_result"]["q5"]["max_speed_ratio_when_head_1mps"] = False
    data["experiment_result"]["q1"]["handles"] = 1e99
    path = write(tmp_path, f"{DRAGON}_result.json", data)
    out = cli("score", path).stdout + cli("gate", path).stdout
    assert "Decimal(" not in out and "True" not in out and "False" not in out
    assert "false is a boolean; expected a number" in out


# --------------------------------------------------------------------- file errors

def test_a_missing_file_says_so(tmp_path):
    r = cli("score", "nothere.json", cwd=tmp_path)
    assert r.returncode == 1 and "artifact file not found: nothere.json" in r.stdout + r.stderr
    assert "cannot tell which task" not in r.stdout + r.stderr
    r = cli("score", "nothere.json", ORACLE, "--format", "json", cwd=tmp_path)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 1 and [row["status"] for row in rows] == ["missing", "scored"]
    r = cli("gate", "nothere.json", cwd=tmp_path)
    assert r.returncode == 1 and "artifact file not found" in r.stdout
    bad = tmp_path / "broken.json"
    bad.write_text("{", encoding="utf-8")
    r = cli("score", bad)
    assert r.returncode == 1 and "malformed_json" in r.stdout


def test_missing_anchors_folder_names_the_way_out(tmp_path):
    r = cli("audit", "--anchors", tmp_path / "none")
    assert r.returncode == 3
    assert "--anchors" in r.stderr and "MMVERIFY_ANCHORS" in r.stderr
    assert "(index)" not in r.stdout
    r = cli("tasks", env={"MMVERIFY_ANCHORS": str(tmp_path / "elsewhere")})
    assert r.returncode == 3 and "MMVERIFY_ANCHORS" in r.stderr


def test_a_mistyped_task_id_gets_the_closest_ids(tmp_path):
    r = cli("score", ORACLE, "--task", "cumcm-2024-a-dragon-dnace")
    assert r.returncode == 3 and "did you mean 'cumcm-2024-a-dragon-dance'?" in r.stdout + r.stderr
    r = cli("score", ORACLE, "--task", "zzzz-0000-q-nothing-alike")
    assert r.returncode == 3 and "did you mean" not in r.stdout + r.stderr


# ------------------------------------------------------------------------- options

def test_one_spelling_per_option_with_deprecated_aliases(tmp_path):
    anchors = REPO / "anchors"
    r = cli("lean", "emit", "--anchors", anchors, "--check")
    assert r.returncode == 0 and "no drift" in r.stdout and r.stderr == ""
    r = cli("lean", "emit", "--anchors-dir", anchors, "--check")
    assert r.returncode == 0 and "--anchors-dir is deprecated" in r.stderr
    r = cli("lean", "emit", "--anchors", "--check")
    assert r.returncode == 0 and "bare --anchors is deprecated" in r.stderr
    r = cli("lean", "check", "--timeout", "5", env={"MMVERIFY_LEAN": "/bin/false"})
    assert r.returncode == 5 and "--timeout is deprecated; use --timeout-s" in r.stderr
    for command in (["score"], ["gate"], ["audit"], ["tasks"], ["board"], ["verify"], ["lean", "emit"],
                    ["lean", "check"], ["lean", "mutate"], ["adapt", "mm-agent"]):
        text = cli(*command, "--help").stdout
        assert "--anchors DIRECTORY" in text and "--anchors-dir" not in text, command
        assert "--timeout " not in text, command


def test_a_failing_lean_binary_is_reported_by_its_first_line():
    r = cli("lean", "check", env={"MMVERIFY_LEAN": "/bin/false"})
    assert r.returncode == 5
    (missing,) = [line for line in r.stderr.splitlines() if line.strip().startswith("missing:")]
    said = missing.split("it said ", 1)[1]
    assert said.startswith("'") and said.endswith("'")     # whole, not cut mid-word
    assert "Copyright" not in r.stderr


# ----------------------------------------------------------------------- progress

def test_progress_bar_only_on_a_terminal(tmp_path):
    args = [sys.executable, "-m", "mmverify", "score", str(ORACLE), str(SAMPLE), "--output", str(tmp_path / "o.jsonl")]
    piped = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "scoring" not in piped.stderr and "2 row(s)" in piped.stderr
    main, child = pty.openpty()
    proc = subprocess.run(args + ["--output", str(tmp_path / "p.jsonl")], stdout=subprocess.PIPE, stderr=child,
                          timeout=300)
    os.close(child)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.returncode == 0
    assert b"scoring" in shown and b"2/2" in shown


# ----------------------------------------------------------- examples and oracles

def test_example_board_manifest():
    r = cli("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle", "--format", "json")
    assert r.returncode == 0, r.stderr
    board = json.loads(r.stdout)
    by = {e["entry"]: e for e in board["entries"]}
    assert by["oracle"]["multi_bo"] == 1.0
    counts = by["sample"]["counts"]
    assert (counts["null_artifacts"], counts["missing_artifacts"], counts["absent_rows"]) == (1, 0, 16)
    table = cli("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle").stdout
    assert '0 artifact files absent, 1 rows with "artifact": null, 16 without a manifest row' in table


def test_oracle_reports_mark_audited_findings(tmp_path):
    # the NIPT reference fails a soft gate of its own (the dragon-dance oracle, which
    # used to, now holds the replayed truth and fails none)
    nipt = REPO / "anchors" / "cumcm-2025-c-nipt" / "oracle.json"
    r = cli("score", nipt)
    fails = [line for line in r.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert fails and all("audited finding" in line or "known finding" in line for line in fails)
    rep = json.loads(cli("score", nipt, "--format", "json").stdout)
    failing = {i["gate"] if i["index"] is None else f"{i['gate']}[{i['index']}]"
               for i in rep["gates"]["instances"] if i["verdict"] == "fail"}
    assert "q4.beats_majority_rule" in rep["audited_findings"]
    assert set(rep["audited_findings"]) == failing
    # an artifact that is not the oracle gets no such mark
    path = write(tmp_path, "cumcm-2025-c-nipt_copy.json", json.loads(nipt.read_text(encoding="utf-8")))
    rep = json.loads(cli("score", path, "--format", "json").stdout)
    assert "audited_findings" not in rep and any(i["verdict"] == "fail" for i in rep["gates"]["instances"])


def test_adapter_fills_containers_a_partial_run_left_out(tmp_path):
    from tests.helpers.mm_agent_fixture import TASK, build_run

    run = build_run(str(tmp_path), fail=(2, 3))          # only the first subtask's code passed
    out = tmp_path / "art.json"
    r = cli("adapt", "mm-agent", run, "--task", TASK, "--output", out, "--format", "json")
    assert r.returncode == 1                             # incomplete, and says so
    report = json.loads(r.stdout)
    assert any("empty object(s) added" in n and "experiment_result.randomness_tests" in n for n in report["notes"])
    art = json.loads(out.read_text())
    assert art["experiment_result"]["randomness_tests"] == {}
    rep = json.loads(cli("score", out, "--format", "json").stdout)
    assert rep["status"] == "scored" and rep["oeval"] > 0  # the answered fields count
