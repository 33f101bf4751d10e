"""Contracts over every task with a replay: where a replay can decide a value,
the replay is the judge.

* no gate that reads a replayed value is soft (the loader refuses one);
* every oracle replays exactly: each gate reading a replayed value passes on it;
* a claim moved beyond its gate's written tolerance, in either direction, is
  refuted (a claim gate: that metric scores 0) or rules the answer out (a hard
  gate: the task scores 0), under both rulesets, and the verdict-only reward
  agrees with the report;
* the replay is deterministic.

They hold for any task a user adds with a replay, not only the bundled ones.
"""
import copy
import json
from decimal import Decimal

import pytest

from mmverify.reading import paths
from mmverify.adversary.attack import to_json
from mmverify.reading.artifact import parse_bytes, parse_file
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.gates import compile_gates, evaluate_gates
from mmverify.replay import run_replay
from mmverify.scoring.rules import RULESETS
from mmverify.tasks import default_anchors_dir, load_index, load_task

ANCHORS = default_anchors_dir()
REPLAYED = [t["id"] for t in load_index(ANCHORS) if load_task(t["id"], ANCHORS).replay]


def _replay_gates(task):
    return [g for g in compile_gates(task) if any(p.segments[0] == "$replay" for p in g.inputs)]


def _moved_claims(task):
    """(gate, claimed path) of every replay identity ``claimed == replayed`` with a
    tolerance that judges a scalar artifact path."""
    for g in _replay_gates(task):
        if g.form != "identity" or g.identity.relation != "==" or not g.verifies:
            continue
        for p in g.verifies:
            if not p.is_list:
                yield g, p


@pytest.mark.parametrize("tid", REPLAYED)
def test_no_soft_gate_reads_a_replayed_value(tid):
    task = load_task(tid, ANCHORS)
    assert all(g.severity in ("hard", "claim") for g in _replay_gates(task))


@pytest.mark.parametrize("tid", REPLAYED)
def test_every_oracle_replays_exactly(tid):
    task = load_task(tid, ANCHORS)
    report = evaluate_gates(task, parse_file(task.oracle_path).data)
    replay_ids = {g.id for g in _replay_gates(task)}
    bad = [(i.name, i.verdict, i.detail) for i in report.instances if i.gate_id in replay_ids and i.verdict != "pass"]
    # a replay gate whose input the oracle leaves out (an optional witness) is a gap no score reads
    bad = [b for b in bad if not (b[1] == "gap" and "$replay" in b[2])]
    assert not bad, bad
    assert report.replay is None or report.replay.status == "ok", report.replay.detail


@pytest.mark.parametrize("tid", REPLAYED)
def test_replay_is_deterministic(tid):
    task = load_task(tid, ANCHORS)
    data = parse_file(task.oracle_path).data
    assert run_replay(task, data).values == run_replay(task, data).values


@pytest.mark.parametrize("tid", REPLAYED)
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_a_claim_beyond_its_tolerance_is_refuted_or_infeasible(tid, ruleset):
    task = load_task(tid, ANCHORS)
    oracle = json.loads(open(task.oracle_path, encoding="utf-8").read(), parse_float=Decimal, parse_int=Decimal)
    for gate, path in _moved_claims(task):
        value = paths.get(oracle, path)
        if type(value) is not Decimal:
            continue
        tol = gate.tolerance_text and Decimal(gate.tolerance_text) or Decimal(0)
        step = max(tol * 3, abs(value) * Decimal("0.05"), Decimal("0.001"))
        for moved in (value + step, value - step):
            art = copy.deepcopy(oracle)
            paths.put(art, path, moved)
            parsed = parse_bytes(to_json(art).encode())
            rep = score_artifact(task, parsed, ruleset=ruleset, records=True)
            assert reward_of(task, parsed, ruleset) == (float(rep.oeval) if rep.oeval is not None else 0.0)
            if rep.status != "scored":
                continue            # ruled out (a hard gate, the schema): the whole task scores 0
            if gate.severity == "hard":
                # a hard gate reading this claim passed only if another value moved with it: impossible here
                pytest.fail(f"{tid}: {path.text} moved to {moved} beyond hard gate {gate.id}'s tolerance scored")
            judged = {m.path: m for m in rep.panel.metrics}
            if path.text in judged:
                assert all(pm.r == 0 for pm in judged[path.text].per_paper if pm.r is not None), \
                    f"{tid}: {path.text} moved to {moved} still scores under {ruleset}"
