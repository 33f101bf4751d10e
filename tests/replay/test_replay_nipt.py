"""Replay of CUMCM 2025 C (NIPT): group statistics from the attachment under the
answer's grouping; the oracle's witness, claims against it, hostile witnesses,
row order of the data, the time cap and determinism."""
from __future__ import annotations

import copy
import json
import os
import random
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import report_verdicts as verdicts
from mmverify.reading import paths
from mmverify.reading.artifact import parse_file
from mmverify.cli import main as cli
from mmverify.pipeline.evaluate import score_artifact, score_path
from mmverify.plugin.reward import coerce_artifact
from mmverify.replay import declared_names, run_replay
from mmverify.replay import nipt
from mmverify.tasks import default_anchors_dir, load_task

TASK = "cumcm-2025-c-nipt"
TASK_DIR = os.path.join(default_anchors_dir(), TASK)
ORACLE = os.path.join(TASK_DIR, "oracle.json")
OFFICIAL = nipt.load_official(os.path.join(TASK_DIR, "data"))
REPLAY_GATES = tuple(
    [f"q2.group_{w}_replayed_{i}" for i in range(4) for w in ("count", "bmi_min", "bmi_max")]
    + [f"q3.reached_share_replayed_{i}" for i in range(4)]
    + ["q2.grouping_partition_replayed", "data.male_rows_replayed"])
CLAIMS = tuple(f"bmi_timing.groups[{i}].{w}" for i in range(4)
               for w in ("sample_count", "bmi_min", "bmi_max", "observed_reached_share"))


def oeval(data):
    return score_artifact(load_task(TASK), coerce_artifact(data)).oeval


# ------------------------------------------------------------------ the oracle

def test_registered():
    assert load_task(TASK).replay == "nipt"
    assert declared_names(load_task(TASK)) == frozenset(nipt.DERIVED)


def test_official_data_matches_the_attachment():
    assert OFFICIAL.rows == 1082 and len(OFFICIAL.mothers) == 267
    assert all(m.tests == tuple(sorted(m.tests)) for m in OFFICIAL.mothers)


def test_oracle_replays_to_its_own_claims(task, oracle):
    got, report = verdicts(task, oracle)
    assert all(got[g] == "pass" for g in REPLAY_GATES), {g: got[g] for g in REPLAY_GATES}
    assert not report.hard_failures
    assert set(CLAIMS) | {"data_source.male_rows"} <= report.verified()
    v = report.replay.values
    assert [v[f"g{i}.count"] for i in range(4)] == [67, 67, 66, 67]
    assert v["g3.bmi_max"] == Fraction("46.875")
    assert v["g0.reached_share"] == nipt.rounded(Fraction(18, 67)) == Fraction("0.268657")


def test_oracle_scores_one():
    report = score_path(ORACLE, TASK)
    assert report.status == "scored" and report.oeval == 1


def test_oracle_cli_score_passes_every_replay_gate():
    result = CliRunner().invoke(cli, ["score", ORACLE, "--task", TASK, "--format", "json"])
    assert result.exit_code == 0, result.output
    got = {i["gate"]: i["verdict"] for i in json.loads(result.output)["gates"]["instances"]}
    assert all(got[g] == "pass" for g in REPLAY_GATES)


def test_a_tie_at_the_latest_week_is_averaged():
    """A043 has two tests at 16w+6 with different BMIs; 'last' averages them."""
    mother = next(m for m in OFFICIAL.mothers if m.code == "A043")
    last_day = mother.tests[-1][0]
    at = [b for d, b, _ in mother.tests if d == last_day]
    assert len(at) == 2 and at[0] != at[1]
    assert mother.bmi("last") == (at[0] + at[1]) / 2


# ------------------------------------------------------------------ claims against the witness

GATE_OF = {"sample_count": "q2.group_count_replayed_{}", "bmi_min": "q2.group_bmi_min_replayed_{}",
           "bmi_max": "q2.group_bmi_max_replayed_{}", "observed_reached_share": "q3.reached_share_replayed_{}"}


def gate_of(path):
    return GATE_OF[path.rsplit(".", 1)[1]].format(path.split("[")[1][0])


@pytest.mark.parametrize("path", CLAIMS)
def test_inflated_claims_are_refuted(task, oracle, path):
    value = paths.get(oracle, path)
    step = {"sample_count": 1, "bmi_min": Decimal("0.01"), "bmi_max": Decimal("0.011"),
            "observed_reached_share": Decimal("0.00011")}[path.rsplit(".", 1)[1]]
    paths.put(oracle, path, value + step)
    got, report = verdicts(task, oracle)
    assert got[gate_of(path)] == "fail"
    if path.endswith("bmi_max"):        # the scored claim: refuted, r = 0
        report = score_artifact(load_task(TASK), coerce_artifact(oracle), records=True)
        m = next(m for m in report.panel.metrics if m.metric_id == "q2.group_upper_bmi")
        assert m.per_paper[0].r < 1 and oeval(oracle) < 1


TOL = {"sample_count": 0, "bmi_min": Fraction(51, 10000), "bmi_max": Fraction(51, 10000),
       "observed_reached_share": Fraction(6, 100000)}
REPLAYED = {"sample_count": "count", "bmi_min": "bmi_min", "bmi_max": "bmi_max", "observed_reached_share": "reached_share"}


@given(st.sampled_from(CLAIMS), st.decimals(min_value=Decimal("0.00001"), max_value=Decimal("20"), places=5),
       st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_claim_beyond_tolerance_fails(task, oracle, path, delta, down):
    """A claim more than its tolerance away from the replay of its own grouping fails."""
    data = copy.deepcopy(oracle)
    i, field = int(path.split("[")[1][0]), path.rsplit(".", 1)[1]
    replayed = nipt.replay(data, OFFICIAL).values[f"g{i}.{REPLAYED[field]}"]
    off = TOL[field] + Fraction(delta)
    if field == "sample_count":
        off = max(1, int(off))
    new = replayed - off if down else replayed + off
    text = Decimal(new.numerator) / Decimal(new.denominator) if field != "sample_count" else int(new)
    if field != "sample_count" and abs(Fraction(text) - replayed) <= TOL[field]:
        return                                  # (decimal rounding of the claim cannot reach the edge: skip)
    paths.put(data, path, text)
    got, _ = verdicts(task, data)
    assert got[gate_of(path)] == "fail"


def test_the_statement_example_grouping_replays(oracle):
    """The statement's example intervals [20,28), [28,32), [32,36), [36,40), 40+ as a left-closed grouping."""
    edges = [Decimal(x) for x in (20, 28, 32, 36, 40, 100)]
    oracle["bmi_timing"]["grouping"] = {"per_mother_bmi": "mean", "closed": "left"}
    oracle["bmi_timing"]["groups"] = [{"bmi_lower": a, "bmi_upper": b, "recommended_week": Decimal(12)}
                                      for a, b in zip(edges, edges[1:])]
    derived = nipt.replay(oracle, OFFICIAL)
    counts = [derived.values[f"g{i}.count"] for i in range(4)]
    assert derived.values["grouping.partition_ok"] == 1
    assert sum(counts) < 267          # the fifth group (40+) holds the rest
    for i, (lo, hi) in enumerate(zip(edges[:4], edges[1:5])):
        assert lo <= derived.values[f"g{i}.bmi_min"] <= derived.values[f"g{i}.bmi_max"] < hi


def test_overlapping_or_gapped_groups_are_no_partition(task, oracle):
    oracle["bmi_timing"]["groups"][1]["bmi_lower"] = Decimal("30.0")
    got, _ = verdicts(task, oracle)
    assert got["q2.grouping_partition_replayed"] == "fail"


def test_a_mother_outside_every_group_is_no_partition(oracle):
    oracle["bmi_timing"]["groups"][0]["bmi_lower"] = Decimal("25")
    assert nipt.replay(oracle, OFFICIAL).values["grouping.partition_ok"] == 0


def test_excluded_mothers_leave_the_groups(oracle):
    oracle["bmi_timing"]["grouping"]["excluded_mothers"] = ["A001", "A002"]
    derived = nipt.replay(oracle, OFFICIAL)
    assert sum(derived.values[f"g{i}.count"] for i in range(4)) == 265
    assert derived.values["grouping.partition_ok"] == 1


def test_rule_changes_the_counts(oracle):
    counts = {}
    for rule in nipt.RULES:
        oracle["bmi_timing"]["grouping"]["per_mother_bmi"] = rule
        derived = nipt.replay(oracle, OFFICIAL)
        counts[rule] = tuple(derived.values[f"g{i}.count"] for i in range(4))
    assert len(set(counts.values())) > 1


def test_witness_absent_leaves_claims_unwitnessed(task, oracle):
    del oracle["bmi_timing"]["grouping"]
    got, report = verdicts(task, oracle)
    assert got["q2.group_bmi_max_replayed_0"] == "gap"
    assert "absent" in report.replay.gaps["g0.count"]
    assert oeval(oracle) < 1


HOSTILE_GROUPING = [None, "last", [], {"per_mother_bmi": "latest", "closed": "right"},
                    {"per_mother_bmi": "last", "closed": "both"},
                    {"per_mother_bmi": "last", "closed": "right", "excluded_mothers": "A001"},
                    {"per_mother_bmi": "last", "closed": "right", "excluded_mothers": ["../etc/passwd"]},
                    {"per_mother_bmi": "last", "closed": "right", "excluded_mothers": ["A001", "A001"]},
                    {"per_mother_bmi": "last", "closed": "right", "excluded_mothers": [1]},
                    {"per_mother_bmi": ["last"], "closed": "right"}]


@pytest.mark.parametrize("bad", HOSTILE_GROUPING, ids=range(len(HOSTILE_GROUPING)))
def test_corrupted_grouping_gives_gaps(task, oracle, bad):
    oracle["bmi_timing"]["grouping"] = bad
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert all(n in report.gaps for n in nipt.DERIVED if n.startswith("g"))
    assert report.values["data.male_rows"] == 1082


@pytest.mark.parametrize("field,bad", [
    ("bmi_lower", None), ("bmi_lower", "20"), ("bmi_lower", True), ("bmi_lower", Decimal("NaN")),
    ("bmi_lower", Decimal("-1")), ("bmi_lower", Decimal("1e300")), ("bmi_upper", Decimal("20")),
    ("recommended_week", None), ("recommended_week", Decimal("1e99"))])
def test_corrupted_group_fields_give_gaps(task, oracle, field, bad):
    oracle["bmi_timing"]["groups"][0][field] = bad
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert report.gaps
    assert "g1.count" in report.values


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(bmi_timing=None), lambda d: d.update(bmi_timing=[]),
    lambda d: d["bmi_timing"].update(groups="x"), lambda d: d["bmi_timing"].update(groups=[]),
    lambda d: d["bmi_timing"].update(groups=[1, 2, 3]),
    lambda d: d["bmi_timing"].update(groups=d["bmi_timing"]["groups"] * 3)])
def test_corrupted_structure_gives_gaps_not_crashes(task, oracle, mutate):
    mutate(oracle)
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert report.gaps


# ------------------------------------------------------------------ promises

@given(st.randoms(use_true_random=False))
@settings(max_examples=10, deadline=None)
def test_row_order_of_the_data_carries_no_meaning(rnd):
    """Shuffling the attachment's rows (and so each mother's tests, ties included) changes nothing."""
    data = parse_file(ORACLE).data
    mothers = list(OFFICIAL.mothers)
    rnd.shuffle(mothers)
    shuffled_mothers = []
    for m in mothers:
        tests = list(m.tests)
        rnd.shuffle(tests)
        shuffled_mothers.append(nipt.Mother(m.code, tuple(sorted(tests))))
    shuffled = nipt.Official(OFFICIAL.rows, tuple(sorted(shuffled_mothers, key=lambda m: m.code)),
                             {r: tuple(m.bmi(r) for m in sorted(shuffled_mothers, key=lambda m: m.code))
                              for r in nipt.RULES})
    assert nipt.replay(data, shuffled) == nipt.replay(data, OFFICIAL)


def test_loader_ignores_row_order(tmp_path):
    src = os.path.join(TASK_DIR, "data", "male_rows.csv")
    with open(src, encoding="utf-8") as fh:
        header, *rows = fh.read().splitlines()
    random.Random(7).shuffle(rows)
    (tmp_path / "male_rows.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    assert nipt.load_official(str(tmp_path)) == OFFICIAL


@given(st.decimals(min_value=Decimal("10"), max_value=Decimal("24"), places=1))
@settings(max_examples=20, deadline=None)
def test_reached_share_grows_with_the_week(week):
    data = parse_file(ORACLE).data
    later = copy.deepcopy(data)
    for g in data["bmi_timing"]["groups"]:
        g["recommended_week"] = week
    for g in later["bmi_timing"]["groups"]:
        g["recommended_week"] = week + 1
    a, b = nipt.replay(data, OFFICIAL).values, nipt.replay(later, OFFICIAL).values
    assert all(a[f"g{i}.reached_share"] <= b[f"g{i}.reached_share"] for i in range(4))


@given(st.permutations(range(267)))
@settings(max_examples=5, deadline=None)
def test_exclusion_order_carries_no_meaning(order):
    data = parse_file(ORACLE).data
    codes = [OFFICIAL.mothers[k].code for k in order[:40]]
    data["bmi_timing"]["grouping"]["excluded_mothers"] = codes
    again = copy.deepcopy(data)
    again["bmi_timing"]["grouping"]["excluded_mothers"] = sorted(codes)
    assert nipt.replay(data, OFFICIAL) == nipt.replay(again, OFFICIAL)


def test_deterministic():
    data = parse_file(ORACLE).data
    assert nipt.replay(data, OFFICIAL) == nipt.replay(copy.deepcopy(data),
                                                      nipt.load_official(os.path.join(TASK_DIR, "data")))


def test_time_cap_holds(task, oracle):
    """Ten groups and every mother but one excluded or not: far inside the cap."""
    edges = [Decimal(15 + 4 * k) for k in range(11)]
    oracle["bmi_timing"]["groups"] = [{"bmi_lower": a, "bmi_upper": b, "recommended_week": Decimal(25)}
                                      for a, b in zip(edges, edges[1:])]
    oracle["bmi_timing"]["grouping"]["excluded_mothers"] = [m.code for m in OFFICIAL.mothers[:-1]]
    start = time.perf_counter()
    report = run_replay(task, oracle)
    assert time.perf_counter() - start < 1.0
    assert report.status == "ok"
    assert report.values["g0.count"] == 0 and report.values["grouping.partition_ok"] == 1
