"""Truth beats the paper: where a replay decides a value, the replay is the judge.

A claim gate (severity ``claim``) compares a claim with the replay of what the
statement alone determines: outside its written tolerance the claim is
refuted (r = 0, ``refuted_claim``), inside it the claim is decided (r = 1,
``replay_decided``), under every ruleset, whatever a paper reported. The
bench-dragon task is the case: its reference paper's Q2-Q4 values are
refuted by the task's own replay and the anchors are corrected to it.
"""
import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmverify import reward
from mmverify.reading.artifact import from_python, parse_bytes
from mmverify.cli import main
from mmverify.pipeline.evaluate import reward_of, score_artifact, verified_reward_of
from mmverify.gates import compile_gates
from mmverify.scoring.rules import RULESETS
from mmverify.tasks import TaskLoadError, build_task, load_task

TASK = "cumcm-2024-a-dragon-dance"
ANCHORS = Path(__file__).resolve().parents[2] / "anchors"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
# metric id -> (artifact field under experiment_result, the replayed value, the claim gate's tolerance)
DECIDED = {
    "q2.terminal_time_s": ("q2.terminal_time_s", "412.4738", "0.01"),
    "q3.minimum_pitch_m": ("q3.minimum_pitch_m", "0.450337", "0.00001"),
    "q4.base_turn_length_m": ("q4.base_ratio_2_to_1_length_m", "13.621245", "0.0001"),
    "q4.shortest_turn_length_m": ("q4.shortest_candidate_length_m", "13.621245", "0.0001"),
    "q5.max_head_speed": ("q5.max_head_speed_mps", "1.246266", "0.000002"),
}
PAPER = {"q2.terminal_time_s": 464.0, "q3.minimum_pitch_m": 0.4, "q4.base_turn_length_m": 14.1372,
         "q4.shortest_turn_length_m": 14.1372, "q5.max_head_speed": 1.246266}


@pytest.fixture(scope="module")
def task():
    return load_task(TASK, str(ANCHORS))


def artifact(values):
    art = copy.deepcopy(ORACLE)
    er = art["experiment_result"]
    for mid, v in values.items():
        section, key = DECIDED[mid][0].split(".")
        er[section][key] = v
    return art


def report(task, obj, ruleset="verified"):
    return score_artifact(task, parse_bytes(json.dumps(obj).encode()), ruleset=ruleset, records=True)


def r_of(rep, metric_id):
    m = next(m for m in rep.panel.metrics if m.metric_id == metric_id)
    return m.per_paper[0].r, m.per_paper[0].status


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_replay_exact_answer_scores_one(task, ruleset):
    exact = {mid: float(v) for mid, (_, v, _) in DECIDED.items()}
    rep = report(task, artifact(exact), ruleset)
    assert rep.status == "scored" and rep.oeval == 1
    assert reward_of(task, from_python(artifact(exact)), ruleset) == 1.0


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_refuted_paper_values_score_at_most_0_4(task, ruleset):
    rep = report(task, artifact(PAPER), ruleset)
    # 464 s is after the head could reach the centre: impossible, so infeasible outright
    assert rep.status == "infeasible" and rep.oeval == 0
    # inside that bound the claims are still refuted one by one: only Q5 (correct) pays
    moved = dict(PAPER, **{"q2.terminal_time_s": 440.0})
    rep = report(task, artifact(moved), ruleset)
    assert rep.status == "scored" and float(rep.oeval) <= 0.4
    for mid in ("q2.terminal_time_s", "q3.minimum_pitch_m", "q4.base_turn_length_m", "q4.shortest_turn_length_m"):
        assert r_of(rep, mid) == (0, "refuted")
    assert {r.rule for r in rep.panel.rules} >= {"refuted_claim", "replay_decided"}
    assert reward_of(task, from_python(artifact(moved)), ruleset) == float(rep.oeval)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(DECIDED)), st.integers(1, 10 ** 6), st.booleans(), st.sampled_from(sorted(RULESETS)))
def test_a_claim_moved_beyond_the_tolerance_is_refuted(task, mid, steps, down, ruleset):
    """One-sidedness does not survive a replay: beyond the claim gate's tolerance,
    in either direction, the metric scores 0; the others keep their credit."""
    _, replayed, tol = DECIDED[mid]
    delta = Decimal(tol) * (1 + Decimal(steps) / 1000)
    value = Decimal(replayed) - delta if down else Decimal(replayed) + delta
    if value <= 0:
        return
    obj = artifact({mid: float(value)})
    if Decimal(repr(float(value))) == Decimal(replayed):
        return
    rep = report(task, obj, ruleset)
    if rep.status == "infeasible":          # a hard gate may also rule the value out
        return
    assert r_of(rep, mid) == (0, "refuted")
    assert all(r_of(rep, other)[0] == 1 for other in DECIDED if other != mid)
    assert reward_of(task, from_python(obj), ruleset) == float(rep.oeval)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(DECIDED)), st.integers(-1000, 1000))
def test_a_claim_within_the_tolerance_is_decided(task, mid, k):
    _, replayed, tol = DECIDED[mid]
    if mid == "q3.minimum_pitch_m":
        k = abs(k)      # a pitch below the replayed minimum collides (claim gate q3.claimed_pitch_feasible_replayed)
    value = Decimal(replayed) + Decimal(tol) * k / 1000
    rep = report(task, artifact({mid: float(value)}))
    if rep.status != "scored":
        return      # Q5 above the replayed speed breaks the hard speed limit
    assert r_of(rep, mid) == (1, "scored")


def test_report_marks_each_metric_and_the_verified_share(task):
    rep = report(task, artifact(dict(PAPER, **{"q2.terminal_time_s": 440.0})))
    out = rep.as_dict()
    judged = {m["id"]: m["judgement"] for m in out["metrics"]}
    assert judged["q2.terminal_time_s"] == "refuted" and judged["q5.max_head_speed"] == "verified"
    assert out["replay_judged"]["share_exact"] == "4/11"        # q5 (weight 2) of 5.5
    oracle = report(task, ORACLE).as_dict()
    assert oracle["replay_judged"]["share"] == 1.0
    assert set(m["judgement"] for m in oracle["metrics"]) == {"verified"}
    text = CliRunner().invoke(main, ["score", str(ANCHORS / TASK / "oracle.json"), "--anchors", str(ANCHORS)]).output
    assert "paper reported 464.0; replay 412.4738; corrected" in text
    assert "5.5 of 5.5 metric weight verified by a replay" in text


def test_verified_only_reward_pays_no_closeness():
    lamprey = ANCHORS / "mcm-2024-a-lamprey" / "oracle.json"      # no replay: closeness only
    assert reward("mcm-2024-a-lamprey", str(lamprey)) == 1.0
    assert reward("mcm-2024-a-lamprey", str(lamprey), verified_only=True) == 0.0
    assert reward(TASK, str(ANCHORS / TASK / "oracle.json"), verified_only=True) == 1.0
    task = load_task(TASK, str(ANCHORS))
    moved = artifact(dict(PAPER, **{"q2.terminal_time_s": 440.0}))
    assert verified_reward_of(task, from_python(moved)) == pytest.approx(4 / 11)


def test_a_soft_gate_may_not_read_a_replayed_value(task):
    raw = json.loads((ANCHORS / TASK / "task.json").read_text(encoding="utf-8"))
    for g in raw["gates"]:
        if g["id"] == "q2.terminal_time_replayed":
            g["severity"] = "soft"
            del g["verifies"]
    with pytest.raises(TaskLoadError, match="never soft"):
        compile_gates(build_task(raw, str(ANCHORS / TASK), "task.json"))


def test_a_claim_gate_names_what_it_judges(task):
    raw = json.loads((ANCHORS / TASK / "task.json").read_text(encoding="utf-8"))
    for g in raw["gates"]:
        if g["id"] == "q2.terminal_time_replayed":
            del g["verifies"]
    with pytest.raises(TaskLoadError, match="verifies"):
        compile_gates(build_task(raw, str(ANCHORS / TASK), "task.json"))


def test_audit_lists_every_correction():
    out = CliRunner().invoke(main, ["audit", "--anchors", str(ANCHORS), "--format", "json"]).output
    findings = [f for t in json.loads(out)["tasks"] for f in t["findings"] if f["task"] == TASK]
    corrected = {f["subject"] for f in findings if f["kind"] == "replay_correction"}
    assert {"q2.terminal_time_replayed", "q3.minimum_pitch_replayed", "q4.base_turn_length_replayed",
            "q4.shortest_turn_replayed"} <= corrected
    assert all("paper reported" in f["detail"] and "corrected" in f["detail"]
               for f in findings if f["kind"] == "replay_correction")


def test_an_uncorrected_refuted_anchor_is_a_problem(tmp_path):
    """A panel value a claim gate refutes, with no audit record, is reported as its own kind."""
    import shutil

    root = tmp_path / "anchors"
    shutil.copytree(ANCHORS / TASK, root / TASK)
    (root / "index.json").write_text(json.dumps({"tasks": [{"id": TASK}]}), encoding="utf-8")
    path = root / TASK / "task.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    paper = raw["panel"][0]
    paper["values"]["q4.base_turn_length_m"] = "14.1372"
    del paper["audit"]["q4.base_turn_length_m"]
    path.write_text(json.dumps(raw), encoding="utf-8")
    out = CliRunner().invoke(main, ["audit", "--anchors", str(root), "--format", "json"]).output
    findings = [f for t in json.loads(out)["tasks"] for f in t["findings"]]
    hit = [f for f in findings if f["kind"] == "replay_refuted_anchor"]
    assert hit and hit[0]["severity"] == "problem" and hit[0]["subject"] == "q4.base_turn_length_replayed"


def test_a_score_climb_from_the_paper_stays_below_0_4(task):
    """A policy climbing the reward from the paper's refuted values cannot buy
    credit back by moving away from the replay (and the replay's answer is a
    fixed point of the climb)."""
    from mmverify.adversary.feedback import climb

    paper = artifact(PAPER)
    del paper["experiment_result"]["q1"]["table"]
    found = climb(task, parse_bytes(json.dumps(paper).encode()).data, 2000)
    assert found.final <= 0.4
    exact = artifact({mid: float(v) for mid, (_, v, _) in DECIDED.items()})
    assert climb(task, parse_bytes(json.dumps(exact).encode()).data, 300).final == 1.0
