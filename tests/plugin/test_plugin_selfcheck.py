"""Self-check: schema + gate verdicts, and provably no anchor value.

Three kinds of evidence: (1) non-interference: changing every panel and oracle
value leaves the output byte-identical; (2) a scan of the output for every
anchor value of the task, on an artifact whose numbers all differ from the
oracle's, for synthetic tasks and every bundled anchor; (3) a positive control:
the same scan finds the anchors in a full score report.
"""
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from tests.helpers.taskfactory import paper, speed_task

from mmverify.reading.artifact import from_python, parse_file
from mmverify.pipeline.evaluate import score_artifact
from mmverify.plugin.exactjson import dumps_exact
from mmverify.plugin.selfcheck import (WITHHELD, anchor_values, distinct_artifact, find_leaks, public_task,
                                       self_check)
from mmverify.pipeline.report import dumps
from mmverify.tasks import default_anchors_dir, load_index, load_task

TID = "t-speed"
SECRET_REASON = "the reference pitch 0.4 m of paper P1 sits exactly here"
GATES = [
    {"id": "speed_limit", "form": "identity", "level": "B", "severity": "hard",
     "expr": "speed * ratio <= 2", "vars": {"speed": "result.speed", "ratio": "result.ratio"},
     "description": "every handle moves at most 2 m/s; the reference reaches 1.246266 m/s"},
    {"id": "pitch_floor", "form": "range", "level": "A", "severity": "soft", "path": "result.pitch",
     "min": "0.3", "tolerance": "0.001", "tolerance_reason": SECRET_REASON,
     "description": "a pitch below 0.3 m is impossible (the paper found 0.4)"},
    {"id": "handles_integer", "form": "integer", "level": "A", "severity": "hard", "path": "result.handles",
     "description": "handles are counted"},
]


def make(tmp_path, name="anchors", speed="1.246266", pitch="0.4", handles="224", extra=None):
    folder = str(tmp_path / name)
    speed_task(folder, TID, gates=GATES, extra_papers=extra or [
        paper("P2", {"speed": "1.318725", "pitch": "0.45", "handles": "223"})])
    task_file = os.path.join(folder, TID, "task.json")
    task = json.load(open(task_file))
    task["panel"][0]["values"] = {"speed": speed, "pitch": pitch, "handles": handles}
    json.dump(task, open(task_file, "w"))
    return folder


def art(speed=1.1, pitch=0.35, handles=230, ratio=1.7):
    return {"result": {"speed": speed, "pitch": pitch, "handles": handles, "ratio": ratio}}


def test_statuses_and_shape(tmp_path):
    anchors = make(tmp_path)
    ok = self_check(TID, art(), anchors)
    assert ok["status"] == "ok" and not ok["would_score_zero"] and ok["error"] is None
    assert ok["gates"]["counts"]["pass"] == 3 and ok["hard_failures"] == [] and ok["gaps"] == []
    assert set(ok) == {"schema_version", "task", "artifact", "status", "would_score_zero", "error",
                       "schema_errors", "gates", "hard_failures", "gaps", "missing_scored_fields",
                       "unwitnessed_claims", "note"}
    fast = self_check(TID, art(speed=1.3), anchors)
    assert fast["status"] == "infeasible" and fast["hard_failures"] == ["speed_limit"]
    # a violation is local: the field it is at scores 0 (listed as missing), the rest is scored
    local = self_check(TID, art(pitch=-1), anchors)
    assert local["status"] == "ok" and local["schema_errors"][0]["field"] == "result.pitch"
    assert local["schema_errors"][0]["effect"] == {"kind": "local", "scored_fields": ["result.pitch"],
                                                    "gates": ["pitch_floor"]}
    assert [f["path"] for f in local["missing_scored_fields"]] == ["result.pitch"]
    invalid = self_check(TID, art(pitch=-1), anchors, strict_schema=True)
    assert invalid["status"] == "invalid" and invalid["schema_errors"][0]["field"] == "result.pitch"
    assert invalid["gates"] is not None  # gates still run on an invalid artifact
    gap = self_check(TID, {"result": {"speed": 1.1}}, anchors)
    assert gap["status"] == "ok" and "speed_limit" in gap["gaps"]
    assert {f["path"] for f in gap["missing_scored_fields"]} == {"result.pitch", "result.handles"}
    assert self_check(TID, b"{", anchors)["status"] == "error"
    missing = self_check(TID, str(tmp_path / "none.json"), anchors)
    assert missing["status"] == "missing" and missing["artifact"]["source"].endswith("none.json")


def test_author_text_is_withheld(tmp_path):
    anchors = make(tmp_path)
    out = self_check(TID, art(), anchors)
    text = json.dumps(out)
    assert SECRET_REASON not in text and "the reference reaches" not in text and "the paper found" not in text
    detail = next(i["detail"] for i in out["gates"]["instances"] if i["gate"] == "pitch_floor")
    assert "0.001" in detail  # the tolerance is part of the predicate: shown; its reason is not


def test_author_text_embedded_by_the_gate_engine_is_replaced():
    """Defence in depth: should a gate detail ever embed the author's reason or
    description, the self-check replaces it."""
    from types import SimpleNamespace

    from mmverify.plugin.selfcheck import _without_author_text

    gate = SimpleNamespace(id="g", tolerance_reason=SECRET_REASON, description="quote 1.246266")
    inst = {"gate": "g", "detail": f"0.35 >= 0.3 (tolerance 0.001: {SECRET_REASON}); quote 1.246266"}
    report = SimpleNamespace(gates=(gate,), as_dict=lambda: {"instances": [dict(inst)]})
    detail = _without_author_text(report)["instances"][0]["detail"]
    assert SECRET_REASON not in detail and "1.246266" not in detail and detail.count(WITHHELD) == 2


def test_output_does_not_depend_on_panel_or_oracle(tmp_path):
    """Non-interference: two anchors folders differing in every reference value
    give byte-identical self-checks."""
    a = make(tmp_path, "a")
    b = make(tmp_path, "b", speed="1.9", pitch="0.31", handles="100",
             extra=[paper("P9", {"speed": "1.7", "pitch": "0.33", "handles": "7"})])
    oracle_b = os.path.join(b, TID, "oracle.json")
    data = json.load(open(oracle_b))
    data["result"].update(speed=1.9, pitch=0.31, handles=100)
    json.dump(data, open(oracle_b, "w"))
    for artifact in (art(), art(speed=1.3), {"result": {"speed": 1}}, b"[]"):
        assert dumps(self_check(TID, artifact, a)) == dumps(self_check(TID, artifact, b))
    assert public_task(load_task(TID, a)).panel == ()


def test_scan_finds_no_anchor_value_and_finds_them_in_a_full_report(tmp_path):
    anchors = make(tmp_path)
    task = load_task(TID, anchors)
    data = distinct_artifact(parse_file(task.oracle_path).data, task)
    out = self_check(task, from_python(data))
    assert find_leaks(out, task, data) == []
    # positive controls: a full report and a leaky variant of the self-check are caught
    report = score_artifact(task, from_python(data), run_gates=False).as_dict()
    found = {leak.secret for leak in find_leaks(report, task, data)}
    assert {"1.246266", "0.4", "224", "1.318725", "0.45", "223"} <= found
    leaky = dict(out, debug=f"closest paper speed 1.3187, pitch {task.panel[1].value_text['pitch']}")
    assert {leak.match for leak in find_leaks(leaky, task, data)} == {"exact", "rounded"}


def test_distinct_artifact_changes_every_number_and_derived_difference():
    from decimal import Decimal

    data = from_python({"a": 1.5, "b": 0.5, "n": 7, "xs": [1, 2], "s": "label", "t": True}).data
    d = distinct_artifact(data)
    assert d["a"] != data["a"] and d["b"] != data["b"] and d["n"] != data["n"] and d["xs"] != data["xs"]
    assert d["a"] - d["b"] != data["a"] - data["b"] and d["xs"][1] - d["xs"][0] != 1
    assert d["s"] == "label" and d["t"] is True and d["n"] == Decimal(int(d["n"]))


def test_anchor_values_cover_panel_context_audit_and_oracle(tmp_path):
    anchors = make(tmp_path, extra=[paper("P2", {"speed": "1.31", "pitch": "0.45", "handles": "223"},
                                          context={"result.ratio": "1.777"},
                                          audit={"speed": {"original": "1.406276", "reason": "gate"}})])
    numbers, _ = anchor_values(load_task(TID, anchors))
    texts = {t for _, t, _ in numbers}
    assert {"1.246266", "1.31", "1.777", "1.406276", "1.604793"} <= texts


# ------------------------------------------------------- the bundled anchors

ANCHORS = default_anchors_dir()
IDS = [t["id"] for t in load_index(ANCHORS)] if os.path.exists(os.path.join(ANCHORS, "index.json")) else []


def present(tid):
    if not os.path.exists(os.path.join(ANCHORS, tid, "task.json")):
        pytest.skip(f"anchors/{tid} not written yet")
    return load_task(tid, ANCHORS)


@pytest.mark.parametrize("tid", IDS)
def test_no_anchor_value_in_the_self_check_of_a_real_task(tid):
    task = present(tid)
    data = distinct_artifact(parse_file(task.oracle_path).data, task)
    out = self_check(task, from_python(data))
    leaks = find_leaks(out, task, data)
    assert not leaks, "\n".join(map(str, leaks))
    assert out["gates"]["instances"], "the scan needs gate output to mean anything"


HAS_GATE_CMD = importlib.util.find_spec("mmverify.commands.gate") is not None


@pytest.mark.skipif(not HAS_GATE_CMD, reason="mmverify gate not in this installation yet")
@pytest.mark.parametrize("tid", IDS)
def test_no_anchor_value_in_mmverify_gate_output(tid, tmp_path):
    from mmverify.commands.gate import gate_result, render_gate

    task = present(tid)
    data = distinct_artifact(parse_file(task.oracle_path).data, task)
    path = str(tmp_path / "artifact.json")
    open(path, "w", encoding="utf-8").write(dumps_exact(data))
    result = gate_result(path, tid, ANCHORS)
    counts = list((result.get("gates") or {}).get("counts", {}).values())
    structural = [v for v in counts if isinstance(v, int)] + [path]
    leaks = find_leaks(result, task, data, also_public=[path])
    for fmt in ("table", "md"):
        leaks += find_leaks(render_gate(result, fmt), task, data, also_public=structural)
    assert not leaks, "\n".join(map(str, leaks))


@pytest.mark.skipif(not HAS_GATE_CMD, reason="mmverify gate not in this installation yet")
def test_mmverify_gate_subprocess_shows_no_anchor_value(tmp_path):
    tid = "cumcm-2024-a-dragon-dance"
    task = present(tid)
    data = distinct_artifact(parse_file(task.oracle_path).data, task)
    path = str(tmp_path / "artifact.json")
    open(path, "w", encoding="utf-8").write(dumps_exact(data))
    proc = subprocess.run([sys.executable, "-m", "mmverify", "gate", path, "--task", tid, "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    assert out["gates"]["instances"]
    leaks = find_leaks(out, task, data, also_public=[path])
    assert not leaks, "\n".join(map(str, leaks))
