"""Multibeam (CUMCM 2023 B): Q4 claims against the replay of the artifact's own
lines, the order-free overlap length, and the Q3 last position check."""
import copy
import json
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS
from mmverify.reading.artifact import parse_bytes
from mmverify.cli import main
from mmverify.gates.forms import evaluate_gates
from mmverify.replay import multibeam
from mmverify.tasks import load_task

TASK = "cumcm-2023-b-multibeam-lines"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
GRID = multibeam.load_official(str(ANCHORS / TASK / "data"))
# north-south lines 0.03 nmi apart, 2.5 nmi long, every third shifted north: neighbours overlap unevenly
LINES = [{"start_nmi": [Decimal(f"{0.2 + 0.03 * k:.2f}"), Decimal("0.5") if k % 3 else Decimal("1")],
          "end_nmi": [Decimal(f"{0.2 + 0.03 * k:.2f}"), Decimal("3")]} for k in range(24)]


def with_lines(lines, claims=None):
    art = json.loads(json.dumps(ORACLE), parse_float=Decimal)
    art["reproduced"]["problem4_lines"] = lines
    if claims:
        art["reproduced"]["problem4_summary"].update(claims)
    return art


def dumped(art):
    return json.dumps(art, default=lambda d: float(d) if isinstance(d, Decimal) else str(d))


@pytest.fixture(scope="module")
def replayed():
    return multibeam.replay(with_lines(LINES), GRID).values


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(len(LINES))))
def test_overlap_does_not_depend_on_line_order(replayed, order):
    v = multibeam.replay(with_lines([LINES[i] for i in order]), GRID).values
    for name in ("q4.overlap_over_20pct_length_nmi", "q4.overlap_slack_nmi", "q4.missed_area_pct",
                 "q4.total_length_nmi"):
        assert v[name] == replayed[name], name


def test_overlap_within_total_length(replayed):
    assert 0 < replayed["q4.overlap_over_20pct_length_nmi"] <= replayed["q4.total_length_nmi"]


def _claims(v, shift=Fraction(0)):
    f = lambda x: Decimal((x + shift).numerator) / Decimal((x + shift).denominator)  # noqa: E731
    return {"total_length_nautical_miles": f(v["q4.total_length_nmi"]),
            "missed_area_pct": f(v["q4.missed_area_pct"]),
            "overlap_over_20pct_length_nautical_miles": f(v["q4.overlap_over_20pct_length_nmi"])}


def test_claims_matching_their_lines_pass(replayed):
    task = load_task(TASK, str(ANCHORS))
    out = {i.gate_id: i.verdict for i in
           evaluate_gates(task, parse_bytes(dumped(with_lines(LINES, _claims(replayed))).encode()).data).instances}
    assert out["q4.total_length_replayed"] == out["q4.missed_area_replayed"] == "pass"
    assert out["q4.overlap_length_replayed"] == "pass"


@pytest.mark.parametrize("index,gate", [("q4.total_length_nmi", "q4.total_length_replayed"),
                                        ("q4.missed_area_pct", "q4.missed_area_replayed"),
                                        ("q4.overlap_over_20pct_length_nmi", "q4.overlap_length_replayed")])
@pytest.mark.parametrize("sign", [-1, 1])
def test_claim_beyond_slack_fails(replayed, index, gate, sign):
    slack = {"q4.total_length_nmi": Fraction(0), "q4.missed_area_pct": replayed["q4.missed_area_slack_pct"],
             "q4.overlap_over_20pct_length_nmi": replayed["q4.overlap_slack_nmi"]}[index]
    claims = _claims(replayed)
    moved = _claims({index: replayed[index] + sign * (slack + Fraction(1, 10)),
                     **{k: replayed[k] for k in ("q4.total_length_nmi", "q4.missed_area_pct",
                                                 "q4.overlap_over_20pct_length_nmi") if k != index}})
    claims.update(moved)
    v = multibeam.replay(with_lines(LINES, claims), GRID).values
    name = index.split(".", 1)[1]
    assert v[f"q4.contradicted.{name}"] == 1


def test_one_segment_plan_with_paper_like_claims_is_infeasible_through_the_cli(tmp_path):
    art = with_lines([{"start_nmi": [2, 0], "end_nmi": [2, 4]}],
                     {"total_length_nautical_miles": 548, "missed_area_pct": Decimal("1.75"),
                      "overlap_over_20pct_length_nautical_miles": Decimal("26.5")})
    path = tmp_path / "one_segment.json"
    path.write_text(dumped(art), encoding="utf-8")
    out = CliRunner().invoke(main, ["score", str(path), "--task", TASK, "--anchors", str(ANCHORS), "--format", "json"])
    report = json.loads(out.output)
    assert report["status"] == "infeasible" and Fraction(report["oeval_exact"]) == 0
    assert "q4.total_length_replayed" in report["error"]["message"]


def test_without_lines_nothing_is_contradicted():
    d = multibeam.replay(json.loads(json.dumps(ORACLE), parse_float=Decimal), GRID)
    assert all(d.values[f"q4.contradicted.{n}"] == 0 for n in multibeam.Q4_CLAIMS)
    assert all(f"q4.claim_error.{n}" in d.gaps for n in multibeam.Q4_CLAIMS)


def test_q3_last_position_is_checked_against_the_witness():
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    assert art["reproduced"]["problem3_last_position_m"] == 7194.81
    art["reproduced"]["problem3_last_position_m"] = 7226.14        # the published filler's end point
    out = {i.gate_id: i.verdict for i in evaluate_gates(task, parse_bytes(json.dumps(art).encode()).data).instances}
    assert out["q3.last_position_replayed"] == "fail"
