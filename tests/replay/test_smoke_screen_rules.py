"""Smoke screen (CUMCM 2025 A): the statement's rules for a plan are hard replay
gates, and claims are judged by the whole-target criterion."""
import copy
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS
from mmverify.reading.artifact import parse_bytes
from mmverify.cli import main
from mmverify.gates.forms import evaluate_gates
from mmverify.replay import smoke_screen
from mmverify.tasks import load_task

TASK = "cumcm-2025-a-smoke-screen"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "helpers" / "smoke_reference_plans.json")
                       .read_text(encoding="utf-8"))
SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parsed(obj):
    return parse_bytes(json.dumps(obj).encode()).data


def hard_failures(task, obj):
    return {i.gate_id for i in evaluate_gates(task, parsed(obj)).instances if i.hard and i.verdict == "fail"}


def fy1_twice_q4():
    """Q4 with FY1 twice on two courses (the reference's Q5 bombs against M1) and a claim of 10.21 s:
    under the 7-of-27 reading it replays to 10.205124 s, and it used to score 1.0."""
    art = copy.deepcopy(ORACLE)
    art["q4"]["strategies"] = [b for b in REFERENCE["q5"]["strategies"] if b["target_missile"] == "M1"]
    for u in (art["q4"]["union_duration_s"], art["experiment_result"]["q4_union_duration_s"]):
        u["M1"] = u["total"] = 10.21
    return art


def test_oracle_keeps_every_rule():
    derived = smoke_screen.replay(parsed(ORACLE))
    rules = {n: v for n, v in derived.values.items() if ".rule_breaks." in n}
    assert set(rules) == set(smoke_screen.RULE_NAMES) and set(rules.values()) == {0}


def test_fy1_twice_q4_is_infeasible_through_the_cli(tmp_path):
    path = tmp_path / "fy1_twice.json"
    path.write_text(json.dumps(fy1_twice_q4()), encoding="utf-8")
    out = CliRunner().invoke(main, ["score", str(path), "--task", TASK, "--anchors", str(ANCHORS), "--format", "json"])
    report = json.loads(out.output)
    assert report["status"] == "infeasible" and Fraction(report["oeval_exact"]) == 0
    message = report["error"]["message"]
    assert "q4.rule_course" in message and "q4.rule_bombs" in message
    # the claim is refuted as well (a claim gate: its own plan hides the whole target for 7.62 s)
    out = {i.gate_id: i.verdict for i in evaluate_gates(load_task(TASK, str(ANCHORS)), parsed(fy1_twice_q4())).instances}
    assert out["q4.total_replayed"] == "fail"
    v = smoke_screen.replay(parsed(fy1_twice_q4())).values
    assert v["q4.rule_breaks.course"] == 1 and v["q4.rule_breaks.bombs"] == 2
    assert v["q4.union_duration_s.total"] == Fraction("10.205124")     # the lenient reading's value


def test_reference_plans_are_infeasible(task):
    bad = hard_failures(task, REFERENCE)
    assert {"q3.rule_course", "q3.rule_bombs", "q4.rule_bombs", "q5.rule_course"} <= bad


def _break(art, rule, q, data):
    """The oracle with one rule of question q broken (q3-q5)."""
    bombs = art[q]["strategies"]
    if rule == "speed":
        b = bombs[data.draw(st.integers(0, len(bombs) - 1))]
        b["speed_mps"] = data.draw(st.sampled_from([Decimal("69.999"), Decimal("140.001"), Decimal("20"), Decimal("300")]))
    elif rule == "course":
        b = bombs[data.draw(st.integers(0, len(bombs) - 1))]
        twin = dict(b, drop_time_s=Decimal(str(b["drop_time_s"])) + 30)      # a second bomb of that UAV
        key = data.draw(st.sampled_from(["heading_deg", "speed_mps"]))
        twin[key] = Decimal(str(twin[key])) + data.draw(st.sampled_from([Decimal("0.001"), Decimal("-0.5"), Decimal("3")]))
        bombs.append(twin)                 # (in Q4 a second bomb of one UAV breaks the count rule too)
    elif rule == "spacing":
        b = bombs[data.draw(st.integers(0, len(bombs) - 1))]
        gap = data.draw(st.sampled_from([Decimal("0"), Decimal("0.5"), Decimal("0.999")]))
        bombs.append(dict(b, drop_time_s=Decimal(str(b["drop_time_s"])) + gap))
    else:   # bombs: one too few (Q3/Q4) or a fourth from one UAV (Q5)
        if q == "q5":
            b = bombs[0]
            bombs.extend(dict(b, drop_time_s=Decimal(str(b["drop_time_s"])) + 2 * k) for k in range(1, 4))
        else:
            del bombs[data.draw(st.integers(0, len(bombs) - 1))]
    return art


@SLOW
@given(st.sampled_from(["q3", "q4", "q5"]), st.sampled_from(smoke_screen.RULES), st.data())
def test_every_rule_break_is_infeasible(q, rule, data):
    art = _break(json.loads(json.dumps(ORACLE), parse_float=Decimal), rule, q, data)
    breaks = smoke_screen.rule_breaks(art, q)
    assert breaks[rule] > 0
    task = load_task(TASK, str(ANCHORS))
    assert f"{q}.rule_{rule}" in hard_failures(task, json.loads(json.dumps(art, default=float)))


@SLOW
@given(st.randoms(use_true_random=False))
def test_bomb_order_has_no_meaning(rnd):
    art = copy.deepcopy(ORACLE)
    for q in ("q3", "q4", "q5"):
        rnd.shuffle(art[q]["strategies"])
    assert smoke_screen.replay(parsed(art)).values == smoke_screen.replay(parsed(ORACLE)).values


CLAIMS = {"q1": (("experiment_result", "q1_duration_s"), "q1.duration_replayed", "q1.grid_slack_full_target_s"),
          "q4": (("experiment_result", "q4_union_duration_s", "total"), "q4.total_replayed",
                 "q4.grid_slack_full_target_s.total"),
          "q5": (("experiment_result", "q5_union_duration_s", "M2"), "q5.m2_replayed", "q5.grid_slack_full_target_s.M2")}


@SLOW
@given(st.sampled_from(sorted(CLAIMS)), st.sampled_from([-1, 1]),
       st.decimals(Decimal("0.001"), Decimal("5"), places=3))
def test_claim_beyond_tolerance_always_fails(q, sign, beyond):
    path, gate, slack_name = CLAIMS[q]
    derived = smoke_screen.replay(parsed(ORACLE)).values
    full = derived[slack_name.replace("grid_slack_full_target_s", "union_duration_full_target_s")
                   .replace("q1.union_duration_full_target_s", "q1.effective_duration_full_target_s")]
    claim = full + sign * (derived[slack_name] + Fraction(beyond))
    if claim < 0:
        return
    art = json.loads(json.dumps(ORACLE), parse_float=Decimal)
    node = art
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = Decimal(claim.numerator) / Decimal(claim.denominator)
    task = load_task(TASK, str(ANCHORS))
    out = {i.gate_id: i.verdict for i in evaluate_gates(task, parse_bytes(json.dumps(art, default=float)
                                                                          .encode()).data).instances}
    assert out[gate] == "fail"


def test_replay_is_deterministic():
    a = smoke_screen.replay(parsed(ORACLE))
    b = smoke_screen.replay(parsed(copy.deepcopy(ORACLE)))
    assert a.values == b.values and a.gaps == b.gaps


@pytest.mark.parametrize("bad", [None, "x", [1], {"uav": "FY9"}, {"uav": "FY1", "speed_mps": True}])
def test_malformed_plan_is_a_rule_gap(bad):
    art = copy.deepcopy(ORACLE)
    art["q3"]["strategies"][1] = bad
    derived = smoke_screen.replay(parsed(art))
    assert all(f"q3.rule_breaks.{r}" in derived.gaps for r in smoke_screen.RULES)
