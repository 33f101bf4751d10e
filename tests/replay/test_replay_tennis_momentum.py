"""Replay of MCM 2024 C (momentum in tennis): counts and statistics of COMAP's
Wimbledon file under the method the artifact names."""
import copy
import json

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed, verdicts
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.replay import run_replay, tennis_momentum
from mmverify.tasks import load_task

TASK = "mcm-2024-c-tennis-momentum"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def official():
    return tennis_momentum.load_official(str(ANCHORS / TASK / "data"))


def test_oracle_replays_to_its_claims(task):
    v = verdicts(task, ORACLE)
    replayed = [g["id"] for g in task.gates if "$replay." in json.dumps(g.get("vars", {}))]
    assert len(replayed) == 6 and all(v[g] == "pass" for g in replayed), v
    assert score_artifact(task, parsed(ORACLE)).oeval == 1


def test_data_counts(official):
    assert len(official["matches"]) == 31
    assert sum(len(v) for _, v in official["matches"].values()) == 7284


@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 8, 9, 20, 40])
@pytest.mark.parametrize("x", [0.01, 1.0, 5.3, 17.5, 60.0, 150.0])
def test_chi_square_survival_is_exact(k, x):
    want = float(mpmath.gammainc(k / 2, x / 2, mpmath.inf, regularized=True))
    assert tennis_momentum.chi2_sf(x, k) == pytest.approx(want, rel=1e-11, abs=1e-300)


@pytest.mark.parametrize("field,moved", [
    ("median_ljung_box_p", 0.7129), ("median_runs_p", 0.29), ("matches_rejecting_iid_at_5pct", 1)])
def test_a_claim_the_replay_refutes_scores_zero(task, field, moved):
    art = copy.deepcopy(ORACLE)
    art["experiment_result"]["randomness_tests"][field] = moved
    report = score_artifact(task, parsed(art), records=True)
    m = next(m for m in report.panel.metrics if m.path.endswith(field))
    assert m.per_paper[0].status == "refuted" and m.per_paper[0].r == 0
    assert report.status == "scored" and report.oeval < 1
    assert reward_of(task, parsed(art)) == float(report.oeval)


def test_another_method_replays_to_other_values(task, official):
    art = copy.deepcopy(ORACLE)
    art["experiment_result"]["method"] = {"series": "point_winner", "ljung_box_lags": 4}
    derived = run_replay(task, parsed(art).data)
    assert derived.values["q2.median_ljung_box_p"] != Fraction_of("0.712832")
    assert "q1.final_momentum_range" in derived.gaps
    # the oracle's numbers under another method are refuted
    assert verdicts(task, art)["q2.median_ljung_box_p_replayed"] == "fail"


def Fraction_of(text):
    from fractions import Fraction

    return Fraction(text)


@pytest.mark.parametrize("method", [
    None, "x", [], {"series": "bogus", "ljung_box_lags": 8}, {"series": "point_winner", "ljung_box_lags": 0},
    {"series": "point_winner", "ljung_box_lags": 2.5}, {"series": "point_winner", "ljung_box_lags": "8"},
    {"series": "serve_adjusted_residual", "ljung_box_lags": 8},
    {"series": "serve_adjusted_residual", "ljung_box_lags": 8, "context_weight": 2},
    {"series": "point_winner", "ljung_box_lags": 8, "ewma_short_span": 0},
])
def test_a_corrupted_witness_is_a_gap_never_a_crash(task, method):
    art = copy.deepcopy(ORACLE)
    if method is None:
        del art["experiment_result"]["method"]
    else:
        art["experiment_result"]["method"] = method
    rep = run_replay(task, parsed(art).data)
    assert rep.status == "ok"
    assert set(rep.values) == set(tennis_momentum.STATEMENT)
    assert set(rep.gaps) == set(tennis_momentum.WITNESSED)
    # the claims the replay could have checked are unwitnessed: they score 0
    report = score_artifact(task, parsed(art), records=True)
    judged = {m.metric_id: m.per_paper[0].status for m in report.panel.metrics}
    assert judged["q2.median_ljung_box_p"] == "unwitnessed"


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["point_winner", "serve_adjusted_residual"]), st.integers(1, 40),
       st.decimals(min_value=0, max_value=1, places=3))
def test_replay_is_deterministic_and_bounded(series, lags, w):
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    art["experiment_result"]["method"] = {"series": series, "ljung_box_lags": lags, "context_weight": float(w)}
    data = parsed(art).data
    a, b = run_replay(task, data), run_replay(task, data)
    assert a.values == b.values
    for name in ("q2.median_ljung_box_p", "q2.median_runs_p"):
        assert 0 <= a.values[name] <= 1
    assert 0 <= a.values["q2.matches_rejecting_iid"] <= 31


def test_match_order_in_the_data_does_not_matter(official):
    method = {"series": "serve_adjusted_residual", "context_weight": 0.65, "ljung_box_lags": 8}
    data = parsed({"experiment_result": {"method": method}}).data
    shuffled = {"matches": dict(reversed(list(official["matches"].items())))}
    assert tennis_momentum.replay(data, official) == tennis_momentum.replay(data, shuffled)
