"""Replay of CUMCM 2024 C (crop planting): the oracle's plans replay to its claims,
fabricated claims and broken plans fail hard gates, missing plans are gaps."""
from __future__ import annotations

import copy
import json
import os
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmverify.reading.artifact import parse_bytes
from mmverify.gates import evaluate_gates
from mmverify.replay import crop_planting as cp
from mmverify.replay import run_replay
from tests.helpers import crop_plans

TASK = "cumcm-2024-c-crop-planting"


@pytest.fixture(scope="module")
def official(task):
    return cp.load_official(os.path.join(task.directory, "data"))


@pytest.fixture(scope="module")
def oracle(task):
    with open(os.path.join(task.directory, "oracle.json"), "rb") as fh:
        return parse_bytes(fh.read()).data


def _gates(task, data):
    report = evaluate_gates(task, data)
    return {(i.gate_id, i.verdict) for i in report.instances}, report


def test_official_data_matches_the_statement(official):
    assert len(official.plots) == 54
    open_land = sum(a for lt, a in official.plots.values() if lt in cp.OPEN_FIELD or lt == "irrigated")
    assert open_land == 1201                                   # "1201 亩露天耕地"
    assert sum(1 for lt, _ in official.plots.values() if lt == "greenhouse") == 16
    assert sum(1 for lt, _ in official.plots.values() if lt == "smart_greenhouse") == 4
    assert len(official.crops) == 41
    assert {c for c, (_n, t) in official.crops.items() if "legume" in t} == cp.LEGUMES
    # 2023 production of wheat: A1 80 + B1 60 + B7 55 + C5 27 mu at 800/800/.. jin per mu
    assert official.demand[6] == sum(a * official.stats[(6, official.plots[p][0], "single")][0]
                                     for p, a in (("A1", 80), ("B1", 60), ("B7", 55), ("C5", 27)))


def _plan_2024(official):
    """A 2024 plan: every 2023 row moved to 2024 with the crop of the next plot (a witness, not an optimum)."""
    return [{"plot": p, "year": 2024, "season": s, "crop_id": c, "area_mu": Decimal(str(float(a)))}
            for (p, s), cs in sorted(official.planted_2023.items()) for c in sorted(cs)
            for a in [min(official.plots[p][1], Fraction(3, 10) if official.plots[p][1] < 1 else official.plots[p][1])]]


def test_oracle_replays_to_its_claims(task, oracle):
    verdicts, report = _gates(task, oracle)
    for gate in ("q1.waste_profit_replayed", "q1.discount_profit_replayed",
                 "q1.waste_plan_feasible", "q1.discount_plan_feasible"):
        assert (gate, "pass") in verdicts
    assert not report.hard_failures
    assert {"experiment_result.q1.waste_profit_yuan", "experiment_result.q1.discount_profit_yuan"} <= report.verified()


def test_oracle_plans_are_the_recorded_milp_optima(task, oracle, official):
    """The oracle's plans replay exactly to the profits recorded by the MILP audit entry."""
    with open(os.path.join(task.directory, "data", "milp_optimum.json"), encoding="utf-8") as fh:
        record = json.load(fh)
    rep = run_replay(task, oracle)
    for case in cp.CASES:
        assert rep.values[f"q1.{case}_plan_feasible"] == 1
        assert rep.values[f"q1.{case}_profit_yuan"] == Fraction(record[case]["replayed_profit_yuan"])
        plan = cp.parse_plan(oracle["experiment_result"]["q1"][cp.PLAN_FIELD[case]], official)
        assert cp.plan_violations(plan, official) == []


@pytest.mark.parametrize("case,field", [("waste", "waste_profit_yuan"), ("discount", "discount_profit_yuan")])
def test_claim_checked_against_its_plan(task, oracle, official, case, field):
    data = copy.deepcopy(oracle)
    replayed = run_replay(task, data).values[f"q1.{case}_profit_yuan"]
    data["experiment_result"]["q1"][field] = Decimal(replayed.__floor__())      # honest, rounded to the yuan
    verdicts, report = _gates(task, data)
    assert (f"q1.{case}_profit_replayed", "pass") in verdicts
    assert f"experiment_result.q1.{field}" in report.verified()
    data["experiment_result"]["q1"][field] = Decimal(replayed.__ceil__() + 1)   # inflated
    verdicts, report = _gates(task, data)
    assert (f"q1.{case}_profit_replayed", "fail") in verdicts
    assert f"experiment_result.q1.{field}" not in report.verified()


def test_missing_witness_is_a_gap_and_unverified(task, oracle):
    data = copy.deepcopy(oracle)
    del data["experiment_result"]["q1"]["waste_plan"]
    verdicts, report = _gates(task, data)
    assert ("q1.waste_profit_replayed", "gap") in verdicts
    assert ("q1.waste_plan_feasible", "gap") in verdicts
    assert ("q1.discount_profit_replayed", "pass") in verdicts
    assert "experiment_result.q1.waste_profit_yuan" not in report.verified()
    assert "witness absent" in run_replay(task, data).gaps["q1.waste_profit_yuan"]
    data["experiment_result"]["q1"]["discount_plan"] = []
    verdicts, _ = _gates(task, data)
    assert ("q1.discount_plan_feasible", "fail") in verdicts       # an empty plan plants no legume


def test_broken_rule_in_the_oracle_plan_fails_feasibility(task, oracle):
    data = copy.deepcopy(oracle)
    plan = data["experiment_result"]["q1"]["waste_plan"]
    row = next(r for r in plan if r["year"] == 2024 and r["plot"] == "A1")
    plan.append(dict(row, year=2025))                          # the same crop on A1 two years running
    verdicts, report = _gates(task, data)
    assert ("q1.waste_plan_feasible", "fail") in verdicts
    assert ("q1.waste_profit_replayed", "gap") in verdicts       # an infeasible plan verifies nothing
    assert "experiment_result.q1.waste_profit_yuan" not in report.verified()
    assert "witness infeasible" in run_replay(task, data).gaps["q1.waste_profit_yuan"]


def test_rules_each_caught(official):
    def v(rows):
        return cp.plan_violations(cp.parse_plan(rows, official), official)

    def row(plot, year, season, crop, area):
        return {"plot": plot, "year": year, "season": season, "crop_id": crop, "area_mu": Decimal(area)}

    assert any("not allowed" in x for x in v([row("A1", 2024, "single", 16, "10")]))      # rice on dry land
    assert any("not allowed" in x for x in v([row("E1", 2024, "second", 20, "0.6")]))     # vegetable in greenhouse winter
    assert any("planted on" in x for x in v([row("A1", 2024, "single", 6, "50"), row("A1", 2024, "single", 7, "40")]))
    assert any("allows one" in x for x in v([row("D1", 2024, "second", 35, "5"), row("D1", 2024, "second", 37, "5")]))
    assert any("minimum" in x for x in v([row("A1", 2024, "single", 6, "0.2")]))
    assert any("again in 2024" in x for x in v([row("A1", 2024, "single", 6, "80")]))      # wheat on A1 in 2023
    assert any("legumes on 0 of its 72 mu in 2024-2026" in x for x in v([row("A4", 2024, "single", 6, "72")]))


def test_discount_never_below_waste_for_the_same_plan(official):
    plan = cp.parse_plan(_plan_2024(official), official)
    assert cp.plan_profit(plan, official, "discount") >= cp.plan_profit(plan, official, "waste")


@pytest.mark.slow
def test_milp_optimum_replays_to_itself(official):
    """HiGHS' optimal plan is feasible under the replay's rules and replays to HiGHS' objective."""
    pytest.importorskip("scipy")
    from mmverify.replay import crop_planting_milp as milp

    sol = milp.solve(official, "waste", time_limit_s=1800)
    plan = {(p, y, s, c): a for p, y, s, c, a in sol.plan}
    assert not cp.plan_violations(plan, official)
    assert abs(float(cp.plan_profit(plan, official, "waste")) - sol.objective) < 1.0


def test_profit_is_additive_in_cost_and_monotone_in_demand(official):
    """Planting more of a crop beyond its expected sales adds only cost when surplus is wasted."""
    base = {("A1", 2024, "single", 11): Fraction(1)}
    big = {("A1", 2024, "single", 11): Fraction(80)}
    yield_, cost, price = official.stats[(11, "flat_dry", "single")]
    assert cp.plan_profit(base, official, "waste") == yield_ * price - cost
    demand = official.demand[11]
    assert 80 * yield_ > demand
    assert cp.plan_profit(big, official, "waste") == demand * price - 80 * cost
    assert cp.plan_profit(big, official, "discount") == demand * price + (80 * yield_ - demand) * price / 2 - 80 * cost


def test_replay_is_deterministic(task, oracle, official):
    data = copy.deepcopy(oracle)
    data["experiment_result"]["q1"]["waste_plan"] = _plan_2024(official)
    a, b = run_replay(task, data), run_replay(task, copy.deepcopy(data))
    assert a.as_dict() == b.as_dict()


_value = st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.integers(-10**30, 10**30),
                   st.decimals(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3))
_row = st.fixed_dictionaries({}, optional={
    "year": st.one_of(st.integers(2020, 2032), _value),
    "season": st.one_of(st.sampled_from(["single", "first", "second"]), _value),
    "plot": st.one_of(st.sampled_from(["A1", "D1", "E1", "F1"]), _value),
    "crop_id": st.one_of(st.integers(0, 42), _value),
    "area_mu": st.one_of(st.decimals(min_value=Decimal("-1"), max_value=Decimal("100"), places=3), _value),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.one_of(_value, st.lists(_row, max_size=30)),
       q1=st.sampled_from(["object", "list", "absent"]))
def test_hostile_witness_never_raises(official, plan, q1):
    data = {"experiment_result": {"q1": {"waste_plan": plan, "discount_plan": plan} if q1 == "object" else [plan]}}
    if q1 == "absent":
        data = {"experiment_result": "x"}
    t0 = time.perf_counter()
    derived = cp.replay(data, official)
    assert time.perf_counter() - t0 < 2
    assert set(derived.values) | set(derived.gaps) == set(cp.DERIVED)
    for name, value in derived.values.items():
        assert isinstance(value, Fraction)
        if name.endswith("feasible"):
            assert value in (0, 1)


def test_oversized_plan_is_malformed_not_slow(official):
    rows = [{"plot": "A1", "year": 2024, "season": "single", "crop_id": 6, "area_mu": Decimal("0.5")}] * 100_000
    t0 = time.perf_counter()
    derived = cp.replay({"experiment_result": {"q1": {"waste_plan": rows}}}, official)
    assert time.perf_counter() - t0 < 1
    assert "more than" in derived.gaps["q1.waste_profit_yuan"]


def test_huge_exponents_are_malformed(official):
    rows = [{"plot": "A1", "year": 2024, "season": "single", "crop_id": 6, "area_mu": Decimal("1E-999999")}]
    derived = cp.replay({"experiment_result": {"q1": {"waste_plan": rows}}}, official)
    assert "witness malformed" in derived.gaps["q1.waste_profit_yuan"]


TABLE = json.loads(crop_plans.TABLE.read_text(encoding="utf-8"))


def test_table_covers_feasible_infeasible_and_malformed_plans():
    rows = [TABLE["oracle"]] + TABLE["seeds"]
    plans = [p for r in rows for p in r["plans"].values()]
    assert len(TABLE["seeds"]) == len(crop_plans.SEEDS) >= 20
    assert sum(1 for p in plans if p.get("violations") == []) >= 10
    assert sum(1 for p in plans if p.get("violations")) >= 10
    assert sum(1 for p in plans if "malformed" in p) >= 5
    assert len({p["profit"]["waste"] for p in plans if "profit" in p}) >= 10


def test_oracle_matches_the_table(oracle):
    """The table was recorded by tests/helpers/crop_plans.py from the replay with the legume rule as worded."""
    assert crop_plans.record(oracle) == TABLE["oracle"]


@pytest.mark.parametrize("row", TABLE["seeds"], ids=lambda r: f"seed{r['seed']}")
def test_perturbed_plans_match_the_table(row):
    """Seeded edits of the oracle (tests/helpers/crop_plans.py) replay to the very values,
    gaps, violations and profits the table holds."""
    data, edits = crop_plans.perturbed(row["seed"])
    assert (edits, crop_plans.digest(data)) == (row["edits"], row["digest"])
    assert crop_plans.record(data) == {k: row[k] for k in ("values", "gaps", "plans")}


def test_fraction_plans_with_any_denominator(official):
    """plan_profit and plan_violations take exact areas that no decimal writes (a solver's thirds)."""
    third = Fraction(1, 3)
    yield_, cost, price = official.stats[(11, "flat_dry", "single")]
    plan = {("A1", 2024, "single", 11): third, ("A1", 2025, "single", 6): Fraction(2, 7)}
    wheat = official.stats[(6, "flat_dry", "single")]
    assert cp.plan_profit(plan, official, "waste") == (third * (yield_ * price - cost)
                                                      + Fraction(2, 7) * (wheat[0] * wheat[2] - wheat[1]))
    assert any("2/7" not in v and "0.285714 mu, under the 0.3 mu minimum" in v
               for v in cp.plan_violations(plan, official))
    cap = official.plots["A1"][1]
    over = {("A1", 2024, "single", 11): cap - third, ("A1", 2024, "single", 6): Fraction(2, 3)}
    assert f"A1 2024 single: {float(cap + third):g} mu planted on {float(cap):g} mu" in cp.plan_violations(over, official)
    assert not any("planted on" in v for v in cp.plan_violations({("A1", 2024, "single", 11): cap - third,
                                                                 ("A1", 2024, "single", 6): third}, official))


# ------------------------------------------------------------------ legumes on all of the plot's land

def _row(plot, year, season, crop, area):
    return {"plot": plot, "year": year, "season": season, "crop_id": crop, "area_mu": Decimal(area)}


def _legume_breaches(official, rows, plot):
    return [x for x in cp.plan_violations(cp.parse_plan(rows, official), official)
            if x.startswith(f"{plot}: legumes")]


def test_statement_sentence_is_the_legume_rule(task):
    """The rule as the statement words it: all of each plot's land, in three years."""
    with open(os.path.join(task.directory, "problem.md"), encoding="utf-8") as fh:
        text = "".join(fh.read().split())          # the statement's text wraps lines
    assert "每个地块（含大棚）的所有土地三年内至少种植一次豆类作物" in text
    assert any("all of every plot's land" in r for r in cp.RULES)


def test_a_small_legume_row_does_not_cover_the_plot(official):
    """A1 (80 mu, wheat in 2023, no legume): a 0.3 mu soybean row each year leaves the rest
    of the plot without legumes; soybeans on all 80 mu once per window satisfy the rule."""
    small = [_row("A1", y, "single", 1, "0.3") for y in cp.YEARS]
    assert len(_legume_breaches(official, small, "A1")) == 6
    whole = [_row("A1", y, "single", 1 if y in (2024, 2027, 2030) else 6 + y % 2, "80") for y in cp.YEARS]
    assert _legume_breaches(official, whole, "A1") == []


def test_legume_areas_add_up_over_the_window(official):
    """Halves of the plot in successive years cover it (the rows do not say where on the plot
    they lie, so the window's legume area must reach the plot area); 1e-6 mu short fails."""
    halves = [_row("A1", y, "single", 1 + y % 2, "40") for y in (2024, 2025, 2027, 2028, 2030)]
    assert _legume_breaches(official, halves, "A1") == []       # every window holds two halves
    short = [dict(r, area_mu=Decimal("39.999999")) if r["year"] == 2025 else r for r in halves]
    assert [x.split(" in ")[-1] for x in _legume_breaches(official, short, "A1")] == [
        "2023-2025", "2024-2026", "2025-2027"]


def test_2023_legume_area_counts_for_the_first_window(official):
    """A4 (72 mu) grew soybeans on all of its land in 2023: 2023-2025 is met without a legume
    in 2024-2025; A1 (wheat in 2023) is not."""
    assert official.legume_area_2023["A4"] == official.plots["A4"][1] == 72
    assert official.legume_area_2023["A1"] == 0
    rows = [_row(p, 2026, "single", 1, str(official.plots[p][1])) for p in ("A1", "A4")]
    assert not any("2023-2025" in x for x in _legume_breaches(official, rows, "A4"))
    assert any("2023-2025" in x for x in _legume_breaches(official, rows, "A1"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.decimals(min_value=0, max_value=80, places=1), min_size=7, max_size=7))
def test_legume_rule_is_the_window_area_sum(official, areas):
    rows = [_row("A1", y, "single", 1, str(a)) for y, a in zip(cp.YEARS, areas) if a >= Decimal("0.3")]
    planted = {y: (a if a >= Decimal("0.3") else 0) for y, a in zip(cp.YEARS, areas)}
    expected = {start for start in range(2023, 2029) if sum(planted.get(y, 0) for y in range(start, start + 3)) < 80}
    got = {int(x.split(" in ")[-1][:4]) for x in _legume_breaches(official, rows, "A1")}
    assert got == expected


# ------------------------------------------------------------------ one verdict for every area breach

@pytest.mark.parametrize("area", ["80.000001", "81", "0", "-1", "1E+7", "123456789"])
def test_every_area_breach_is_infeasible_not_malformed(task, oracle, area):
    """A row over its plot's area (even by 1e-6 mu) or not above 0 breaks the area rule:
    the plan is infeasible, a hard gate fails and the task scores 0, whatever the size of the breach."""
    data = copy.deepcopy(oracle)
    data["experiment_result"]["q1"]["waste_plan"].append(_row("A1", 2024, "single", 1, area))
    derived = run_replay(task, data)
    assert derived.values["q1.waste_plan_feasible"] == 0
    assert "witness infeasible" in derived.gaps["q1.waste_profit_yuan"]
    assert "outside (0, plot area]" in derived.gaps["q1.waste_profit_yuan"]
    verdicts, report = _gates(task, data)
    assert ("q1.waste_plan_feasible", "fail") in verdicts
    assert report.hard_failures


def test_season_sum_over_the_plot_is_the_same_verdict(task, oracle):
    """Two rows each within A1's 80 mu but together over it: the same hard verdict as one row over it."""
    data = copy.deepcopy(oracle)
    data["experiment_result"]["q1"]["waste_plan"] = [r for r in data["experiment_result"]["q1"]["waste_plan"]
                                                     if not (r["plot"] == "A1" and r["year"] == 2024)]
    data["experiment_result"]["q1"]["waste_plan"] += [_row("A1", 2024, "single", 1, "40"),
                                                      _row("A1", 2024, "single", 2, "40.000001")]
    derived = run_replay(task, data)
    assert derived.values["q1.waste_plan_feasible"] == 0
    assert any("planted on 80 mu" in x for x in cp.witness_violations(data["experiment_result"]["q1"]["waste_plan"],
                                                                      cp.load_official(os.path.join(task.directory, "data"))))


def test_more_than_six_places_stays_malformed(official):
    rows = [_row("A1", 2024, "single", 1, "0.3000001")]
    derived = cp.replay({"experiment_result": {"q1": {"waste_plan": rows}}}, official)
    assert "witness malformed" in derived.gaps["q1.waste_profit_yuan"]
    assert "q1.waste_plan_feasible" in derived.gaps


def test_tidy_gives_rounding_back_to_the_legume_windows(official):
    """Solver areas rounded to 1e-6 mu can leave a window a few 1e-6 mu short of the plot;
    tidy_plan gives that back to a legume row with room in its season, and nothing more."""
    from mmverify.replay import crop_planting_milp as milp

    def legume_rows(first):
        return [("A1", 2024, "single", 1, first), ("A1", 2027, "single", 1, Fraction(80)),
                ("A1", 2030, "single", 1, Fraction(80))]

    def breaches(rows):
        plan = {(p, y, s, c): a for p, y, s, c, a in milp.tidy_plan(official, rows)}
        return [x for x in cp.plan_violations(plan, official) if x.startswith("A1: legumes")]

    assert breaches(legume_rows(Fraction(80))) == []
    assert breaches(legume_rows(Fraction(79999990, 10**6))) == []                 # 1e-5 mu short: given back
    tidied = dict(((p, y, s, c), a) for p, y, s, c, a in milp.tidy_plan(official, legume_rows(Fraction(7999999, 10**5))))
    assert tidied[("A1", 2024, "single", 1)] == 80
    assert len(breaches(legume_rows(Fraction(79)))) == 2                          # 1 mu short: a real breach
