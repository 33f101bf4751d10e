"""Replay of MCM 2025 C: the Paris 2024 counts an answer reports are facts of the
official medal table."""
import copy
import csv
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import ANCHORS, parsed
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.gates.forms import evaluate_gates
from mmverify.replay import olympic_medals, run_replay
from mmverify.tasks import load_task

TASK = "mcm-2025-c-olympic-medals"
ORACLE = json.loads((ANCHORS / TASK / "oracle.json").read_text(encoding="utf-8"))
GATE = "q1.actual_2024_is_official_table"


def verdict(task, obj):
    return next(i.verdict for i in evaluate_gates(task, parsed(obj).data).instances if i.gate_id == GATE)


def test_table_is_the_official_one():
    rows = list(csv.DictReader(open(ANCHORS / TASK / "data" / "medals_2024.csv", encoding="utf-8")))
    assert len(rows) == 91 and len({r["NOC"] for r in rows}) == 91
    by = {r["NOC"]: r for r in rows}
    assert (by["USA"]["gold"], by["USA"]["total"], by["CHN"]["gold"], by["CHN"]["total"]) == ("40", "126", "40", "91")
    assert all(int(r["gold"]) + int(r["silver"]) + int(r["bronze"]) == int(r["total"]) for r in rows)


def test_oracle_replays_exactly(task):
    assert verdict(task, ORACLE) == "pass"
    assert run_replay(task, parsed(ORACLE).data).values == {"q1.actual_2024_max_error": 0}
    assert score_artifact(task, parsed(ORACLE)).oeval == 1


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 14), st.sampled_from(["actual_2024_total", "actual_2024_gold"]),
       st.integers(1, 50), st.booleans())
def test_a_misstated_count_rules_the_answer_out(row, field, delta, down):
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    item = art["monte_carlo_summary_top_total"][row]
    item[field] = max(0, item[field] - delta) if down else item[field] + delta
    if item[field] == ORACLE["monte_carlo_summary_top_total"][row][field]:
        return
    assert verdict(task, art) == "fail"
    assert score_artifact(task, parsed(art)).status == "infeasible"
    assert reward_of(task, parsed(art)) == 0.0


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_item_order_does_not_matter(rnd):
    task = load_task(TASK, str(ANCHORS))
    art = copy.deepcopy(ORACLE)
    rnd.shuffle(art["monte_carlo_summary_top_total"])
    assert run_replay(task, parsed(art).data).values == run_replay(task, parsed(ORACLE).data).values


@pytest.mark.parametrize("mutate", [
    lambda a: a.pop("monte_carlo_summary_top_total"),
    lambda a: a.__setitem__("monte_carlo_summary_top_total", "x"),
    lambda a: a["monte_carlo_summary_top_total"].__setitem__(0, 7),
    lambda a: a["monte_carlo_summary_top_total"][0].__setitem__("NOC", "XXX"),
    lambda a: a["monte_carlo_summary_top_total"][0].__setitem__("NOC", None),
    lambda a: a["monte_carlo_summary_top_total"][0].__setitem__("actual_2024_total", "126"),
    lambda a: [(i.pop("actual_2024_total"), i.pop("actual_2024_gold")) for i in a["monte_carlo_summary_top_total"]],
])
def test_a_corrupted_witness_is_a_gap(task, mutate):
    art = copy.deepcopy(ORACLE)
    mutate(art)
    rep = run_replay(task, parsed(art).data)
    assert rep.status == "ok" and rep.values == {} and set(rep.gaps) == set(olympic_medals.DERIVED)
