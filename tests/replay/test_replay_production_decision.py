"""Replay of the production-decision task (CUMCM 2024 B): expected profit of the
decisions an artifact hands in, in the reproduction's formula and in the
statement's literal process."""
import copy
import json
import random
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed
from mmverify.cli import main as cli
from mmverify.pipeline.evaluate import score_artifact
from mmverify.gates.forms import evaluate_gates
from mmverify.replay import declared_names, run_replay
from mmverify.replay import production_decision
from mmverify.tasks import load_task

TASK = "cumcm-2024-b-production-decision"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
ROWS = "experiment_result.q2.best_decisions"


def report(task, obj):
    return evaluate_gates(task, parsed(obj).data)


def verdicts(task, obj):
    return {(i.gate_id, i.index): i.verdict for i in report(task, obj).instances}


def oracle():
    return copy.deepcopy(ORACLE)


def rows(art):
    return art["experiment_result"]["q2"]["best_decisions"]


def decision(row):
    return tuple(int(row[k]) for k in production_decision.DECISIONS)


# ------------------------------------------------------------------ the oracle

def test_registered_and_names_declared(task):
    assert task.replay == "production_decision"
    assert declared_names(task) == frozenset(production_decision.DERIVED)
    assert len(production_decision.DERIVED) == len(set(production_decision.DERIVED))


def test_oracle_replays_to_its_own_claims(task):
    rep = report(task, ORACLE)
    assert not rep.hard_failures
    got = {i.gate_id: i.verdict for i in rep.instances}
    for i in range(6):
        assert got[f"q2.row{i}.profit_replayed"] == "pass"
        assert got[f"q2.row{i}.decisions_optimal_replayed"] == "pass"
    assert got["q3.profit_replayed"] == "pass"
    assert rep.verified() == {f"{ROWS}[{i}].expected_profit" for i in range(6)} | {"experiment_result.q3.best_expected_profit"}
    values = rep.replay.values
    for i, row in enumerate(rows(ORACLE)):
        exact = production_decision.reference_profit(row["case"], decision(row))
        assert abs(exact - Fraction(str(row["expected_profit"]))) <= Fraction(5, 100000)
        assert values[f"q2.row{i}.profit_reference"] == production_decision.decimal_value(exact)
        assert values[f"q2.row{i}.regret"] == 0
    assert values["q3.profit_reference"] == 88                       # the reproduction's formula (audit record)
    claimed = Fraction(str(ORACLE["experiment_result"]["q3"]["best_expected_profit"]))
    assert values["q3.profit_low"] == values["q3.profit_high"] == values["q3.profit_charged"]
    assert abs(values["q3.profit_charged"] - claimed) <= Fraction(5, 100000)


def test_oracle_scores_one(task):
    rep = score_artifact(task, parsed(ORACLE))
    assert rep.status == "scored" and rep.oeval == 1


def test_oracle_decisions_are_best_of_all_16_in_the_reference_formula():
    for row in rows(ORACLE):
        chosen = production_decision.reference_profit(row["case"], decision(row))
        for alt in production_decision.ALL_DECISIONS:
            assert chosen >= production_decision.reference_profit(row["case"], alt), (row["case"], alt)


def test_reference_differs_from_the_statement_reading(task):
    """Audit finding, reported by the replayed values (no gate: a gate reading the
    replay is never soft): the published profits charge no replacement unit, and
    its decisions are not the literal reading's best in situations 1-5."""
    values = run_replay(task, parsed(ORACLE).data).values
    for i, row in enumerate(rows(ORACLE)):
        assert abs(values[f"q2.row{i}.profit_statement"] - Fraction(str(row["expected_profit"]))) > Fraction(1, 10000)
    assert [values[f"q2.row{i}.regret_statement"] > 0 for i in range(6)] == [True] * 5 + [False]


def test_no_soft_gate_reads_the_replay(task):
    reading = [g for g in task.gates if "$replay." in json.dumps(g)]
    assert len(reading) == 13
    assert {g["id"] for g in reading if g["severity"] == "claim"} == {
        *(f"q2.row{i}.profit_replayed" for i in range(6)), "q3.profit_replayed"}
    assert all(g["severity"] in ("hard", "claim") for g in reading)


# ------------------------------------------------------------------ claims against the witness

@pytest.mark.parametrize("claim", ["27.5", "26.4", "26.3742", "10"])
def test_claim_off_its_witness_fails_hard(task, claim):
    art = oracle()
    rows(art)[0]["expected_profit"] = json.loads(claim)
    rep = report(task, art)
    got = {(i.gate_id, i.index): i.verdict for i in rep.instances}
    # 10 lies below both readings (15.36 literal, 26.374 reference): also refuted
    assert got[("q2.row0.profit_replayed", None)] == "fail"
    assert f"{ROWS}[0].expected_profit" not in rep.verified()


def test_inflated_claim_is_refuted_through_the_cli(tmp_path):
    """A claim gate: the inflated claim scores 0 for itself (refuted_claim), the task is still scored."""
    art = oracle()
    rows(art)[2]["expected_profit"] = 21.5          # inside the 28 margin, above what the decisions give
    path = tmp_path / "inflated.json"
    path.write_text(json.dumps(art), encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(path), "--task", TASK])
    assert "q2.row2.profit_replayed" in result.output and "infeasible" not in result.output
    assert "O-EVAL   1.0000" not in result.output and "O-EVAL   0.0000" not in result.output
    rep = score_artifact(load_task(TASK, str(ANCHORS)), parsed(art))
    assert any(r.rule == "refuted_claim" and r.metric_id == "q2.expected_profit" for r in rep.panel.rules)


def test_rounded_claims_within_tolerance_pass(task):
    art = oracle()
    rows(art)[5]["expected_profit"] = 26.5737        # exact value 26.57375: either rounding of the tie
    assert verdicts(task, art)[("q2.row5.profit_replayed", None)] == "pass"


def test_statement_reading_answer_is_verified(task):
    """An answer in the literal reading: situation 1, inspect both parts, no final
    inspection, dismantle: 56 - 346/9 = 158/9 = 17.5556 per customer."""
    assert production_decision.statement_profit(1, (1, 1, 0, 1)) == Fraction(158, 9)
    art = oracle()
    rows(art)[0].update(inspect_part1=1, inspect_part2=1, inspect_final=0, dismantle_bad_final=1,
                        expected_profit=17.5556)
    rep = report(task, art)
    got = {i.gate_id: i.verdict for i in rep.instances}
    assert got["q2.row0.profit_replayed"] == "pass"
    assert got["q2.row0.decisions_optimal_replayed"] == "pass"
    assert rep.replay.values["q2.row0.profit_statement"] == production_decision.decimal_value(Fraction(158, 9))
    assert rep.replay.values["q2.row0.regret_statement"] == 0
    assert f"{ROWS}[0].expected_profit" in rep.verified()


def test_decisions_best_in_neither_reading_fail_hard(task):
    art = oracle()
    row = rows(art)[0]
    row.update(inspect_part1=0, inspect_part2=1, inspect_final=1, dismantle_bad_final=0)
    row["expected_profit"] = float(round(production_decision.reference_profit(1, (0, 1, 1, 0)), 4))
    got = verdicts(task, art)
    assert got[("q2.row0.profit_replayed", None)] == "pass"
    assert got[("q2.row0.decisions_optimal_replayed", None)] == "fail"


def test_rows_pair_by_position_whatever_the_case_order(task):
    art = oracle()
    random.Random(7).shuffle(rows(art))
    rep = report(task, art)
    assert not rep.hard_failures
    assert len(rep.verified()) == 7                  # six Q2 profits and the Q3 profit


def test_missing_witness_is_a_gap_and_unverified(task):
    art = oracle()
    del rows(art)[3]["inspect_final"]
    rows(art)[3]["expected_profit"] = 16.5           # beyond the panel's 14.95 plus the 2.5% band
    rep = report(task, art)
    assert rep.replay.gaps["q2.row3.profit_reference"] == f"witness absent: {ROWS}[3].inspect_final"
    got = {i.gate_id: i.verdict for i in rep.instances}
    assert got["q2.row3.profit_replayed"] == "gap" and got["q2.row3.decisions_optimal_replayed"] == "gap"
    assert f"{ROWS}[3].expected_profit" not in rep.verified()
    scored = score_artifact(task, parsed(art))
    assert scored.status == "scored"
    assert any(r.rule == "unverified_improvement" and r.metric_id == "q2.expected_profit" for r in scored.panel.rules)


def test_unbounded_literal_reading_leaves_the_reference_to_decide(task):
    """Dismantling with an uninspected part recycles a defective part forever in
    the literal reading; the bracket collapses to the reference value."""
    assert production_decision.statement_profit(1, (0, 0, 0, 1)) is None
    art = oracle()
    rows(art)[0]["dismantle_bad_final"] = 1
    rep = report(task, art)
    assert "q2.row0.profit_statement" in rep.replay.gaps
    assert rep.replay.values["q2.row0.profit_low"] == rep.replay.values["q2.row0.profit_high"]
    got = {i.gate_id: i.verdict for i in rep.instances}
    assert got["q2.row0.profit_replayed"] == "pass"


def test_deterministic(task):
    a = run_replay(task, parsed(ORACLE).data)
    b = production_decision.replay(parsed(ORACLE).data, None)
    assert a.values == dict(b.values) and a.gaps == dict(b.gaps)
    art = oracle()
    rows(art)[1].update(inspect_part1=1, expected_profit=3.4062)
    assert score_artifact(task, parsed(art)).to_json() == score_artifact(task, parsed(art)).to_json()


# ------------------------------------------------------------------ the model

def test_known_values():
    # reference: nothing inspected, price - parts - assembly - (1 - 0.9^3) x swap loss
    assert production_decision.reference_profit(1, (0, 0, 0, 0)) == 56 - 28 - (1 - Fraction(729, 1000)) * 6
    # literal reading, nothing inspected, scrap: each delivery attempt costs 28 (+6 when defective)
    g = Fraction(729, 1000)
    assert production_decision.statement_profit(1, (0, 0, 0, 0)) == 56 - 28 / g - (1 / g - 1) * 6
    # literal reading, everything inspected, scrap: (30 + 6 + 3) per attempt, 1 / 0.9 attempts
    assert production_decision.statement_profit(1, (1, 1, 1, 0)) == 56 - Fraction(39) / Fraction(9, 10)


def test_every_profit_within_the_statement_margin():
    for case in production_decision.CASES:
        for d in production_decision.ALL_DECISIONS:
            ref, stmt = production_decision.statement_tables()[case][d]
            assert ref <= 28
            assert stmt is None or stmt <= 28
            assert (stmt is None) == (d[3] == 1 and not (d[0] and d[1]))


def test_literal_reading_costs_more_with_a_higher_swap_loss():
    """Situations 1 and 3 differ only in the swap loss (6 vs 30): without final
    inspection every defective unit sold pays it, so profit falls; with final
    inspection nothing is sold defective and the profit does not move."""
    for d in production_decision.ALL_DECISIONS:
        s1, s3 = production_decision.statement_profit(1, d), production_decision.statement_profit(3, d)
        if s1 is None:
            continue
        assert s3 < s1 if not d[2] else s3 == s1


# ------------------------------------------------------------------ hostile witnesses

number = st.one_of(st.decimals(allow_nan=False, allow_infinity=False), st.integers(-10**30, 10**30),
                   st.booleans(), st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2),
                   st.sampled_from([0, 1, 2, 6, Decimal("1.0"), Decimal("0.5"), Decimal("1E+400")]))
row_st = st.dictionaries(st.sampled_from(["case", *production_decision.DECISIONS, "expected_profit"]), number)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.fixed_dictionaries({"experiment_result": st.fixed_dictionaries({
        "q2": st.one_of(st.fixed_dictionaries({"best_decisions": st.one_of(st.lists(row_st, max_size=40), number)}),
                        number),
        "q3": st.one_of(st.fixed_dictionaries({"decision_bits": st.one_of(st.lists(number, max_size=40), number)}),
                        number)})}),
    st.dictionaries(st.text(max_size=3), number)))
def test_hostile_witness_never_raises(data):
    t0 = time.perf_counter()
    d = production_decision.replay(data, None)
    assert time.perf_counter() - t0 < 5
    assert set(d.values) | set(d.gaps) == set(production_decision.DERIVED)
    assert not set(d.values) & set(d.gaps)
    assert all(isinstance(v, Fraction) for v in d.values.values())
    for i in range(production_decision.ROWS):
        if f"q2.row{i}.regret" in d.values:
            assert d.values[f"q2.row{i}.regret"] >= 0
            assert d.values[f"q2.row{i}.profit_low"] <= d.values[f"q2.row{i}.profit_high"] <= 28


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.tuples(*[st.integers(0, 1)] * 4))
def test_regret_zero_exactly_for_a_best_set(case, d):
    art = {"experiment_result": {"q2": {"best_decisions": [dict(case=case, **dict(zip(production_decision.DECISIONS, d)))]}}}
    v = production_decision.replay(parsed(art).data, None).values
    ref, stmt = production_decision.statement_tables()[case][d]
    best_ref, best_stmt = production_decision.best_profits(production_decision.statement_tables()[case])
    assert (v["q2.row0.regret"] == 0) == (ref == best_ref or stmt == best_stmt)


def test_stored_tables_are_the_recomputation():
    data = Path(__file__).resolve().parents[2] / "anchors" / "cumcm-2024-b-production-decision" / "data"
    stored = production_decision.load_official(str(data))
    assert stored == production_decision.statement_tables()
    assert production_decision.tables_json(stored) == json.loads((data / "statement_tables.json").read_text("utf-8"))


def test_broken_tables_file_is_a_task_error(tmp_path):
    (tmp_path / "statement_tables.json").write_text('{"tables": {"1": {}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="decision sets"):
        production_decision.load_official(str(tmp_path))


# ------------------------------------------------------------------ Q3: the decision plan replayed

ORACLE_BITS = (0,) * 8 + (1, 1, 1, 1, 0, 0, 0, 1)
bits_st = st.tuples(*[st.integers(0, 1)] * production_decision.Q3_BITS)


def test_q3_known_values():
    g12, g3 = Fraction(9, 10) ** 4, Fraction(9, 10) ** 3          # semi-finished 1, 2 (three parts) and 3 (two)
    # the oracle's bits: rejected semi-finished products charged, 1/g attempts each
    expected = 200 - (2 * (22 + 8 + 4) / g12 + (20 + 8 + 4) / g3 + 8) - Fraction(1, 10) * 40
    assert production_decision.q3_charged(ORACLE_BITS) == expected
    assert production_decision.decimal_value(expected) == Fraction("40.461515013")
    assert production_decision.q3_reference(ORACLE_BITS) == 88               # the reproduction's formula
    # nothing inspected: every unit sold, a defective one costs the swap loss
    good = Fraction(9, 10) * g12 * g12 * g3
    assert production_decision.q3_charged((0,) * 16) == 200 - 64 - 32 - (1 - good) * 40


def test_q3_recovery_only_moves_a_dismantled_inspected_final_product():
    """The semi-finished products' recovery value is nil (1/4 x 22 - 6 < 0, 1/4 x 20 - 6 < 0);
    the final product's is 1/5 x 64 - 10 = 2.8, credited per rejected final product."""
    for bits in (ORACLE_BITS, (1,) * 14 + (0, 1), (0,) * 14 + (1, 0)):
        assert production_decision.q3_charged(bits, True) == production_decision.q3_charged(bits, False)
    bits = (1,) * 16
    good = Fraction(9, 10)                      # every part and semi-finished product inspected
    gap = production_decision.q3_charged(bits, True) - production_decision.q3_charged(bits, False)
    assert gap == (1 - good) * Fraction(28, 10)


@settings(max_examples=200, deadline=None)
@given(bits_st)
def test_q3_charged_never_above_the_reference_nor_the_margin(bits):
    charged = production_decision.q3_charged(bits)
    assert production_decision.q3_charged(bits, False) <= charged <= production_decision.q3_reference(bits)
    assert charged <= 104


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bits_st, st.booleans(), st.integers(-3, 3))
def test_q3_claim_is_judged_by_its_own_bits(bits, recovery, nudge):
    """A claim within 0.0001 of the replayed bracket is verified; moved beyond it, refuted."""
    task = load_task(TASK, str(ANCHORS))
    art = oracle()
    art["experiment_result"]["q3"]["decision_bits"] = list(bits)
    low, high = (production_decision.decimal_value(production_decision.q3_charged(bits, r)) for r in (False, True))
    claim = (high if recovery else low).__round__(4) + Fraction(nudge, 10000) * 2
    art["experiment_result"]["q3"]["best_expected_profit"] = json.loads(str(float(claim)))
    rep = report(task, art)
    got = {i.gate_id: i.verdict for i in rep.instances}
    inside = low - Fraction(1, 10000) <= claim <= high + Fraction(1, 10000)
    assert got["q3.profit_replayed"] == ("pass" if inside else "fail")
    assert ("experiment_result.q3.best_expected_profit" in rep.verified()) == inside


def test_q3_published_88_is_a_refuted_claim(task):
    """The paper's own claim at its own bits: refuted, r = 0 for that claim (not the task)."""
    art = oracle()
    art["experiment_result"]["q3"]["best_expected_profit"] = 88.0
    got = verdicts(task, art)
    assert got[("q3.profit_replayed", None)] == "fail"
    rep = score_artifact(task, parsed(art))
    assert rep.status == "scored" and 0 < rep.oeval < 1
    assert any(r.rule == "refuted_claim" and r.metric_id == "q3.best_expected_profit" for r in rep.panel.rules)


def test_q3_missing_or_malformed_bits_are_gaps(task):
    for bad in (None, [0, 1], [0] * 15 + [2]):
        art = oracle()
        if bad is None:
            del art["experiment_result"]["q3"]["decision_bits"]
        else:
            art["experiment_result"]["q3"]["decision_bits"] = bad
        rep = report(task, art)
        got = {i.gate_id: i.verdict for i in rep.instances}
        assert got["q3.profit_replayed"] == "gap"
        assert "experiment_result.q3.best_expected_profit" not in rep.verified()
        assert all(f"q3.{f}" in rep.replay.gaps for f in production_decision.Q3_FIELDS)
