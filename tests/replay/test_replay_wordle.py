"""Replay of MCM 2023 C: the day count and, under the named method, the raw
forecast for 1 March 2023 and its interval, from COMAP's file."""
import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed, verdicts
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.replay import run_replay, wordle
from mmverify.tasks import load_task

TASK = "mcm-2023-c-wordle"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
REPLAY_GATES = ("data.row_count_replayed", "q1.raw_forecast_replayed", "q1.raw_lower_replayed",
                "q1.raw_upper_replayed")


def test_official_data():
    official = wordle.load_official(str(ANCHORS / TASK / "data"))
    assert len(official["days"]) == 359
    assert (official["days"][0].isoformat(), official["days"][-1].isoformat()) == ("2022-01-07", "2022-12-31")
    assert (wordle.TARGET - official["days"][-1]).days == 60


def test_oracle_replays_to_its_claims(task):
    v = verdicts(task, ORACLE)
    assert all(v[g] == "pass" for g in REPLAY_GATES), v
    assert score_artifact(task, parsed(ORACLE)).oeval == 1


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["raw_ma_forecast", "raw_80_upper"]), st.floats(0.003, 5000), st.booleans())
def test_a_forecast_off_its_method_is_refuted(field, delta, down):
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    rec = art["reproduced"]["forecast_record"]
    rec[field] = round(rec[field] - delta if down else rec[field] + delta, 3)
    if rec[field] == ORACLE["reproduced"]["forecast_record"][field]:
        return
    report = score_artifact(task, parsed(art), records=True)
    if report.status != "scored":
        return              # a hard order gate (interval contains forecast) may rule it out first
    if field == "raw_ma_forecast":
        m = next(m for m in report.panel.metrics if m.metric_id == "q1.point_forecast")
        assert (m.per_paper[0].status, m.per_paper[0].r) == ("refuted", 0)
    assert verdicts(task, art)[f"q1.{'raw_forecast' if field == 'raw_ma_forecast' else 'raw_upper'}_replayed"] == "fail"
    assert reward_of(task, parsed(art)) == float(report.oeval)


@pytest.mark.parametrize("method", [
    None, 3, {"drift_window": 0, "ewma_alpha": 0.42, "sigma_window": 60, "z": 1.282},
    {"drift_window": 21, "ewma_alpha": 0, "sigma_window": 60, "z": 1.282},
    {"drift_window": 21, "ewma_alpha": 0.42, "sigma_window": 1, "z": 1.282},
    {"drift_window": 21.5, "ewma_alpha": 0.42, "sigma_window": 60, "z": 1.282},
    {"drift_window": 21, "ewma_alpha": "0.42", "sigma_window": 60, "z": 1.282},
    {"drift_window": 21, "ewma_alpha": 0.42, "sigma_window": 60},
])
def test_a_corrupted_witness_is_a_gap(task, method):
    art = copy.deepcopy(ORACLE)
    if method is None:
        del art["reproduced"]["forecast_method"]
    else:
        art["reproduced"]["forecast_method"] = method
    rep = run_replay(task, parsed(art).data)
    assert rep.status == "ok" and set(rep.values) == set(wordle.STATEMENT) and set(rep.gaps) == set(wordle.WITNESSED)
    report = score_artifact(task, parsed(art), records=True)
    m = next(m for m in report.panel.metrics if m.metric_id == "q1.point_forecast")
    assert m.per_paper[0].status == "unwitnessed"


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 358), st.floats(0.01, 1), st.integers(2, 358), st.floats(0.1, 5))
def test_replay_is_deterministic_and_ordered(drift, alpha, sigma, z):
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    art["reproduced"]["forecast_method"] = {"drift_window": drift, "ewma_alpha": alpha, "sigma_window": sigma, "z": z}
    a, b = run_replay(task, parsed(art).data), run_replay(task, parsed(art).data)
    assert a.values == b.values
    v = a.values
    assert 0 <= v["q1.raw_80_lower"] <= max(v["q1.raw_ma_forecast"], 0) + 1 and v["q1.raw_ma_forecast"] <= v["q1.raw_80_upper"]
