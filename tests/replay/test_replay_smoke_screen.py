"""Replay of the smoke-screen task (CUMCM 2025 A): shielded time from each bomb's plan."""
import copy
import json
import math
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed, verdicts
from mmverify.pipeline.evaluate import score_artifact
from mmverify.replay import declared_names, run_replay
from mmverify.replay import smoke_screen
from mmverify.tasks import load_task
from tests.helpers.smoke_plans import random_plan

TASK = "cumcm-2025-a-smoke-screen"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
CLAIMS = {"q1": "q1_duration_s", "q2": "q2_duration_s"}


def bomb(uav, missile, heading, speed, drop, fuse, duration):
    """A strategy row whose printed points follow from its plan (3 decimals, as the reference prints)."""
    x0, y0, z0 = smoke_screen.UAVS[uav]
    h = math.radians(heading)
    vx, vy = speed * math.cos(h), speed * math.sin(h)
    r = lambda v: round(v, 3)  # noqa: E731
    return {"uav": uav, "target_missile": missile, "heading_deg": heading, "speed_mps": speed,
            "drop_time_s": drop, "fuse_time_s": fuse, "explode_time_s": r(drop + fuse),
            "drop_x": r(x0 + vx * drop), "drop_y": r(y0 + vy * drop), "drop_z": z0,
            "explode_x": r(x0 + vx * (drop + fuse)), "explode_y": r(y0 + vy * (drop + fuse)),
            "explode_z": r(z0 - smoke_screen.G * fuse * fuse / 2), "individual_duration_s": duration}


REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "helpers" / "smoke_reference_plans.json")
                       .read_text(encoding="utf-8"))


def q5_with(m3_bomb, m3_claim):
    """The oracle with its Q5 M3 bomb replaced (FY3's other bombs left out: one course per UAV)."""
    art = copy.deepcopy(ORACLE)
    q5 = art["q5"]
    q5["strategies"] = [b for b in q5["strategies"] if b["uav"] != "FY3"] + [m3_bomb]
    er = art["experiment_result"]["q5_union_duration_s"]
    m1 = smoke_screen._union([iv for b in q5["strategies"] if b["target_missile"] == "M1"
                              for iv in smoke_screen._intervals(smoke_screen._bomb(
                                  {k: _dec(v) for k, v in b.items()}, "t")[2], "M1", "full_target")])[0]
    m1 = round(m1, 3)
    total = float(Decimal(str(m1)) + Decimal(str(er["M2"])) + Decimal(str(m3_claim)))
    for u in (q5["union_duration_s"], er):
        u["M1"], u["M3"], u["total"] = m1, m3_claim, total
    return art


# another FY3 bomb against M3 (burst at 48.5 s closer to the target; 0.728 s of whole-target time)
BETTER_M3 = ("FY3", "M3", 151.692, 138.858, 36.654, 11.846)


def test_registered_and_names_declared():
    assert load_task(TASK).replay == "smoke_screen"
    assert "q1.effective_duration_s" in declared_names(load_task(TASK))
    assert len(smoke_screen.DERIVED) == len(set(smoke_screen.DERIVED))


def test_oracle_replays_to_its_claims(task):
    """The oracle's claims are its plans' whole-target times, printed to 3 decimals."""
    rep = run_replay(task, parsed(ORACLE).data)
    assert rep.status == "ok" and not rep.gaps
    v = rep.values
    er = ORACLE["experiment_result"]
    for name, claim in (("q1.effective_duration_full_target_s", er["q1_duration_s"]),
                        ("q2.effective_duration_full_target_s", er["q2_duration_s"]),
                        ("q3.union_duration_full_target_s.total", er["q3_union_duration_s"]["total"]),
                        ("q4.union_duration_full_target_s.total", er["q4_union_duration_s"]["total"]),
                        ("q5.union_duration_full_target_s.M1", er["q5_union_duration_s"]["M1"]),
                        ("q5.union_duration_full_target_s.M2", er["q5_union_duration_s"]["M2"]),
                        ("q5.union_duration_full_target_s.M3", er["q5_union_duration_s"]["M3"])):
        assert abs(v[name] - Fraction(str(claim))) <= Fraction(1, 2000), name
    out = verdicts(task, ORACLE)
    replayed = [g for g in out if g.endswith("_replayed")]
    assert len(replayed) == 8 and all(out[g] == "pass" for g in replayed)
    assert all(out[g] == "pass" for g in out if ".rule_" in g)


def test_q1_full_target_time_is_the_known_value(task):
    """Q1's plan is fixed by the statement; hiding the whole cylinder lasts about 1.39 s."""
    v = run_replay(task, parsed(ORACLE).data).values
    assert Fraction("1.38") < v["q1.effective_duration_full_target_s"] < Fraction("1.40")


def test_full_target_never_exceeds_sampled(task):
    v = run_replay(task, parsed(ORACLE).data).values
    for name in v:
        if "_full_target_s" in name and "duration" in name:
            assert v[name] <= v[name.replace("_full_target_s", "_s")]


def test_reference_plans_break_the_statement(task):
    """Audit finding: the reference's Q3-Q5 plans break the statement's rules (so it scores 0)."""
    out = verdicts(task, REFERENCE)
    assert out["q3.rule_course"] == out["q3.rule_bombs"] == "fail"
    assert out["q4.rule_bombs"] == "fail" and out["q4.rule_course"] == "pass"
    assert out["q5.rule_course"] == "fail"
    assert out["q4.total_replayed"] == out["q5.total_replayed"] == "fail"   # 8.1 s and 19.9 s hide the whole target less


def test_better_witnessed_strategy_scores_by_its_replay(task):
    d, _ = smoke_screen._union(smoke_screen._intervals(smoke_screen._bomb(dict(zip(("uav", "target_missile", "heading_deg", "speed_mps",
                                                    "drop_time_s", "fuse_time_s"), map(_dec, BETTER_M3))),
                                         "t")[2], "M3", "full_target"))
    claim = round(d, 3)
    art = q5_with(bomb(*BETTER_M3, claim), claim)
    rep = score_artifact(task, parsed(art))
    assert rep.status == "scored", rep.error      # a claim its own plan gives is scored by closeness
    rows = {m.metric_id: m for m in rep.panel.metrics}
    assert 0 < rows["q5.m3_shielding_time"].per_paper[0].r < 1     # 0.728 s against the anchor's 0.793 s

    inflated = q5_with(bomb(*BETTER_M3, claim), claim + 1.0)
    rep = score_artifact(task, parsed(inflated), records=True)
    assert rep.status == "scored"          # a claim gate: the refuted claim scores 0, not the task
    rows = {m.metric_id: m for m in rep.panel.metrics}
    assert all(pm.r == 0 for pm in rows["q5.m3_shielding_time"].per_paper)
    assert any(r.rule == "refuted_claim" and r.metric_id == "q5.m3_shielding_time" and "q5.m3_replayed" in r.detail
               for r in rep.panel.rules)


def test_claim_without_witness_is_a_gap_and_unwitnessed(task):
    art = q5_with(bomb(*BETTER_M3, 4.3), 4.3)
    for b in art["q5"]["strategies"]:
        del b["fuse_time_s"]
    rep = run_replay(task, parsed(art).data)
    assert rep.gaps["q5.union_duration_s.M3"].startswith("witness absent: q5.strategies[0].fuse_time_s")
    out = verdicts(task, art)
    assert out["q5.m3_replayed"] == "gap"
    scored = score_artifact(task, parsed(art), records=True)
    assert any(r.rule == "unwitnessed_claim" and r.metric_id == "q5.m3_shielding_time"
               and "q5.m3_replayed" in r.detail for r in scored.panel.rules)
    m3 = next(m for m in scored.panel.metrics if m.metric_id == "q5.m3_shielding_time")
    assert all(pm.r == 0 for pm in m3.per_paper if pm.r is not None)
    # the paper's rules know no witness: no unwitnessed_claim there
    paper = score_artifact(task, parsed(art), ruleset="paper", records=True)
    assert not any(r.rule == "unwitnessed_claim" and r.metric_id == "q5.m3_shielding_time"
                   for r in paper.panel.rules)


def test_deterministic(task):
    a = run_replay(task, parsed(ORACLE).data)
    b = smoke_screen.replay(parsed(ORACLE).data, None)
    assert a.values == dict(b.values)


def test_speed_and_heading_change_the_replay(task):
    """Physics: Q1's fixed plan; a bomb that bursts underground makes no cloud."""
    art = copy.deepcopy(ORACLE)
    art["q2"]["strategy"]["fuse_time_s"] = 30   # falls 4410 m from 1800 m
    v = smoke_screen.replay(parsed(art).data, None).values
    assert v["q2.effective_duration_s"] == 0 and v["q2.grid_slack_s"] == 0


def _dec(x):
    return Decimal(str(x)) if isinstance(x, float) else x


number = st.one_of(st.decimals(allow_nan=False, allow_infinity=False), st.integers(-10**30, 10**30),
                   st.booleans(), st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2))
bomb_st = st.dictionaries(st.sampled_from(["uav", "target_missile", "heading_deg", "speed_mps", "drop_time_s",
                                           "fuse_time_s"]),
                          st.one_of(number, st.sampled_from(["FY1", "FY3", "M1", "M3"]),
                                    st.floats(0, 360).map(lambda f: Decimal(repr(f)))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q5"]),
                       st.one_of(st.fixed_dictionaries({"strategy": bomb_st}),
                                 st.fixed_dictionaries({"strategies": st.lists(bomb_st, max_size=20)}),
                                 number)))
def test_hostile_witness_never_raises(data):
    t0 = time.perf_counter()
    d = smoke_screen.replay(data, None)
    assert time.perf_counter() - t0 < 10
    assert set(d.values) | set(d.gaps) == set(smoke_screen.DERIVED)
    assert all(isinstance(v, Fraction) and v >= 0 for v in d.values.values())


@settings(max_examples=15, deadline=None)
@given(st.floats(70, 140), st.floats(0, 359.999), st.floats(0, 20), st.floats(0, 15))
def test_single_cloud_bounds(speed, heading, drop, fuse):
    """One cloud shields at most 20 s, never after M1 lands, and the strict reading never exceeds the sampled."""
    b = {"uav": "FY1", "target_missile": "M1", "heading_deg": Decimal(repr(heading)),
         "speed_mps": Decimal(repr(speed)), "drop_time_s": Decimal(repr(drop)), "fuse_time_s": Decimal(repr(fuse))}
    v = smoke_screen.replay({"q2": {"strategy": b}}, None).values
    assert 0 <= v["q2.effective_duration_full_target_s"] <= v["q2.effective_duration_s"] <= 20


TABLE = json.loads((Path(__file__).resolve().parents[1] / "helpers" / "smoke_screen_table.json")
                   .read_text(encoding="utf-8"))


def _row(d):
    return [str(d.values[n]) if n in d.values else None for n in TABLE["names"]], dict(d.gaps)


def test_table_covers_every_name():
    assert tuple(TABLE["names"]) == smoke_screen.DURATIONS
    assert len(TABLE["plans"]) == 40


def test_oracle_matches_the_table():
    """The table was written by the grid scan of commit 75b138e (numpy over every point at every step)."""
    values, gaps = _row(smoke_screen.replay(parsed(REFERENCE).data, None))
    assert values == TABLE["oracle"]["values"] and not gaps


@pytest.mark.parametrize("row", TABLE["plans"], ids=lambda r: f"seed{r['seed']}")
def test_random_plans_match_the_table(row):
    """Seeded plans (tests/helpers/smoke_plans.py) replay to the very Fractions the table holds."""
    plan = json.loads(json.dumps(row["plan"]), parse_float=Decimal)
    for q in plan.values():
        for b in ([q["strategy"]] if "strategy" in q else q["strategies"]):
            for k in ("heading_deg", "speed_mps", "drop_time_s", "fuse_time_s"):
                b[k] = Decimal(b[k])
    assert plan == random_plan(row["seed"])
    values, gaps = _row(smoke_screen.replay(plan, None))
    gaps = {n: why for n, why in gaps.items() if n in TABLE["names"]}
    assert values == row["values"] and gaps == row.get("gaps", {})


def _vectorised_seg_dist(a, b, c):
    """The numpy form the replay used before it went scalar (broadcast over leading axes)."""
    import numpy as np
    ab, ac = b - a, c - a
    h = np.clip((ac * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12), 0.0, 1.0)
    return np.linalg.norm(c - (a + h[..., None] * ab), axis=-1)


def test_scalar_distance_is_the_vectorised_float():
    """Same operations in the same order: the very same floats, on every criterion's points."""
    import numpy as np
    rng = np.random.default_rng(7)
    for m in smoke_screen.MISSILES:
        t = rng.uniform(0, smoke_screen._impact_time(m), 64)
        u = np.array(smoke_screen._heading(m))
        mis = np.array(smoke_screen.MISSILES[m])[None, :] + smoke_screen.MISSILE_SPEED * t[:, None] * u[None, :]
        centre = mis * rng.uniform(0.05, 1.0, (64, 1)) + rng.normal(0, 15, (64, 3))
        for pts in smoke_screen.POINTS.values():
            d = _vectorised_seg_dist(mis[:, None, :], np.array(pts)[None, :, :], centre[:, None, :])
            for i in range(64):
                for j in range(0, len(pts), 7):
                    assert smoke_screen._seg_dist(tuple(mis[i]), pts[j], tuple(centre[i]))[0] == d[i, j]


def _brute_state(cloud, m, criterion, t):
    """Every point evaluated at t, as the grid scan before certificates did."""
    p, u, (b, tb) = smoke_screen.MISSILES[m], smoke_screen._heading(m), cloud
    k = smoke_screen.MISSILE_SPEED * t
    mis = (p[0] + k * u[0], p[1] + k * u[1], p[2] + k * u[2])
    centre = (b[0], b[1], b[2] - (t - tb) * smoke_screen.SINK_SPEED)
    if smoke_screen._seg_dist(mis, smoke_screen.TARGET_CENTRE, centre)[0] > smoke_screen.CLOUD_RADIUS + smoke_screen.REACH:
        return False
    blocked = sum(smoke_screen._seg_dist(mis, q, centre)[0] <= smoke_screen.CLOUD_RADIUS for q in smoke_screen.POINTS[criterion])
    return blocked == len(smoke_screen.POINTS[criterion]) if criterion == "full_target" else blocked >= smoke_screen.SAMPLED_MIN_BLOCKED


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 39), st.sampled_from(smoke_screen.CRITERIA), st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_certificates_agree_with_evaluating_every_point(seed, criterion, where):
    """Each decided state, and the state it claims over its interval, is that of evaluating every point."""
    bombs = [b for q in random_plan(seed).values() for b in ([q["strategy"]] if "strategy" in q else q["strategies"])]
    b = bombs[int(where[0] * (len(bombs) - 1))]
    _, m, cloud = smoke_screen._bomb(b, "t")
    a, end = cloud[1], min(cloud[1] + smoke_screen.CLOUD_LIFE_S, smoke_screen._impact_time(m))
    if cloud[0][2] <= 0 or end <= a:
        return
    state = smoke_screen._Cloud(cloud[0], cloud[1], m, criterion)
    for w in where:
        t = a + (end - a) * w
        s, lo, hi = state.decide(t)
        assert lo <= t <= hi
        for x in (t, lo, hi, (lo + t) / 2, (t + hi) / 2):
            if a <= x <= end:
                assert _brute_state(cloud, m, criterion, x) == s


@pytest.mark.parametrize("criterion", smoke_screen.CRITERIA)
def test_states_next_to_every_oracle_change(criterion):
    """Just before and after each change the replay finds, its state is that of evaluating every point."""
    data = parsed(ORACLE).data
    for q in ("q1", "q3", "q4", "q5"):
        for _, m, cloud in smoke_screen._bombs(data, q):
            m = m if q == "q5" else "M1"
            state = smoke_screen._Cloud(cloud[0], cloud[1], m, criterion)
            for edge in (x for iv in smoke_screen._intervals(cloud, m, criterion) for x in iv):
                for off in (-1e-3, -1e-6, -1e-9, 1e-9, 1e-6, 1e-3):
                    t = edge + off
                    if cloud[1] <= t <= min(cloud[1] + smoke_screen.CLOUD_LIFE_S, smoke_screen._impact_time(m)):
                        assert state.decide(t)[0] == _brute_state(cloud, m, criterion, t), (q, edge, off)
