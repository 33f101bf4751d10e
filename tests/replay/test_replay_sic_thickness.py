"""Replay of CUMCM 2025 B (SiC/Si thickness): the oracle's witness, claims
against it, hostile witnesses, list order, the time cap and determinism."""
from __future__ import annotations

import copy
import json
import math
import os
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.replaykit import report_verdicts as verdicts
from mmverify.reading.artifact import parse_file
from mmverify.cli import main as cli
from mmverify.pipeline.evaluate import score_artifact, score_path
from mmverify.plugin.reward import coerce_artifact
from mmverify.replay import declared_names, run_replay
from mmverify.replay import sic_thickness as sic
from mmverify.tasks import default_anchors_dir, load_task

TASK = "cumcm-2025-b-sic-thickness"
TASK_DIR = os.path.join(default_anchors_dir(), TASK)
ORACLE = os.path.join(TASK_DIR, "oracle.json")
OFFICIAL = sic.load_official(os.path.join(TASK_DIR, "data"))
SPECTRA = sic.load_spectra(os.path.join(TASK_DIR, "data"))
REPLAY_GATES = tuple(
    [f"fits.{w}_replayed_{i}" for i in range(4) for w in ("extrema", "thickness", "period")]
    + [f"joint.thickness_replayed_{j}" for j in range(2)]
    + ["q3.si_thickness_replayed", "q3.sic_thickness_replayed"])
SCORED = ("experiment_result.si_recommended_thickness_um", "experiment_result.sic_recommended_thickness_um",
          "joint_thickness_summary[0].joint_two_beam_thickness_um",
          "joint_thickness_summary[1].joint_two_beam_thickness_um")


# ------------------------------------------------------------------ the oracle

def test_registered():
    assert load_task(TASK).replay == "sic_thickness"
    assert declared_names(load_task(TASK)) == frozenset(sic.DERIVED)


def test_oracle_replays_to_its_own_claims(task, oracle):
    got, report = verdicts(task, oracle)
    assert all(got[g] == "pass" for g in REPLAY_GATES), {g: got[g] for g in REPLAY_GATES}
    assert not report.hard_failures
    assert set(SCORED) <= report.verified()
    values = report.replay.values
    assert values["sic.joint_thickness_um"] == Fraction("7.794159")
    assert values["si.joint_thickness_um"] == Fraction("3.441983")


def test_oracle_scores_one_through_the_cli():
    result = CliRunner().invoke(cli, ["score", ORACLE, "--task", TASK, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["status"] == "scored"
    got = {i["gate"]: i["verdict"] for i in doc["gates"]["instances"]}
    assert all(got[g] == "pass" for g in REPLAY_GATES)


def test_oracle_scores_one():
    report = score_path(ORACLE, TASK)
    assert report.status == "scored" and report.oeval == 1


def test_stored_extrema_are_the_detector_output():
    """``extrema.csv`` is what the detector finds in the four attachments, and the
    detector's output does not depend on the stored file."""
    assert {k: sp.extrema for k, sp in SPECTRA.items()} == OFFICIAL
    assert all(len(sp.nu) == 7469 for sp in SPECTRA.values())


def test_data_extrema_are_physical():
    """The detector's maxima in the oracle's ranges are those the oracle names,
    and both angles of one wafer give nearly the same thickness (the physics)."""
    oracle = parse_file(ORACLE).data
    for item in oracle["single_angle_fits"]:
        extrema = OFFICIAL[sic.SPECTRA[(item["sample"], int(item["angle_deg"]))]]
        named = [float(v) for v in item["extrema_cm_minus_1"]]
        found = [v for k, v in extrema if k == "max" and named[0] - 1 <= v <= named[-1] + 1]
        assert found == named
    values = run_replay(load_task(TASK), oracle).values
    for a, b in ((0, 1), (2, 3)):
        da, db = values[f"fit{a}.thickness_um"], values[f"fit{b}.thickness_um"]
        assert abs(da - db) / da < Fraction(2, 100)


def test_detector_alternates_and_ignores_small_wiggles():
    nu = tuple(400.0 + 0.5 * i for i in range(4000))
    wave = tuple(20 + 5 * math.sin(2 * math.pi * v / 250) + 0.1 * math.sin(v) for v in nu)
    ext = sic.data_extrema(nu, wave)
    kinds = [k for k, _ in ext]
    assert all(a != b for a, b in zip(kinds, kinds[1:]))
    maxima = [v for k, v in ext if k == "max"]
    assert all(abs((b - a) - 250) < 5 for a, b in zip(maxima, maxima[1:]))


def test_reference_thickness_is_refuted(task, oracle):
    """The published 16.4925 um SiC / 10.5145 um Si claims are refuted by the data:
    those metrics score 0 (refuted_claim), the answer is not ruled out."""
    oracle["experiment_result"]["si_recommended_thickness_um"] = Decimal("10.5145")
    oracle["joint_thickness_summary"][1]["joint_two_beam_thickness_um"] = Decimal("16.4925")
    got, report = verdicts(task, oracle)
    assert got["q3.si_thickness_replayed"] == "fail"
    assert got["joint.thickness_replayed_1"] == "fail"
    assert not report.hard_failures
    scored = score_path_report(oracle, records=True)
    status = {m.metric_id: m.per_paper[0].status for m in scored.panel.metrics}
    assert status["q3.si_thickness"] == "refuted"
    assert 0 < scored.oeval < 1


def score_path_data(data):
    return score_path_report(data).oeval


# ------------------------------------------------------------------ claims against the witness

GATE_OF = {"experiment_result.si_recommended_thickness_um": "q3.si_thickness_replayed",
           "experiment_result.sic_recommended_thickness_um": "q3.sic_thickness_replayed",
           "joint_thickness_summary[0].joint_two_beam_thickness_um": "joint.thickness_replayed_0",
           "joint_thickness_summary[1].joint_two_beam_thickness_um": "joint.thickness_replayed_1"}


@pytest.mark.parametrize("path", SCORED)
@pytest.mark.parametrize("delta", ["0.006", "-0.006", "0.5", "-2"])
def test_inflated_claims_are_refuted(task, oracle, path, delta):
    from mmverify.reading import paths
    value = paths.get(oracle, path)
    paths.put(oracle, path, value + Decimal(delta))
    got, _ = verdicts(task, oracle)
    assert got[GATE_OF[path]] == "fail"
    assert score_path_data(oracle) < 1


@given(st.decimals(min_value=Decimal("0.0051"), max_value=Decimal("50"), places=4), st.sampled_from(SCORED),
       st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_claim_beyond_tolerance_is_refuted(task, oracle, delta, path, down):
    from mmverify.reading import paths
    data = copy.deepcopy(oracle)
    value = paths.get(data, path)
    new = value - delta if down else value + delta
    if new <= 0:
        return
    paths.put(data, path, new)
    got, _ = verdicts(task, data)
    assert got[GATE_OF[path]] == "fail"


def test_claim_within_tolerance_passes(task, oracle):
    oracle["experiment_result"]["sic_recommended_thickness_um"] += Decimal("0.004")
    got, _ = verdicts(task, oracle)
    assert got["q3.sic_thickness_replayed"] == "pass"


def test_skipped_extremum_fails_the_data_check(task, oracle):
    """Naming every other maximum halves the thickness: the data check refutes it."""
    item = oracle["single_angle_fits"][0]
    item["extrema_cm_minus_1"] = item["extrema_cm_minus_1"][::2]
    got, report = verdicts(task, oracle)
    assert got["fits.extrema_replayed_0"] == "fail"
    assert "fit0.thickness_um" in report.replay.gaps


def test_invented_extremum_fails(task, oracle):
    item = oracle["single_angle_fits"][2]
    item["extrema_cm_minus_1"] = [v + Decimal(100) for v in item["extrema_cm_minus_1"]]
    got, _ = verdicts(task, oracle)
    assert got["fits.extrema_replayed_2"] == "fail"


def test_minima_witness_replays(oracle):
    item = oracle["single_angle_fits"][0]
    mins = [v for k, v in OFFICIAL[1] if k == "min" and 1650 <= v <= 3800]
    item["extrema_kind"] = "min"
    item["extrema_cm_minus_1"] = [Decimal(repr(v)) for v in mins]
    values = sic.replay(oracle, OFFICIAL).values
    assert values["fit0.extrema_ok"] == 1
    assert abs(values["fit0.thickness_um"] - Fraction("7.786351")) < Fraction(5, 100)


def test_cauchy_index_is_used(oracle):
    for item in oracle["single_angle_fits"][:2]:
        item["refractive_index"] = {"A": Decimal("2.5"), "B_um2": Decimal("0.1")}
    values = sic.replay(oracle, OFFICIAL).values
    fit = sic._fit(oracle["single_angle_fits"][0])[0]
    s2 = math.sin(math.radians(10)) ** 2
    xs = [math.sqrt((2.5 + 0.1 * (v / 1e4) ** 2) ** 2 - s2) * v for v in fit.nus]
    k = range(len(xs))
    xm, km = sum(xs) / len(xs), (len(xs) - 1) / 2
    d = 1e4 * sum((x - xm) * (i - km) for x, i in zip(xs, k)) / (2 * sum((x - xm) ** 2 for x in xs))
    assert abs(float(values["fit0.thickness_um"]) - d) < 1e-6
    assert "sic.joint_thickness_um" in values


def test_different_indices_for_one_wafer_leave_the_joint_unreplayed(task, oracle):
    oracle["single_angle_fits"][1]["refractive_index"] = {"A": Decimal("2.6")}
    got, report = verdicts(task, oracle)
    assert "sic.joint_thickness_um" in report.replay.gaps
    assert got["q3.sic_thickness_replayed"] == "gap"


def test_witness_absent_leaves_claims_unwitnessed(oracle):
    for item in oracle["single_angle_fits"]:
        for key in ("extrema_kind", "extrema_cm_minus_1", "refractive_index"):
            item.pop(key)
    report = score_path_report(oracle)
    assert report.oeval < 1
    values = run_replay(load_task(TASK), oracle)
    assert all(n in values.gaps for n in sic.DERIVED)
    assert all("absent" in values.gaps[f"fit{i}.thickness_um"] for i in range(4))


def score_path_report(data, records=False):
    return score_artifact(load_task(TASK), coerce_artifact(data), records=records)


HOSTILE = [None, True, "1598", [], {}, [None], ["x"] * 5, ["1e400"] * 5,
           [Decimal("NaN")] * 5, [Decimal("Infinity")] * 5, [Decimal("-1")] * 5, [Decimal(1598)] * 5,
           [Decimal(10) ** 300] * 5, [[Decimal(1)]] * 5, list(range(1000, 1005)), [Decimal(1000)] * 10000]


@pytest.mark.parametrize("bad", HOSTILE, ids=range(len(HOSTILE)))
def test_corrupted_extrema_give_gaps(task, oracle, bad):
    oracle["single_angle_fits"][0]["extrema_cm_minus_1"] = bad
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert "fit0.thickness_um" in report.gaps
    assert report.values["fit1.thickness_um"]       # the other items still replay


@pytest.mark.parametrize("field,bad", [
    ("refractive_index", None), ("refractive_index", Decimal(2)), ("refractive_index", {"A": "2.5"}),
    ("refractive_index", {"A": Decimal("0.5")}), ("refractive_index", {"A": Decimal("2.5"), "B_um2": Decimal(-99)}),
    ("refractive_index", {"A": Decimal("1e99")}), ("refractive_index", {"A": True}),
    ("extrema_kind", "maximum"), ("extrema_kind", None), ("extrema_kind", 1),
    ("angle_deg", Decimal(12)), ("angle_deg", "10"), ("sample", "GaN"), ("sample", None)])
def test_corrupted_fields_give_gaps(task, oracle, field, bad):
    oracle["single_angle_fits"][3][field] = bad
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert "fit3.thickness_um" in report.gaps


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(single_angle_fits="x"), lambda d: d.update(single_angle_fits=[1, 2, 3, 4]),
    lambda d: d.update(joint_thickness_summary=None), lambda d: d.pop("single_angle_fits"),
    lambda d: d["joint_thickness_summary"].append({"sample": "Si"}),
    lambda d: d["joint_thickness_summary"][0].update(sample=["Si"]),
    lambda d: d["single_angle_fits"].append(copy.deepcopy(d["single_angle_fits"][0]))])
def test_corrupted_structure_gives_gaps_not_crashes(task, oracle, mutate):
    mutate(oracle)
    report = run_replay(task, oracle)
    assert report.status == "ok"
    assert report.gaps


def test_duplicate_spectrum_leaves_the_joint_unreplayed(oracle):
    oracle["single_angle_fits"][1] = copy.deepcopy(oracle["single_angle_fits"][0])
    derived = sic.replay(oracle, OFFICIAL)
    assert "sic.joint_thickness_um" in derived.gaps
    assert "si.joint_thickness_um" in derived.values


# ------------------------------------------------------------------ promises

@given(st.permutations(range(4)), st.permutations(range(2)), st.randoms(use_true_random=False))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_list_order_carries_no_meaning(task, oracle, fit_order, joint_order, rnd):
    data = copy.deepcopy(oracle)
    data["single_angle_fits"] = [data["single_angle_fits"][i] for i in fit_order]
    data["joint_thickness_summary"] = [data["joint_thickness_summary"][j] for j in joint_order]
    for item in data["single_angle_fits"]:
        rnd.shuffle(item["extrema_cm_minus_1"])
    got, report = verdicts(task, data)
    assert all(got[g] == "pass" for g in REPLAY_GATES)
    assert score_path_data(data) == 1
    base = sic.replay(oracle, OFFICIAL).values
    values = report.replay.values
    assert values["sic.joint_thickness_um"] == base["sic.joint_thickness_um"]
    for new, old in enumerate(fit_order):
        assert values[f"fit{new}.thickness_um"] == base[f"fit{old}.thickness_um"]


@given(st.decimals(min_value=Decimal("2.0"), max_value=Decimal("4.0"), places=3))
@settings(max_examples=25, deadline=None)
def test_thickness_falls_as_the_index_rises(n):
    data = parse_file(ORACLE).data
    for item in data["single_angle_fits"]:
        item["refractive_index"] = {"A": n}
    higher = copy.deepcopy(data)
    for item in higher["single_angle_fits"]:
        item["refractive_index"] = {"A": n + Decimal("0.05")}
    lo, hi = sic.replay(data, OFFICIAL).values, sic.replay(higher, OFFICIAL).values
    for name in ("fit0.thickness_um", "si.joint_thickness_um", "sic.joint_thickness_um"):
        assert hi[name] < lo[name]


def test_deterministic():
    data = parse_file(ORACLE).data
    first = sic.replay(data, OFFICIAL)
    again = sic.replay(copy.deepcopy(data), sic.load_official(os.path.join(TASK_DIR, "data")))
    assert first == again


def test_time_cap_holds(task, oracle):
    """The largest witness the replay admits per item replays far inside the cap."""
    for item in oracle["single_angle_fits"]:
        item["extrema_cm_minus_1"] = [Decimal(400) + Decimal(k) * 18 for k in range(sic.MAX_EXTREMA)]
    start = time.perf_counter()
    report = run_replay(task, oracle)
    assert time.perf_counter() - start < 1.0
    assert report.status == "ok"
