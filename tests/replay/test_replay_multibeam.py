"""Replay of CUMCM 2023 B (multibeam survey lines): the oracle's witness, the
gates that read replayed values, hostile witnesses, and the swath geometry."""
from __future__ import annotations

import copy
import json
import math
import os
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import report_verdicts as verdicts
from mmverify.reading.artifact import parse_file
from mmverify.cli import main as cli
from mmverify.pipeline.evaluate import score_path
from mmverify.replay import declared_names, run_replay
from mmverify.replay import multibeam as mb
from mmverify.tasks import default_anchors_dir, load_task

TASK = "cumcm-2023-b-multibeam-lines"
TASK_DIR = os.path.join(default_anchors_dir(), TASK)
ORACLE = os.path.join(TASK_DIR, "oracle.json")
Q3_GATES = ("q3.total_length_replayed", "q3.line_count_replayed", "q3.full_coverage_replayed",
            "q3.overlap_at_least_10pct_replayed", "q3.overlap_at_most_20pct_replayed")
OFFICIAL = mb.load_official(os.path.join(TASK_DIR, "data"))   # what the engine passes the replay
GRID = OFFICIAL.grid()


def positions(xs):
    return {"reproduced": {"problem3_line_positions_m": [Decimal(str(x)) for x in xs]}}


def ns_lines(xs):
    return [{"start_nmi": [Decimal(str(x)), Decimal(0)], "end_nmi": [Decimal(str(x)), Decimal(5)]} for x in xs]


# ------------------------------------------------------------------ the oracle

def test_registered():
    assert load_task(TASK).replay == "multibeam"
    assert declared_names(load_task(TASK)) == frozenset(mb.DERIVED)


def test_oracle_replays_to_its_own_claims(task, oracle):
    got, report = verdicts(task, oracle)
    assert all(got[g] == "pass" for g in Q3_GATES), got
    assert not report.hard_failures
    assert "reproduced.problem3_total_length_m" in report.verified()
    values = report.replay.values
    assert values["q3.total_length_m"] == Fraction(125936) == Fraction(oracle["reproduced"]["problem3_total_length_m"])
    assert values["q3.line_count"] == 34
    assert values["q3.missed_area_pct"] == 0
    assert Fraction(10) <= values["q3.min_overlap_pct"] <= values["q3.max_overlap_pct"] <= Fraction(20)


def test_oracle_witness_is_the_greedy_rule():
    """The oracle's line positions are the documented rebuild rule's output."""
    data = parse_file(ORACLE).data
    assert data["reproduced"]["problem3_line_positions_m"] == mb.q3_greedy_positions(10.0)


def test_oracle_cli_score_passes_every_replay_gate():
    result = CliRunner().invoke(cli, ["score", ORACLE, "--task", TASK, "--format", "json"])
    assert result.exit_code == 0, result.output
    verdicts = {i["gate"]: i["verdict"] for i in json.loads(result.output)["gates"]["instances"]}
    assert all(verdicts[g] == "pass" for g in Q3_GATES)
    assert "fail" not in verdicts.values()


def test_self_check_runs_no_replay():
    # replay verdicts are decided at scoring; the agent-facing gate shows them as gaps
    result = CliRunner().invoke(cli, ["gate", ORACLE, "--task", TASK])
    assert result.exit_code == 0, result.output
    for gate in Q3_GATES:
        assert any(line.strip().startswith("GAP") and gate in line for line in result.output.splitlines())


def test_oracle_scores_one():
    report = score_path(ORACLE, TASK)
    assert report.status == "scored" and report.oeval == 1


def test_reference_filler_layout_does_not_cover_the_area(task, oracle):
    """The published reproduction's side-file layout (nine paper positions, then
    25 evenly spaced lines up to 7226.14 m) has the claimed count and length but
    leaves gaps and overlaps far beyond 20%: the hard coverage gates refute it."""
    tail = np.linspace(585.0, 7226.14, 25).round(2).tolist()
    filler = [22.99, 66.71, 114.50, 166.57, 223.10, 284.32, 350.45, 422.72, 500.43] + tail
    oracle["reproduced"]["problem3_line_positions_m"] = [Decimal(str(x)) for x in filler]
    got, report = verdicts(task, oracle)
    assert got["q3.total_length_replayed"] == "pass"
    assert got["q3.full_coverage_replayed"] == "fail"
    assert got["q3.overlap_at_least_10pct_replayed"] == "fail"
    assert got["q3.overlap_at_most_20pct_replayed"] == "fail"
    assert report.replay.values["q3.missed_area_pct"] == Fraction("8.5975")


# ------------------------------------------------------------------ claims against the witness

@pytest.mark.parametrize("claim", ["122232", "125935", "125937", "0.5"])
def test_claim_off_its_witness_fails_hard(task, oracle, claim):
    oracle["reproduced"]["problem3_total_length_m"] = Decimal(claim)
    got, report = verdicts(task, oracle)
    assert got["q3.total_length_replayed"] == "fail"
    assert "reproduced.problem3_total_length_m" not in report.verified()


def test_claim_rounded_to_the_metre_passes(task, oracle):
    oracle["reproduced"]["problem3_total_length_m"] = Decimal("125936.4")
    assert verdicts(task, oracle)[0]["q3.total_length_replayed"] == "pass"


def test_fewer_lines_with_matching_claim_fail_overlap_or_coverage(task, oracle):
    """A shorter layout whose claim matches its witness: 31 lines at 0% overlap
    pass the length identity but fail the 10% overlap floor."""
    xs = mb.q3_greedy_positions(0.0)
    assert len(xs) == 31
    oracle["reproduced"]["problem3_line_positions_m"] = xs
    oracle["reproduced"]["problem3_line_count"] = 31
    oracle["reproduced"]["problem3_total_length_m"] = Decimal(31 * 3704)
    got, report = verdicts(task, oracle)
    assert got["q3.total_length_replayed"] == "pass"
    assert got["q3.overlap_at_least_10pct_replayed"] == "fail"
    assert report.hard_failures


def test_dropping_a_line_leaves_a_gap(task, oracle):
    xs = oracle["reproduced"]["problem3_line_positions_m"]
    del xs[17]
    oracle["reproduced"]["problem3_line_count"] = 33
    oracle["reproduced"]["problem3_total_length_m"] = Decimal(33 * 3704)
    got, report = verdicts(task, oracle)
    assert got["q3.total_length_replayed"] == "pass"
    assert got["q3.full_coverage_replayed"] == "fail"
    assert report.replay.values["q3.missed_area_pct"] > 0


def test_missing_witness_is_a_gap_and_unverified(task, oracle):
    del oracle["reproduced"]["problem3_line_positions_m"]
    got, report = verdicts(task, oracle)
    assert all(got[g] == "gap" for g in Q3_GATES), got
    assert report.verified() == frozenset()
    assert report.replay.gaps["q3.total_length_m"].startswith("witness absent")


def test_artifact_cannot_inject_replayed_values(task, oracle):
    del oracle["reproduced"]["problem3_line_positions_m"]
    oracle["$replay"] = {"q3": {"total_length_m": Decimal(125936), "line_count": Decimal(34)}}
    got, _ = verdicts(task, oracle)
    assert got["q3.total_length_replayed"] == "gap"


# ------------------------------------------------------------------ determinism and hostile input

def test_deterministic_and_byte_stable(oracle):
    a = mb.replay(oracle, OFFICIAL)
    b = mb.replay(copy.deepcopy(oracle), OFFICIAL)
    assert a == b
    same = positions(["22.52", "66.710", "1.14660E2"])
    other = positions(["22.52", "66.71", "114.66"])
    assert mb.replay(same, OFFICIAL) == mb.replay(other, OFFICIAL)


def test_positions_in_any_order(oracle):
    xs = list(oracle["reproduced"]["problem3_line_positions_m"])
    shuffled = {"reproduced": {"problem3_line_positions_m": xs[::-1]}}
    assert mb.replay(shuffled, OFFICIAL).values == mb.replay(oracle, OFFICIAL).values


@pytest.mark.parametrize("raw, why", [
    ([], "non-empty"), ("22.5", "non-empty"), ([Decimal(1), "2"], "not a number"),
    ([Decimal(1), True], "not a number"), ([Decimal(-1)], "outside"), ([Decimal("7408.01")], "outside"),
    ([Decimal(1)] * 1001, "more than 1000"),
])
def test_malformed_q3_witness_is_a_gap(raw, why):
    d = mb.replay({"reproduced": {"problem3_line_positions_m": raw}}, OFFICIAL)
    assert not any(k.startswith("q3.") for k in d.values)
    assert all(why in d.gaps[n] and d.gaps[n].startswith("witness malformed") for n in mb.DERIVED if n.startswith("q3."))


json_leaf = st.one_of(st.none(), st.booleans(), st.text(max_size=5),
                      st.decimals(allow_nan=False, allow_infinity=False, min_value=-10**6, max_value=10**6),
                      st.integers(-10**12, 10**12))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q3=json_value, q4=json_value)
def test_hostile_witness_never_raises(q3, q4):
    t0 = time.perf_counter()
    d = mb.replay({"reproduced": {"problem3_line_positions_m": q3, "problem4_lines": q4}}, OFFICIAL)
    assert set(d.values) | set(d.gaps) == set(mb.DERIVED)
    assert all(isinstance(v, Fraction) for v in d.values.values())
    assert time.perf_counter() - t0 < 5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.decimals(min_value=0, max_value=7408, places=2), min_size=1, max_size=60))
def test_q3_properties(xs):
    d = mb.replay({"reproduced": {"problem3_line_positions_m": xs}}, None)
    v = d.values
    assert v["q3.total_length_m"] == 3704 * len(xs) == 3704 * v["q3.line_count"]
    assert v["q3.last_position_m"] == max(xs)
    assert 0 <= v["q3.missed_area_pct"] <= 100
    if len(xs) >= 2:
        assert v["q3.min_overlap_pct"] <= v["q3.max_overlap_pct"]
    # one more line never uncovers anything
    more = mb.replay({"reproduced": {"problem3_line_positions_m": xs + [Decimal(3704)]}}, None).values
    assert more["q3.missed_area_pct"] <= v["q3.missed_area_pct"]


def test_hostile_q4_sizes_are_bounded():
    many = [{"start_nmi": [Decimal(0), Decimal(0)], "end_nmi": [Decimal(4), Decimal(5)]}] * 401
    assert "more than 400" in mb.replay({"reproduced": {"problem4_lines": many}}, OFFICIAL).gaps["q4.total_length_nmi"]
    long = [{"start_nmi": [Decimal(0), Decimal(0)], "end_nmi": [Decimal(4), Decimal(5)]}] * 300   # 300 x 6.4 nmi
    assert "total length" in mb.replay({"reproduced": {"problem4_lines": long}}, OFFICIAL).gaps["q4.missed_area_pct"]
    outside = [{"start_nmi": [Decimal(0), Decimal(0)], "end_nmi": [Decimal("4.01"), Decimal(5)]}]
    assert "outside" in mb.replay({"reproduced": {"problem4_lines": outside}}, OFFICIAL).gaps["q4.line_count"]


def test_replay_runner_time_capped(task):
    lines = ns_lines([round(0.0125 + 0.0125 * k, 4) for k in range(299)])   # 299 x 5 nmi = 1495 nmi
    t0 = time.perf_counter()
    report = run_replay(task, {"reproduced": {"problem4_lines": lines}})
    assert time.perf_counter() - t0 < 10
    assert report.status in ("ok", "timeout")


# ------------------------------------------------------------------ geometry

def test_flat_bed_is_the_statement_formula():
    deep, shallow = mb.swath_reach(100.0, 0.0)
    assert deep == pytest.approx(100 * math.tan(math.radians(60))) and shallow == pytest.approx(deep)
    # flat bed: the overlap rate is 1 - d / W
    w = 2 * deep
    assert mb.overlap_pct(deep, w, 150 - shallow, w) == pytest.approx(100 * (1 - 150 / w))


def test_q3_strip_edges():
    """The first greedy line's strip reaches the east edge, the last one the
    west edge; depths at the edges follow the statement (13.01 m, 206.99 m)."""
    assert mb.q3_depth(0) == pytest.approx(110 - 3704 * math.tan(math.radians(1.5)))
    assert mb.q3_depth(7408) == pytest.approx(206.99, abs=0.01)
    xs = mb.q3_greedy_positions()
    assert mb.q3_strip(float(xs[0]))[0] <= 0 < mb.q3_strip(float(xs[0]) + 0.01)[0]
    assert mb.q3_strip(float(xs[-1]))[1] >= 7408


def test_official_grid_matches_the_attachment_summary():
    assert GRID.depth.shape == (251, 201)
    assert GRID.depth.min() == 20.0 and GRID.depth.max() == pytest.approx(197.2)
    assert round(float(GRID.depth.mean()), 3) == 62.539
    assert not GRID.depth.flags.writeable


def test_q4_strip_on_a_plane_matches_the_closed_form():
    """On a planar seabed the sampled Q4 strip equals the closed-form one."""
    step = mb.Q4_STEP_NMI * mb.NMI_M
    xs = np.arange(201) * step
    depth = np.tile(200.0 - xs * math.tan(math.radians(1.5)), (251, 1))    # deep in the west
    gy, gx = np.gradient(depth, step)
    plane = mb.DepthGrid(depth, gx, gy)
    x_nmi = 1.3
    line = mb._line(plane, (x_nmi, 0.0, x_nmi, 5.0))      # northward: left is west, the deep side
    d = 200.0 - x_nmi * mb.NMI_M * math.tan(math.radians(1.5))
    deep, shallow = mb.swath_reach(d, math.radians(1.5))
    assert np.allclose(line.left, deep) and np.allclose(line.right, shallow)


def test_q4_values_and_monotone_coverage():
    xs = [round(0.05 + 0.1 * k, 4) for k in range(40)]
    d = mb.replay({"reproduced": {"problem4_lines": ns_lines(xs)}}, OFFICIAL).values
    assert d["q4.line_count"] == 40 and d["q4.total_length_nmi"] == 200
    assert 0 < d["q4.missed_area_pct"] < 100
    assert 0 <= d["q4.overlap_over_20pct_length_nmi"] <= d["q4.total_length_nmi"]
    denser = mb.replay({"reproduced": {"problem4_lines": ns_lines(xs + [round(0.1 + 0.1 * k, 4) for k in range(39)])}},
                       OFFICIAL).values
    assert denser["q4.missed_area_pct"] <= d["q4.missed_area_pct"]
    assert denser["q4.overlap_over_20pct_length_nmi"] >= d["q4.overlap_over_20pct_length_nmi"]
    reversed_lines = [{"start_nmi": s["end_nmi"], "end_nmi": s["start_nmi"]} for s in ns_lines(xs)]
    assert mb.replay({"reproduced": {"problem4_lines": reversed_lines}}, OFFICIAL).values["q4.missed_area_pct"] \
        == d["q4.missed_area_pct"]


def test_q4_without_grid_derives_length_only():
    d = mb.replay({"reproduced": {"problem4_lines": ns_lines([1.0, 2.0])}}, None)
    assert d.values["q4.total_length_nmi"] == 10
    assert d.gaps["q4.missed_area_pct"] == "official depth grid absent"


def test_the_grid_is_read_only_for_a_q4_witness(tmp_path):
    """An artifact without Q4 lines never reads the attachment (nor needs numpy for it);
    a broken attachment is a replay defect for Q4 lines only."""
    broken = tmp_path / "depth_grid.csv"
    broken.write_text("x,0\n0,1\n", encoding="utf-8")
    source = mb.load_official(str(tmp_path))
    q3_only = {"reproduced": {"problem3_line_positions_m": [100, 600, 1200]}}
    d = mb.replay(q3_only, source)
    assert d.values["q3.line_count"] == 3 and "witness absent" in d.gaps["q4.missed_area_pct"]
    with pytest.raises(ValueError, match="expected a 251 x 201 grid"):
        mb.replay({"reproduced": {"problem4_lines": ns_lines([1.0])}}, source)
    assert mb.load_official(str(tmp_path / "absent")) is None
