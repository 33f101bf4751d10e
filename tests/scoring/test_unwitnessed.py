"""The unwitnessed_claim rule: a claim whose hard gate cannot
be checked (another input left out) scores 0; it does not fire otherwise."""
import json

from mmverify.reading.artifact import parse_bytes
from mmverify.pipeline.evaluate import score_artifact
from mmverify.tasks import load_task

from tests.helpers.taskfactory import speed_task

LIMIT = [{"id": "speed_limit", "form": "identity", "level": "B", "severity": "hard",
          "expr": "v * ratio <= 2", "vars": {"v": "result.speed", "ratio": "result.ratio"},
          "description": "every handle at most 2 m/s"}]


def score(tmp_path, result):
    anchors = speed_task(str(tmp_path), gates=LIMIT)
    task = load_task("t-speed", anchors)
    return score_artifact(task, parse_bytes(json.dumps({"result": result}).encode()))


def speed_row(report):
    return next(m for m in report.panel.metrics if m.metric_id == "speed")


def test_claim_without_its_witness_scores_zero(tmp_path):
    rep = score(tmp_path, {"speed": 1.9, "pitch": 0.4, "handles": 224})
    assert rep.status == "scored"
    row = speed_row(rep)
    assert row.per_paper[0].status == "unwitnessed" and row.per_paper[0].r == 0
    assert [r.rule for r in rep.panel.rules] == ["unwitnessed_claim"]
    assert "result.ratio" in rep.panel.rules[0].detail
    assert rep.oeval == 2 * 0 / 4 + 2 / 4  # speed (weight 2) 0, pitch and handles 1


def test_witnessed_claim_is_scored(tmp_path):
    # 1.3 m/s: past the anchor 1.246266 but within one band (12 %): full credit
    rep = score(tmp_path, {"speed": 1.3, "ratio": 1.0, "pitch": 0.4, "handles": 224})
    assert rep.status == "scored" and rep.oeval == 1 and not rep.panel.rules


def test_far_claim_with_its_witness_is_still_an_unverified_improvement(tmp_path):
    # 1.9 m/s passes the 2 m/s limit with ratio 1, but no replay verifies it and it is
    # more than two bands past the panel's best: the bare claim earns nothing
    rep = score(tmp_path, {"speed": 1.9, "ratio": 1.0, "pitch": 0.4, "handles": 224})
    assert rep.status == "scored" and speed_row(rep).per_paper[0].r == 0
    assert [r.rule for r in rep.panel.rules] == ["unverified_improvement"]


def test_infeasible_claim_is_zeroed_by_the_gate(tmp_path):
    rep = score(tmp_path, {"speed": 1.406276, "ratio": 1.604793, "pitch": 0.4, "handles": 224})
    assert rep.status == "infeasible" and rep.oeval == 0
    assert "speed_limit" in rep.error["message"]


def test_absent_claim_is_missing_not_unwitnessed(tmp_path):
    rep = score(tmp_path, {"pitch": 0.4, "handles": 224})
    assert speed_row(rep).read_status == "missing"
    assert not [r for r in rep.panel.rules if r.rule == "unwitnessed_claim"]


# ------------------------------------------------ witness absent or spoiled (replay tasks)

MULTIBEAM = "cumcm-2023-b-multibeam-lines"
TOTAL = "q3.total_length_m"          # checked by the hard replay gate q3.total_length_replayed


def multibeam(change, ruleset="verified"):
    task = load_task(MULTIBEAM)
    with open(task.oracle_path, encoding="utf-8") as fh:
        data = json.load(fh)
    change(data["reproduced"])
    return score_artifact(task, parse_bytes(json.dumps(data).encode()), ruleset=ruleset, records=True)


def metric_row(report, metric_id):
    return next(m for m in report.panel.metrics if m.metric_id == metric_id)


def without_plan(reproduced):
    del reproduced["problem3_line_positions_m"]


def spoiled_plan(reproduced):
    reproduced["problem3_line_positions_m"][0] = "x"


def test_the_oracle_with_its_plan_is_checked_and_paid():
    rep = multibeam(lambda r: None)
    assert rep.status == "scored" and rep.oeval == 1
    assert not [r for r in rep.panel.rules if r.rule == "unwitnessed_claim"]


def test_a_claim_whose_plan_is_absent_scores_zero_under_verified():
    rep = multibeam(without_plan)
    assert rep.status == "scored"
    row = metric_row(rep, TOTAL)
    assert {pm.status for pm in row.per_paper} == {"unwitnessed"} and all(pm.r == 0 for pm in row.per_paper)
    rule = next(r for r in rep.panel.rules if r.rule == "unwitnessed_claim" and r.metric_id == TOTAL)
    assert "q3.total_length_replayed" in rule.detail and "witness does not determine $replay." in rule.detail
    assert 0 < rep.oeval < 1          # the other metrics are scored as before


def test_a_spoiled_plan_gains_nothing_over_leaving_the_claim_out():
    spoiled = multibeam(spoiled_plan)
    assert metric_row(spoiled, TOTAL).per_paper[0].r == 0

    def claim_left_out(reproduced):
        spoiled_plan(reproduced)
        del reproduced["problem3_total_length_m"]

    assert spoiled.oeval == multibeam(claim_left_out).oeval


def test_the_paper_ruleset_knows_no_witness():
    rep = multibeam(without_plan, ruleset="paper")
    assert metric_row(rep, TOTAL).per_paper[0].r == 1
    assert not [r for r in rep.panel.rules if r.rule == "unwitnessed_claim" and r.metric_id == TOTAL]


def test_the_verdict_only_path_agrees_with_the_report():
    from mmverify.pipeline.evaluate import reward_of

    task = load_task(MULTIBEAM)
    with open(task.oracle_path, encoding="utf-8") as fh:
        data = json.load(fh)
    without_plan(data["reproduced"])
    art = parse_bytes(json.dumps(data).encode())
    for _ in range(3):      # past a task's second artifact the generated code runs
        assert reward_of(task, art) == float(score_artifact(task, art, records=True).oeval)


def test_the_self_check_runs_no_replay_and_does_not_call_the_plan_absent():
    from mmverify.plugin.selfcheck import self_check

    task = load_task(MULTIBEAM)
    with open(task.oracle_path, encoding="utf-8") as fh:
        data = json.load(fh)
    out = self_check(task, parse_bytes(json.dumps(data).encode()))
    assert all(c["path"] != "reproduced.problem3_total_length_m" for c in out["unwitnessed_claims"])


def test_a_two_sided_claim_whose_gate_input_is_left_out_keeps_its_credit(tmp_path):
    # only a one-sided claim is zeroed for another input left out (it rewards overclaiming);
    # an exact value is scored as written, and the gate is reported as a gap
    gate = [{"id": "handles_bound", "form": "identity", "level": "B", "severity": "hard",
             "expr": "handles * ratio <= 1000", "vars": {"handles": "result.handles", "ratio": "result.ratio"},
             "description": "a bound tying two answers"}]
    anchors = speed_task(str(tmp_path), gates=gate)
    task = load_task("t-speed", anchors)
    rep = score_artifact(task, parse_bytes(json.dumps({"result": {"speed": 1.246266, "pitch": 0.4,
                                                                   "handles": 224}}).encode()))
    handles = next(m for m in rep.panel.metrics if m.metric_id == "handles")
    assert handles.per_paper[0].status == "scored" and handles.per_paper[0].r == 1
    assert not [r for r in rep.panel.rules if r.rule == "unwitnessed_claim"]
    assert [i.verdict for i in rep.gates.instances if i.name == "handles_bound"] == ["gap"]


def test_a_two_sided_claim_the_replay_cannot_check_scores_zero():
    # smoke screen Q1 (a target value) with its strategy left out: the replay cannot check it
    task = load_task("cumcm-2025-a-smoke-screen")
    with open(task.oracle_path, encoding="utf-8") as fh:
        data = json.load(fh)
    del data["q1"]["strategy"]
    rep = score_artifact(task, parse_bytes(json.dumps(data).encode()), records=True)
    q1 = metric_row(rep, "q1.shielding_time")
    assert q1.direction == "target_value" and {pm.status for pm in q1.per_paper} == {"unwitnessed"}
    assert any(r.metric_id == "q1.shielding_time" and "witness does not determine" in r.detail
               for r in rep.panel.rules if r.rule == "unwitnessed_claim")


def test_a_list_item_whose_row_cannot_be_replayed_scores_zero():
    # production decision Q2: each row's profit is checked by replaying that row's decisions;
    # with one decision left out of row 3 the profit of that row cannot be checked
    task = load_task("cumcm-2024-b-production-decision")
    with open(task.oracle_path, encoding="utf-8") as fh:
        data = json.load(fh)
    del data["experiment_result"]["q2"]["best_decisions"][2]["dismantle_bad_final"]
    rep = score_artifact(task, parse_bytes(json.dumps(data).encode()), records=True)
    assert rep.status == "scored"
    row = metric_row(rep, "q2.expected_profit")
    items = {i.key: i for pm in row.per_paper for i in pm.items}
    assert items["3"].status == "unwitnessed" and items["3"].r == 0
    assert all(i.r == 1 for k, i in items.items() if k != "3")
    rules = [r for r in rep.panel.rules if r.rule == "unwitnessed_claim" and r.metric_id == "q2.expected_profit"]
    assert rules and all(r.detail.startswith("item 3: hard gate q2.row2.") for r in rules)
    assert reward_of_twice(task, data) == float(rep.oeval)
    paper = score_artifact(task, parse_bytes(json.dumps(data).encode()), ruleset="paper", records=True)
    assert all(i.r == 1 for pm in metric_row(paper, "q2.expected_profit").per_paper for i in pm.items)


def reward_of_twice(task, data):
    from mmverify.pipeline.evaluate import reward_of

    art = parse_bytes(json.dumps(data).encode())
    first = reward_of(task, art)
    assert reward_of(task, art) == first
    return first
