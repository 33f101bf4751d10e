"""Replay of CUMCM 2023 C (vegetable pricing): the oracle's plans replay to its
claims; inflated profits and plans that break the statement's rules fail the
right hard gate; a missing plan leaves its profit unwitnessed; hostile witness
data is a gap, never a crash; row order carries no meaning."""
from __future__ import annotations

import copy
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed, verdicts
from mmverify.reading.artifact import parse_bytes
from mmverify.cli import main as cli
from mmverify.pipeline.evaluate import score_artifact
from mmverify.replay import run_replay
from mmverify.replay import vegetable_pricing as vp

TASK = "cumcm-2023-c-vegetable-pricing"
ORACLE_PATH = ANCHORS / TASK / "oracle.json"
ORACLE = parse_bytes(ORACLE_PATH.read_bytes()).data
Q3_GATES = ("q3.plan_item_count_range", "q3.plan_item_count_claimed", "q3.plan_no_duplicate_items",
            "q3.plan_items_sellable", "q3.plan_min_display", "q3.plan_sales_within_stock",
            "q3.profit_is_plan_arithmetic")
Q2_GATES = ("q2.plan_covers_week", "q2.plan_no_duplicate_cells", "q2.plan_known_cells",
            "q2.plan_sales_within_stock", "q2.profit_is_plan_arithmetic")


@pytest.fixture(scope="module")
def official():
    return vp.load_official(str(ANCHORS / TASK / "data"))


def oracle():
    return copy.deepcopy(ORACLE)


def failed(task, obj):
    return {g for g, v in verdicts(task, obj).items() if v == "fail"}


# ------------------------------------------------------------------ data

def test_official_data_matches_the_statement(official):
    assert len(official.categories) == 251 and len(set(official.categories.values())) == 6
    assert len(official.july1_cost) == 61                       # items quoted in 24-30 June
    assert sum(1 for d in official.july1_cost_date.values() if d == "2023-06-30") == 49
    assert official.category_loss["花菜类"] == Fraction("0.1551")
    assert official.item_loss["102900005115168"] == Fraction("0.0439")   # 牛首生菜, 4.39 %
    assert all(0 <= v < 1 for v in official.item_loss.values())


# ---------------------------------------------------------------- oracle

def test_oracle_replays_to_its_claims(task, official):
    v = verdicts(task, ORACLE)
    assert all(v[g] == "pass" for g in Q3_GATES + Q2_GATES), v
    d = vp.replay(ORACLE, official)
    assert d.values["q3.plan_items"] == ORACLE["reproduced"]["selected_item_count"] == 29
    assert abs(d.values["q3.plan_profit_yuan"] - Fraction(ORACLE["reproduced"]["july1_profit_yuan"])) <= Fraction(1, 100)
    assert abs(d.values["q2.plan_profit_yuan"] - Fraction(ORACLE["reproduced"]["future_week_profit_yuan"])) \
        <= Fraction(1, 100)
    assert score_artifact(task, parsed(ORACLE)).oeval == 1


def test_oracle_cli_score():
    result = CliRunner().invoke(cli, ["score", str(ORACLE_PATH), "--task", TASK])
    assert result.exit_code == 0, result.output
    assert "O-EVAL   1.0000" in result.output


def test_q3_profit_is_the_plans_arithmetic(official):
    """price x sales - cost x replenishment with the item's 30 June wholesale price, by hand for one row."""
    row = ORACLE["reproduced"]["july1_plan"][0]
    one = {"reproduced": {"july1_plan": [row]}}
    code = row["item_code"]
    assert official.july1_cost_date[code] == "2023-06-30"
    expected = Fraction(row["price_yuan_per_kg"]) * Fraction(row["expected_sales_kg"]) \
        - official.july1_cost[code] * Fraction(row["replenishment_kg"])
    assert vp.replay(one, official).values["q3.plan_profit_yuan"] == expected


# ------------------------------------------------------- inflated claims

@pytest.mark.parametrize("field,gate", [("july1_profit_yuan", "q3.profit_is_plan_arithmetic"),
                                        ("future_week_profit_yuan", "q2.profit_is_plan_arithmetic")])
@pytest.mark.parametrize("factor", ["1.001", "1.2", "3", "0.9"])
def test_a_profit_its_plan_does_not_earn_rules_the_answer_out(task, field, gate, factor):
    art = oracle()
    art["reproduced"][field] = art["reproduced"][field] * Decimal(factor)
    assert gate in failed(task, art)
    rep = score_artifact(task, parsed(art))
    assert rep.status == "infeasible" and (rep.oeval or 0) == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.decimals(min_value=Decimal("0.011"), max_value=Decimal("100000"), places=3))
def test_any_profit_beyond_the_tolerance_fails(task, excess):
    art = oracle()
    art["reproduced"]["july1_profit_yuan"] += excess
    assert "q3.profit_is_plan_arithmetic" in failed(task, art)


# --------------------------------------------------- corrupted witnesses

def _q3(mutate):
    art = oracle()
    mutate(art["reproduced"]["july1_plan"], art)
    return art


def test_an_unsellable_item_fails_the_sellable_gate(task, official):
    never = next(c for c in sorted(official.categories) if c not in official.july1_cost)
    art = _q3(lambda rows, a: rows[0].update(item_code=never))
    assert "q3.plan_items_sellable" in failed(task, art)
    assert score_artifact(task, parsed(art)).status == "infeasible"


def test_an_unknown_item_code_fails_the_sellable_gate(task):
    art = _q3(lambda rows, a: rows[0].update(item_code="123"))
    assert "q3.plan_items_sellable" in failed(task, art)


def test_below_the_minimum_display_fails(task):
    art = _q3(lambda rows, a: rows[3].update(replenishment_kg=Decimal("2.4"), expected_sales_kg=Decimal("2")))
    assert failed(task, art) >= {"q3.plan_min_display"}
    art = _q3(lambda rows, a: rows[3].update(replenishment_kg=Decimal("2.5"), expected_sales_kg=Decimal("2")))
    assert "q3.plan_min_display" not in failed(task, art)


def test_26_items_fail_the_count_gate(task):
    def cut(rows, a):
        del rows[26:]
        a["reproduced"]["selected_item_count"] = Decimal(26)
    assert "q3.plan_item_count_range" in failed(task, _q3(cut))


def test_a_count_that_is_not_the_plans_fails(task):
    art = oracle()
    art["reproduced"]["selected_item_count"] = Decimal(30)
    assert failed(task, art) >= {"q3.plan_item_count_claimed"}


def test_a_duplicate_item_fails(task):
    art = _q3(lambda rows, a: rows[1].update(item_code=rows[0]["item_code"]))
    assert "q3.plan_no_duplicate_items" in failed(task, art)


def test_selling_more_than_survives_the_loss_fails(task, official):
    def over(rows, a):
        r = next(r for r in rows if official.item_loss[r["item_code"]] > 0)
        r["expected_sales_kg"] = r["replenishment_kg"]
    assert "q3.plan_sales_within_stock" in failed(task, _q3(over))


def test_q2_plan_rules(task):
    art = oracle()
    del art["reproduced"]["week_plan"][5]
    assert "q2.plan_covers_week" in failed(task, art)
    art = oracle()
    art["reproduced"]["week_plan"][5]["date"] = "2023-07-08"
    assert failed(task, art) >= {"q2.plan_covers_week", "q2.plan_known_cells"}
    art = oracle()
    art["reproduced"]["week_plan"].append(copy.deepcopy(art["reproduced"]["week_plan"][0]))
    assert "q2.plan_no_duplicate_cells" in failed(task, art)
    art = oracle()
    r = art["reproduced"]["week_plan"][2]
    r["expected_sales_kg"] = r["replenishment_kg"]
    assert "q2.plan_sales_within_stock" in failed(task, art)


# ------------------------------------------------- missing and hostile plans

@pytest.mark.parametrize("field,metric", [("july1_plan", "q3.july1_profit_yuan"),
                                          ("week_plan", "q2.future_week_profit_yuan")])
def test_a_profit_without_its_plan_scores_zero(task, field, metric):
    art = oracle()
    del art["reproduced"][field]
    rep = score_artifact(task, parsed(art), records=True)
    assert rep.status == "scored"
    m = next(m for m in rep.panel.metrics if m.metric_id == metric)
    assert all(pm.r == 0 for pm in m.per_paper if pm.r is not None)
    assert 0 < rep.oeval < 1


JUNK = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.text(max_size=20)
                    | st.decimals(allow_nan=True, allow_infinity=True, places=3),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                    max_leaves=12)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q3=JUNK, q2=JUNK, row=st.dictionaries(st.sampled_from(vp.Q2_FIELDS + vp.Q3_FIELDS + (
    "item_code", "date", "category")), JUNK, max_size=7))
def test_a_hostile_witness_is_a_gap_never_a_crash(task, official, q3, q2, row):
    for art in ({"reproduced": {"july1_plan": q3, "week_plan": q2}},
                {"reproduced": {"july1_plan": [row], "week_plan": [row]}}, {"reproduced": q3}, q3):
        d = vp.replay(art, official) if isinstance(art, dict) else None
        if d is not None:
            assert set(d.values) | set(d.gaps) == set(vp.DERIVED)
        rep = run_replay(task, art)
        assert rep.status == "ok"


def test_a_negative_or_non_numeric_row_is_a_gap(official):
    for bad in ({"replenishment_kg": Decimal(-1)}, {"price_yuan_per_kg": "7.6"}, {"expected_sales_kg": None},
                {"item_code": "10290000511x056"}, {"replenishment_kg": Decimal("Infinity")}):
        art = oracle()
        art["reproduced"]["july1_plan"][0].update(bad)
        d = vp.replay(art, official)
        assert set(vp.Q3_NAMES) <= set(d.gaps) and "july1_plan[0]" in d.gaps["q3.plan_items"]
    art = oracle()
    art["reproduced"]["week_plan"][0]["unit_cost_yuan_per_kg"] = Decimal(0)
    assert set(vp.Q2_NAMES) <= set(vp.replay(art, official).gaps)


# -------------------------------------------- order, determinism, time cap

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_row_order_is_irrelevant(official, rnd):
    art = oracle()
    rnd.shuffle(art["reproduced"]["july1_plan"])
    rnd.shuffle(art["reproduced"]["week_plan"])
    assert vp.replay(art, official) == vp.replay(ORACLE, official)


def test_replay_is_deterministic(task):
    assert run_replay(task, ORACLE).values == run_replay(task, ORACLE).values


def test_the_time_cap_holds_at_the_row_limit(task, official):
    art = oracle()
    q3, q2 = art["reproduced"]["july1_plan"], art["reproduced"]["week_plan"]
    art["reproduced"]["july1_plan"] = (q3 * (vp.MAX_ROWS // len(q3) + 1))[:vp.MAX_ROWS]
    art["reproduced"]["week_plan"] = (q2 * (vp.MAX_ROWS // len(q2) + 1))[:vp.MAX_ROWS]
    t0 = time.perf_counter()
    rep = run_replay(task, art)
    assert time.perf_counter() - t0 < 1.0
    assert rep.status == "ok" and rep.values["q3.plan_duplicate_items"] == vp.MAX_ROWS - 29
    art["reproduced"]["july1_plan"].append(q3[0])
    assert "more than" in vp.replay(art, official).gaps["q3.plan_items"]


def test_loading_the_data_is_cheap():
    t0 = time.perf_counter()
    vp.load_official(str(ANCHORS / TASK / "data"))
    assert time.perf_counter() - t0 < 1.0
