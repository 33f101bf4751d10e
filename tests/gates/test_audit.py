"""``mmverify audit``: the references audited by their own gates.

Synthetic tasks (so these tests do not depend on the bundled anchors) plus the
real dragon-dance case when ``anchors/cumcm-2024-a-dragon-dance`` exists."""
from __future__ import annotations

import copy
import json
import os

import pytest
from click.testing import CliRunner
from tests.helpers.taskfactory import number_schema, paper
from tests.helpers.gatekit import GATES, PANEL, TID, dragon_task, run_cli

from mmverify.cli import main
from mmverify.gates.audit import audit_anchors
from mmverify.tasks import default_anchors_dir


def audit(anchors: str, *more: str):
    r = CliRunner().invoke(main, ["audit", "--anchors", anchors, "--format", "json", *more])
    out = json.loads(r.output) if r.output.startswith("{") else None
    return r.exit_code, out, r.output


def findings(out, kind=None, severity=None):
    return [f for t in out["tasks"] for f in t["findings"]
            if (kind is None or f["kind"] == kind) and (severity is None or f["severity"] == severity)]


def fresh(tmp_path, **kw) -> str:
    folder = tmp_path / "anchors"
    folder.mkdir(parents=True, exist_ok=True)
    return dragon_task(str(folder), **kw)


# ------------------------------------------------------- the reference case

def test_dragon_dance_original_is_shown_infeasible_and_the_correction_passes(tmp_path):
    anchors = fresh(tmp_path)
    code, out, text = audit(anchors)
    assert code == 0, text
    just = findings(out, "audit_justified")
    assert len(just) == 1
    f = just[0]
    assert f["subject"] == "q5.handle_speed_limit" and f["paper"] == "A016" and f["severity"] == "audited"
    assert "1.406276 * 1.604793" in f["detail"] and "2.256781880868 > 2" in f["detail"]
    assert not findings(out, severity="problem")
    task = out["tasks"][0]
    assert task["oracle_counts"]["pass"] == task["oracle_gate_instances"] == 4
    assert out["totals"]["oracle_gate_instances"] == 4
    assert out["totals"]["tasks_with_hard_gate"] == 1


def test_dragon_dance_through_the_real_cli(tmp_path):
    anchors = fresh(tmp_path)
    r = run_cli("audit", "--anchors", anchors)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "audit_justified  q5.handle_speed_limit / A016" in r.stdout
    assert "2.256781880868 > 2" in r.stdout
    assert "0 unaudited problem(s)" in r.stdout


def test_an_unaudited_infeasible_panel_value_is_a_problem(tmp_path):
    panel = PANEL + [paper("C003", {"speed": "1.406276"}, excluded={"pitch": "figure_only",
                                                                    "handles": "figure_only"},
                           context={"result.ratio": "1.604793"})]
    code, out, text = audit(fresh(tmp_path, panel=panel))
    assert code == 1, text
    (f,) = findings(out, "infeasible_anchor")
    assert (f["paper"], f["subject"], f["severity"]) == ("C003", "q5.handle_speed_limit", "problem")
    assert "2.256781880868 > 2" in f["detail"]


def test_an_infeasible_panel_value_with_an_audit_record_is_audited(tmp_path):
    panel = PANEL + [paper("C003", {"speed": "1.406276"}, excluded={"pitch": "figure_only",
                                                                    "handles": "figure_only"},
                           context={"result.ratio": "1.604793"},
                           audit={"speed": {"reason": "kept as published; infeasible, see gate",
                                            "gate": "q5.handle_speed_limit"}})]
    code, out, _ = audit(fresh(tmp_path, panel=panel))
    assert code == 0
    (f,) = findings(out, "infeasible_anchor")
    assert f["severity"] == "audited" and "C003/speed" in f["detail"]


def test_oracle_hard_failure_is_a_problem_unless_an_audit_record_names_the_gate(tmp_path):
    panel = copy.deepcopy(PANEL)
    del panel[0]["audit"]
    code, out, _ = audit(fresh(tmp_path, panel=panel, oracle_extra={"ratio": 1.7}))
    assert code == 1
    (f,) = findings(out, "oracle_gate_failure")
    assert f["severity"] == "problem" and f["subject"] == "q5.handle_speed_limit"
    code, out, _ = audit(fresh(tmp_path / "b", oracle_extra={"ratio": 1.7}))
    (f,) = findings(out, "oracle_gate_failure")
    assert f["severity"] == "audited" and "A016/speed" in f["detail"]


def test_oracle_hard_gap_is_a_problem(tmp_path):
    gates = GATES + [{"id": "extra", "form": "range", "level": "A", "severity": "hard", "path": "result.extra",
                      "min": "0", "description": "reads a field the oracle lacks"}]
    code, out, _ = audit(fresh(tmp_path, gates=gates, schema_extra={"extra": number_schema("1")}))
    assert code == 1
    (f,) = findings(out, "oracle_gate_gap")
    assert f["subject"] == "extra" and f["severity"] == "problem"


def test_audit_record_whose_original_breaks_no_named_gate_is_a_problem(tmp_path):
    panel = copy.deepcopy(PANEL)
    panel[0]["audit"]["speed"]["original"] = "1.2"
    code, out, _ = audit(fresh(tmp_path, panel=panel))
    assert code == 1
    (f,) = findings(out, "audit_not_reproduced")
    assert f["subject"] == "q5.handle_speed_limit" and f["paper"] == "A016"


def test_audit_record_naming_an_unknown_gate_is_a_problem(tmp_path):
    panel = copy.deepcopy(PANEL)
    panel[0]["audit"]["speed"]["gate"] = "no.such.gate"
    code, out, _ = audit(fresh(tmp_path, panel=panel))
    assert code == 1 and findings(out, "audit_unknown_gate")


def test_panel_value_outside_the_schema_is_a_problem(tmp_path):
    panel = copy.deepcopy(PANEL)
    panel[1]["values"]["pitch"] = "-0.1"
    code, out, _ = audit(fresh(tmp_path, panel=panel))
    assert code == 1
    (f,) = findings(out, "schema_violation")
    assert (f["subject"], f["paper"], f["severity"]) == ("result.pitch", "B002", "problem")


def test_degenerate_band_is_reported(tmp_path):
    code, out, _ = audit(fresh(tmp_path, metric_extra={"pitch": {"band": {"rel": "0.01"}}}))
    assert code == 0
    fs = findings(out, "degenerate_band")
    assert {f["paper"] for f in fs} == {"A016", "B002"} and all(f["severity"] == "info" for f in fs)


def test_incomparable_units_are_reported(tmp_path):
    extra = {"pitch": {"comparable": False, "comparable_reason": "two scales"}}
    code, out, _ = audit(fresh(tmp_path, metric_extra=extra))
    (f,) = findings(out, "incomparable_units")
    assert f["subject"] == "pitch" and f["severity"] == "audited" and code == 0


def test_literature_split_in_the_headline_is_a_problem_and_out_of_it_audited(tmp_path):
    split = {"metrics": ["speed"], "summary": "10 of 11 disagree", "source": "test"}
    code, out, _ = audit(fresh(tmp_path, literature_split=split))
    assert code == 1 and findings(out, "literature_split", "problem")
    code, out, _ = audit(fresh(tmp_path / "b", literature_split=split, headline=False, headline_reason="split"))
    assert code == 0 and findings(out, "literature_split", "audited")


def test_ungated_directional_metric_is_a_problem_unless_it_has_a_reason(tmp_path):
    gates = [g for g in GATES if g["id"] != "q5.handle_speed_limit"]
    schema = {"speed": number_schema("m/s", minimum=0)}
    panel = copy.deepcopy(PANEL)
    del panel[0]["audit"]
    code, out, _ = audit(fresh(tmp_path, gates=gates, schema_extra=schema, panel=panel))
    assert code == 1
    (f,) = findings(out, "ungated_directional")
    assert f["subject"] == "speed" and f["severity"] == "problem" and "bounded above" in f["detail"]
    code, out, text = audit(fresh(tmp_path / "b", gates=gates, schema_extra=schema, panel=panel,
                                  metric_extra={"speed": {"ungated_reason": "bounded by physics elsewhere"}}))
    assert code == 0, text
    assert findings(out, "ungated_directional")[0]["severity"] == "audited"


def test_a_gate_bounding_the_wrong_side_does_not_cover_a_directional_metric(tmp_path):
    gates = [g for g in GATES if g["id"] != "q5.handle_speed_limit"] + [
        {"id": "speed.min", "form": "range", "level": "A", "severity": "hard", "path": "result.speed", "min": "0",
         "description": "non-negative"}]
    panel = copy.deepcopy(PANEL)
    del panel[0]["audit"]
    code, out, _ = audit(fresh(tmp_path, gates=gates, panel=panel,
                               schema_extra={"speed": number_schema("m/s", minimum=0)}))
    assert code == 1 and findings(out, "ungated_directional")[0]["subject"] == "speed"


def test_a_task_that_does_not_load_exits_3(tmp_path):
    gates = GATES + [{"id": "bad", "form": "range", "level": "A", "severity": "hard", "path": "result.nope",
                      "min": "0", "description": "undescribed field"}]
    code, out, _ = audit(fresh(tmp_path, gates=gates))
    assert code == 3
    (f,) = findings(out, "task_error")
    assert "gates/4 (bad)/path" in f["detail"]


def test_audit_output_is_deterministic_in_every_format(tmp_path):
    anchors = fresh(tmp_path)
    for fmt in ("json", "table", "md"):
        a = CliRunner().invoke(main, ["audit", "--anchors", anchors, "--format", fmt]).output
        b = CliRunner().invoke(main, ["audit", "--anchors", anchors, "--format", fmt]).output
        assert a == b
    assert "| t-dragon | 4 | 3 | 4 | 4 | 0 | 0 | 0 |" in CliRunner().invoke(
        main, ["audit", "--anchors", anchors, "--format", "md"]).output


def test_audit_api_matches_the_cli(tmp_path):
    anchors = fresh(tmp_path)
    report = audit_anchors(anchors)
    assert report.oracle_instances == 4 and not report.problems
    assert [t.task_id for t in report.tasks] == [TID]


# ------------------------------------------------------ the real anchors

REAL = "cumcm-2024-a-dragon-dance"


def test_real_dragon_dance_audit_finds_the_published_case():
    anchors = default_anchors_dir()
    if not os.path.exists(os.path.join(anchors, REAL, "task.json")):
        pytest.skip(f"anchors/{REAL} not written yet")
    r = run_cli("audit", "--anchors", anchors, "--task", REAL, "--format", "json")
    out = json.loads(r.stdout)
    just = [f for f in findings(out, "audit_justified") if f["subject"] == "q5.handle_speed_limit"]
    assert just, r.stdout
    assert "1.406276 * 1.604793" in just[0]["detail"] and "2.256781880868 > 2" in just[0]["detail"]
    task = out["tasks"][0]
    assert task["oracle_counts"]["hard_failures"] == 0
    # the corrected value passes on the oracle artifact
    gate = CliRunner().invoke(main, ["gate", os.path.join(anchors, REAL, "oracle.json"), "--task", REAL,
                                     "--anchors", anchors, "--format", "json"])
    assert gate.exit_code == 0, gate.output
    inst = next(i for i in json.loads(gate.output)["gates"]["instances"] if i["gate"] == "q5.handle_speed_limit")
    assert inst["verdict"] == "pass" and "1.246266 * 1.604793" in inst["detail"]
