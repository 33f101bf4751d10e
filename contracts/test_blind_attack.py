"""A blind attacker must not earn a meaningful score.

The cheap CI version of ``benchmarks/blind_attack.py``: for every bundled task,
artifacts built from public material only (round mid-range values and numbers
from the statement, repaired against the hard gates as ``gate`` output
suggests) are scored once each. Targets from the scores-that-cannot-be-gamed
work: no task above 0.15, mean at most 0.05. The full attack (with extreme
claims backed off by bisection) is in the benchmark.
"""
import pytest

from mmverify.adversary import attack_task
from mmverify.tasks import load_all

MAX_TASK = 0.15
MAX_MEAN = 0.05


@pytest.fixture(scope="module")
def results():
    return {t.id: attack_task(t, strategies=("mid", "statement")) for t in load_all()}


def test_no_task_pays_a_blind_attacker(results):
    over = {tid: float(r.best.score) for tid, r in results.items() if r.best.score > MAX_TASK}
    assert not over, f"blind attack scores above {MAX_TASK}: {over}"


def test_mean_blind_score_is_low(results):
    mean = sum(float(r.best.score) for r in results.values()) / len(results)
    assert mean <= MAX_MEAN


def test_the_attack_really_produces_scored_artifacts(results):
    # the contract means something only if the attacker gets past schema and gates somewhere
    scored = [tid for tid, r in results.items() if any(a.status == "scored" for a in r.attempts)]
    assert len(scored) >= 12, scored
