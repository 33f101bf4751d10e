"""A blind attacker must not earn a meaningful score.

The cheap CI version of ``benchmarks/blind_attack.py``: for every bundled task,
artifacts built from public material only (round mid-range values and numbers
from the statement, repaired against the hard gates as ``gate`` output
suggests) are scored once each. Targets from the scores-that-cannot-be-gamed
work: no task above 0.15, mean at most 0.05. The full attack (with extreme
claims backed off by bisection, and every generic family at its full number of
attempts) is in the benchmark.

The second part runs every generic family with a few seeded attempts on every
task whose gate repair is quick. The best of many seeded guesses grows with
their number, so its targets are the same two figures at a fixed number of
attempts: the expected best of 5 attempts drawn at random from the task's
(exact, over all its attempts), at most 0.15 on every task and 0.05 on average.
"""
import pytest

from mmverify.adversary import attack_task
from mmverify.adversary.attack import capped_attempts
from mmverify.adversary.families import STRUCTURAL_FAMILIES, VALUE_FAMILIES
from mmverify.tasks import load_all

MAX_TASK = 0.15
MAX_MEAN = 0.05

GENERIC = VALUE_FAMILIES + STRUCTURAL_FAMILIES
GENERIC_ATTEMPTS = 8
DRAWN = 5          # the attempts an attacker is taken to make (the first part makes 2 to 6 per task)


@pytest.fixture(scope="module")
def results():
    return {t.id: attack_task(t, strategies=("mid", "statement")) for t in load_all()}


@pytest.fixture(scope="module")
def generic():
    # a task whose repair is too slow for GENERIC_ATTEMPTS (the attacker caps it) is left to the benchmark
    return {t.id: attack_task(t, strategies=GENERIC, attempts=GENERIC_ATTEMPTS) for t in load_all()
            if capped_attempts(t, GENERIC_ATTEMPTS) == GENERIC_ATTEMPTS}


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


def test_no_task_pays_the_generic_families(generic):
    over = {tid: round(float(r.expected_best(DRAWN)), 3) for tid, r in generic.items()
            if r.expected_best(DRAWN) > MAX_TASK}
    assert not over, f"expected best of {DRAWN} generic attempts above {MAX_TASK}: {over}"


def test_mean_generic_score_is_low(generic):
    mean = sum(float(r.expected_best(DRAWN)) for r in generic.values()) / len(generic)
    assert mean <= MAX_MEAN, f"mean expected best of {DRAWN} generic attempts {mean:.3f}"


def test_the_generic_families_really_produce_scored_artifacts(generic):
    assert len(generic) >= 17, sorted(generic)
    scored = [tid for tid, r in generic.items() if any(a.status == "scored" for a in r.attempts)]
    assert len(scored) >= 12, scored
