"""The unwitnessed_claim rule: a one-sided claim whose bounding hard gate cannot
be checked (another input left out) scores 0; it does not fire otherwise."""
import json

from mmverify.artifact import parse_bytes
from mmverify.evaluate import score_artifact
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
