"""Replay of the bench-dragon task (CUMCM 2024 A) from the statement's geometry."""
import copy
import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS
from mmverify.reading.artifact import parse_bytes
from mmverify.cli import main
from mmverify.gates.forms import evaluate_gates
from mmverify.replay import declared_names, run_replay
from mmverify.replay import dragon_dance
from mmverify.replay import dragon_dance_geometry
from mmverify.tasks import load_task

TASK = "cumcm-2024-a-dragon-dance"
ORACLE_PATH = ANCHORS / TASK / "oracle.json"
ORACLE = json.loads(ORACLE_PATH.read_text(encoding="utf-8"))
HARD_REPLAY = ("q5.speed_ratio_replayed", "q5.max_head_speed_replayed", "q5.head_speed_feasible_replayed")


@pytest.fixture(scope="module")
def official():
    return dragon_dance.load_official(str(ANCHORS / TASK / "data"))


def parsed(obj):
    return parse_bytes(json.dumps(obj).encode()).data


def verdicts(task, obj):
    return {i.gate_id: i.verdict for i in evaluate_gates(task, parsed(obj)).instances}


def with_q(section, key, value):
    art = copy.deepcopy(ORACLE)
    art["experiment_result"][section][key] = value
    return art


def test_registered():
    assert load_task(TASK).replay == "dragon_dance"
    assert declared_names(load_task(TASK)) == frozenset(dragon_dance.DERIVED)


def test_statement_quantities(official):
    # collision before the head could reach the centre (442.59 s), at a small radius
    assert 400 < official["q2.terminal_time_s"] < float(dragon_dance_geometry._arc(dragon_dance_geometry.THETA_A, 0.55 / dragon_dance_geometry.TWO_PI))
    assert round(official["q2.terminal_time_s"], 2) == 412.47
    assert 0.30 < official["q3.minimum_pitch_m"] < 0.55
    assert round(official["q3.minimum_pitch_m"], 5) == 0.45034
    assert round(official["q4.base_turn_length_m"], 4) == 13.6212
    assert official["q5.max_speed_ratio"] >= 1
    assert official["q5.max_head_speed_mps"] * official["q5.max_speed_ratio"] == pytest.approx(2.0)


def test_oracle_replays_to_its_q5_claims(task):
    v = verdicts(task, ORACLE)
    assert all(v[g] == "pass" for g in HARD_REPLAY), v


def test_oracle_holds_the_replayed_truth(task):
    """The oracle carries the replayed values (the paper's refuted ones are in the
    panel's audit records): every gate passes, none of them soft on a replay."""
    v = verdicts(task, ORACLE)
    assert set(v.values()) == {"pass"}, {g: x for g, x in v.items() if x != "pass"}
    for gate in task.gates:
        if "$replay." in json.dumps(gate.get("vars", {})):
            assert gate["severity"] in ("hard", "claim"), gate["id"]


def test_correct_answers_pass_every_replay_gate(task):
    art = copy.deepcopy(ORACLE)
    er = art["experiment_result"]
    er["q2"]["terminal_time_s"] = 412.47
    er["q3"]["minimum_pitch_m"] = 0.450338
    er["q4"]["base_ratio_2_to_1_length_m"] = 13.6212
    er["q4"]["shortest_candidate_length_m"] = 13.6212
    v = verdicts(task, art)
    for gid in HARD_REPLAY + ("q3.minimum_pitch_replayed", "q3.claimed_pitch_feasible_replayed",
                              "q2.terminal_time_replayed", "q4.base_turn_length_replayed"):
        assert v[gid] == "pass", (gid, v[gid])


def test_inflated_head_speed_fails_hard(task):
    art = with_q("q5", "max_head_speed_mps", 1.3)
    v = verdicts(task, art)
    assert v["q5.max_head_speed_replayed"] == "fail"
    assert v["q5.head_speed_feasible_replayed"] == "fail"
    # inflating the claimed ratio's partner does not help: the feasibility gate reads the replayed ratio
    art["experiment_result"]["q5"]["max_speed_ratio_when_head_1mps"] = 1.5
    assert verdicts(task, art)["q5.head_speed_feasible_replayed"] == "fail"


def test_inflated_claim_fails_through_the_cli(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(with_q("q5", "max_head_speed_mps", 1.4)), encoding="utf-8")
    out = CliRunner().invoke(main, ["score", str(path), "--task", TASK, "--anchors", str(ANCHORS),
                                    "--format", "json"]).output
    report = json.loads(out)
    assert report["status"] == "infeasible" and "q5.head_speed_feasible_replayed" in report["error"]["message"]
    # the agent-facing self-check runs no replay: the replayed (statement-determined) ratio stays hidden
    shown = CliRunner().invoke(main, ["gate", str(path), "--task", TASK, "--anchors", str(ANCHORS)]).output
    assert "1.246266" not in shown and "GAP  hard C identity      q5.head_speed_feasible_replayed" in shown


def test_claimed_pitch_absent_is_a_gap(task):
    art = copy.deepcopy(ORACLE)
    del art["experiment_result"]["q3"]["minimum_pitch_m"]
    report = evaluate_gates(task, parsed(art))
    assert {i.gate_id: i.verdict for i in report.instances}["q3.claimed_pitch_feasible_replayed"] == "gap"


def test_deterministic(task, official):
    data = parsed(ORACLE)
    a, b = dragon_dance.replay(data, official), dragon_dance.replay(data, official)
    assert a == b
    assert all(isinstance(v, Fraction) for v in a.values.values())
    assert run_replay(task, data).values == run_replay(task, data).values


def test_scoring_imports_neither_numpy_nor_the_simulation(tmp_path):
    """The replay reads the stored statement quantities: a score never pays for numpy."""
    import subprocess
    import sys

    code = ("import sys, json; from mmverify.reading.artifact import parse_file; from mmverify.tasks import load_task;"
            "from mmverify.pipeline.evaluate import score_artifact;"
            f"r = score_artifact(load_task({TASK!r}), parse_file({str(ORACLE_PATH)!r}));"
            "assert r.gates.instances;"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'numpy' or m.endswith('geometry'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


@pytest.mark.parametrize("pitch", [0.2, 0.3, 0.4, 0.44, 0.45, 0.4503, 0.45033, 0.45034, 0.4504, 0.451, 0.46,
                                   0.5, 0.55, 0.7, 0.9, 1.1, 1.3, 1.5, 1.7])
def test_clearance_changes_sign_once_at_the_replayed_minimum(official, pitch):
    """The gate compares the claimed pitch with the replayed minimum; that is the
    simulation's verdict at the claimed pitch because the clearance changes sign
    once, at the minimum."""
    root = official["q3.minimum_pitch_m"]
    assert (dragon_dance_geometry.coil_in_clearance(pitch) >= 0) == (pitch >= root)


def test_claimed_pitch_gate_follows_the_replayed_minimum(task):
    below, at, above = (with_q("q3", "minimum_pitch_m", v) for v in (0.450336, 0.450337, 0.450338))
    assert verdicts(task, below)["q3.claimed_pitch_feasible_replayed"] == "fail"
    assert verdicts(task, at)["q3.claimed_pitch_feasible_replayed"] == "pass"
    assert verdicts(task, above)["q3.claimed_pitch_feasible_replayed"] == "pass"


def test_claimed_pitch_clearance_orders_pitches(official):
    p = official["q3.minimum_pitch_m"]
    assert dragon_dance_geometry.coil_in_clearance(p + 2e-5) >= 0 > dragon_dance_geometry.coil_in_clearance(p - 2e-5)
    assert dragon_dance_geometry.coil_in_clearance(0.40) < 0 <= dragon_dance_geometry.coil_in_clearance(0.55)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.integers(-10**30, 10**30),
                 st.decimals(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3),
                 st.decimals(min_value=Decimal("0.2"), max_value=Decimal("1.7"), places=4)))
def test_hostile_pitch_never_raises(task, official, value):
    art = copy.deepcopy(ORACLE)
    art["experiment_result"]["q3"]["minimum_pitch_m"] = value
    data = parse_bytes(json.dumps(art, default=str).encode()).data
    data["experiment_result"]["q3"]["minimum_pitch_m"] = value
    derived = dragon_dance.replay(data, official)
    assert set(derived.values) == set(dragon_dance.DERIVED) and not derived.gaps
    verdict = {i.gate_id: i.verdict for i in evaluate_gates(task, data).instances}
    assert verdict["q3.claimed_pitch_feasible_replayed"] in ("pass", "fail", "gap")


def test_hostile_shapes_never_raise(official):
    for data in ({}, {"experiment_result": []}, {"experiment_result": {"q3": 3}},
                 {"experiment_result": {"q3": {"minimum_pitch_m": "0.45"}}},
                 {"experiment_result": {"q1": {"table": "x"}}}, {"experiment_result": {"q1": {"table": [1, None]}}},
                 {"experiment_result": {"q1": {"table": [{"t_s": "0", "handle": 0}]}}}):
        derived = dragon_dance.replay(data, official)
        assert set(derived.values) == set(dragon_dance.STATEMENT)
        assert set(derived.gaps) == {dragon_dance.TABLE_ERROR}


# --- physics ---------------------------------------------------------------

def test_handles_keep_their_spacing():
    path = dragon_dance_geometry._Turn()
    qs = dragon_dance_geometry._chain(path, path.head(np.array([-50.0, 5.0, 14.48, 200.0])), dragon_dance_geometry.N_HANDLES)
    x, y = (a.reshape(qs.shape) for a in path.pos(qs.ravel())[:2])
    gaps = np.hypot(np.diff(x, axis=0), np.diff(y, axis=0))
    assert np.allclose(gaps[0], dragon_dance_geometry.D_HEAD, atol=1e-9) and np.allclose(gaps[1:], dragon_dance_geometry.D_BODY, atol=1e-9)
    assert (np.diff(qs, axis=0) < 0).all()


def test_coiling_in_slows_each_following_handle():
    path = dragon_dance_geometry._Spiral(0.55)
    qs = dragon_dance_geometry._chain(path, dragon_dance_geometry._spiral_head(np.array([0.0, 200.0, 400.0])), dragon_dance_geometry.N_HANDLES)
    v = dragon_dance_geometry._speeds(path, qs)
    assert (np.diff(v, axis=0) < 0).all() and (v > 0).all()


def test_turn_length_does_not_depend_on_the_radius_ratio():
    lengths = [dragon_dance_geometry._Turn(ratio=k).length for k in (1.0, 1.5, 2.0, 3.0)]
    assert max(lengths) - min(lengths) < 1e-9
    t = dragon_dance_geometry._Turn()
    assert t.r1 == pytest.approx(2 * t.r2)


def test_inner_window_matches_every_pair(monkeypatch):
    """The clearance from the innermost benches equals the clearance over all 24,753 bench pairs."""
    ts = np.array([300.0, 410.0, 412.47, 412.5])
    restricted = dragon_dance_geometry._coil_clearance(0.55, dragon_dance_geometry._spiral_head(ts))
    monkeypatch.setattr(dragon_dance_geometry, "INNER", dragon_dance_geometry.N_HANDLES - 1)
    monkeypatch.setattr(dragon_dance_geometry, "WINDOW", dragon_dance_geometry.N_HANDLES)
    full = dragon_dance_geometry._coil_clearance(0.55, dragon_dance_geometry._spiral_head(ts))
    assert np.allclose(restricted, full, atol=1e-12)


def test_speed_limit_scaling(official):
    """Handle speeds scale with the head speed: at 2/ratio the fastest handle moves at 2 m/s."""
    assert math.isclose(official["q5.max_head_speed_mps"] * official["q5.max_speed_ratio"], 2.0, rel_tol=1e-12)


def test_reference_file_is_the_recomputation(official):
    recomputed = dragon_dance_geometry.statement_quantities()
    assert {n for n in recomputed if not n.startswith("q1.")} == set(dragon_dance.STATEMENT)
    for name in dragon_dance.STATEMENT:
        assert dragon_dance.exact(name, recomputed[name]) == dragon_dance.exact(name, official[name]), name
    table = dragon_dance_geometry.q1_table()
    assert set(table) == set(official["q1.table"])
    for key, row in table.items():
        assert tuple(Fraction(Decimal(f"{v:.6f}")) for v in row) == official["q1.table"][key], key


# --- Q1 table and Q4 shortest turn --------------------------------------------

def test_q1_table_matches_published_values(official):
    """Values every published solution reports (to 6 decimals)."""
    t = official["q1.table"]
    assert t[(0, 0)][:2] == (Fraction("8.8"), Fraction(0))
    assert t[(300, 0)][:2] == (Fraction("4.420274"), Fraction("2.320429"))
    assert t[(60, 1)][:2] == (Fraction("7.456758"), Fraction("-3.440399"))
    assert all(row[2] <= 1 for row in t.values())


def table_rows(art):
    return art["experiment_result"]["q1"]["table"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_q1_table_rows_in_any_order(task, rnd):
    art = copy.deepcopy(ORACLE)
    rnd.shuffle(table_rows(art))
    assert run_replay(task, parsed(art)).values == run_replay(task, parsed(ORACLE)).values


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 41), st.sampled_from(["x_m", "y_m", "speed_mps"]),
       st.decimals(min_value=Decimal("0.000003"), max_value=Decimal("50"), places=6), st.booleans())
def test_q1_table_value_moved_beyond_tolerance_is_infeasible(task, row, field, delta, down):
    art = copy.deepcopy(ORACLE)
    table_rows(art)[row][field] = float(Decimal(repr(table_rows(art)[row][field])) + (-delta if down else delta))
    assert verdicts(task, art)["q1.table_replayed"] == "fail"


def test_q1_table_incomplete_or_duplicated_is_a_gap(task):
    art = copy.deepcopy(ORACLE)
    table_rows(art).pop()
    assert verdicts(task, art)["q1.table_replayed"] == "gap"
    art = copy.deepcopy(ORACLE)
    table_rows(art)[0] = dict(table_rows(art)[1])
    assert verdicts(task, art)["q1.table_replayed"] == "gap"
    art = copy.deepcopy(ORACLE)
    del art["experiment_result"]["q1"]["table"]
    assert verdicts(task, art)["q1.table_replayed"] == "gap"


def test_shortest_turn_is_the_two_to_one_curve(official):
    lengths = [dragon_dance_geometry.turn_length(k) for k in dragon_dance_geometry.Q4_RATIOS]
    assert max(lengths) - min(lengths) < 1e-12
    assert dragon_dance.exact("q4.shortest_turn_length_m", official["q4.shortest_turn_length_m"]) == \
        dragon_dance.exact("q4.base_turn_length_m", official["q4.base_turn_length_m"])
    for k in dragon_dance_geometry.Q4_RATIOS:     # both arcs stay inside the 9 m turn-around circle
        turn = dragon_dance_geometry._Turn(ratio=k)
        x, y = turn.pos(np.linspace(0.0, turn.length, 2001))[:2]
        assert np.hypot(x, y).max() <= dragon_dance_geometry.TURN_RADIUS + 1e-9
