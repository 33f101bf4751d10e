"""The bundled blind attacker: it reads only public material, its generic
families make a fixed number of seeded attempts, and its expected best of n is
the exact order statistic."""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.adversary import CLASSIC, STRATEGIES, Attempt, TaskAttack, attack_task, to_json
from mmverify.adversary.families import STRUCTURAL_FAMILIES, VALUE_FAMILIES
from mmverify.tasks import load_task

TASK = "mcm-2025-a-stair-wear"    # scored attempts, enum labels, gates that print constants; no replay (a replay zeroes blind attempts)
ATTEMPTS = 3


def _scrambled(task, folder):
    """``task`` with every panel value and band changed and no oracle artifact:
    what an attacker must not be able to see."""
    def value(v):
        if isinstance(v, Fraction):
            return v * 3 + 1
        if isinstance(v, tuple):
            return tuple(value(x) for x in v)
        return v
    panel = tuple(replace(p, values={k: value(v) for k, v in p.values.items()}) for p in task.panel)
    metrics = tuple(replace(m, band=replace(m.band, value=m.band.value * 5) if m.band else None)
                    for m in task.metrics)
    (folder / "oracle.json").write_text("not an artifact", encoding="utf-8")
    return replace(task, panel=panel, metrics=metrics, directory=str(folder))


@pytest.fixture(scope="module")
def task():
    return load_task(TASK)


@pytest.fixture(scope="module")
def attack(task):
    return attack_task(task, attempts=ATTEMPTS)


def test_the_attacker_never_reads_panel_bands_or_oracle(task, attack, tmp_path):
    folder = tmp_path / task.id
    shutil.copytree(task.directory, folder)
    blind = attack_task(_scrambled(task, folder), attempts=ATTEMPTS)
    assert [(a.strategy, a.variant, to_json(a.artifact)) for a in blind.attempts] == \
           [(a.strategy, a.variant, to_json(a.artifact)) for a in attack.attempts]
    # the scrambled panel really changes the scores, so the equality above is not vacuous
    assert [a.score for a in blind.attempts] != [a.score for a in attack.attempts]


def test_each_generic_family_makes_the_fixed_number_of_attempts(attack):
    count = {s: sum(a.strategy == s for a in attack.attempts) for s in STRATEGIES}
    assert all(count[s] == ATTEMPTS for s in VALUE_FAMILIES), count
    assert all(1 <= count[s] <= ATTEMPTS for s in STRUCTURAL_FAMILIES), count
    assert all(count[s] >= 1 for s in CLASSIC), count


def test_the_attack_is_deterministic(task, attack):
    again = attack_task(task, attempts=ATTEMPTS)
    assert [to_json(a.artifact) for a in again.attempts] == [to_json(a.artifact) for a in attack.attempts]
    assert [a.oeval for a in again.attempts] == [a.oeval for a in attack.attempts]


def test_omit_optional_drops_what_is_not_required_or_scored(task, attack):
    required = set(task.artifact_schema.get("required") or ())
    scored = {m.path.text.split(".")[0].split("[")[0] for m in task.metrics}
    for a in attack.attempts:
        if a.strategy == "omit_optional":
            assert set(a.artifact) <= required | scored


def test_unknown_strategy_is_refused(task):
    with pytest.raises(ValueError, match="unknown strategies"):
        attack_task(task, strategies=("mid", "oracle"))


def _result(scores):
    return TaskAttack("t", tuple(Attempt("mid", i, "scored", s, {}) for i, s in enumerate(scores)))


def test_expected_best_is_the_mean_over_every_draw():
    scores = [Fraction(k, 7) for k in (0, 3, 3, 1, 6)]
    result = _result(scores)
    for n in range(1, 6):
        draws = list(itertools.combinations(scores, n))
        assert result.expected_best(n) == sum(max(d) for d in draws) / len(draws)
    assert result.expected_best(9) == max(scores)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fractions(min_value=0, max_value=1), min_size=1, max_size=30))
def test_expected_best_grows_from_the_mean_to_the_best(scores):
    result = _result(scores)
    values = [result.expected_best(n) for n in range(1, len(scores) + 2)]
    assert values[0] == result.mean
    assert all(a <= b for a, b in zip(values, values[1:]))
    assert values[-1] == result.best.score


def test_attack_command_prints_the_per_attempt_columns(tmp_path):
    argv = [sys.executable, "-m", "mmverify", "attack", "--task", TASK, "--attempts", "2",
            "--strategy", "uniform", "--strategy", "gate_constants", "--json", "--save", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    row = out["tasks"][0]
    assert row["artifacts"] == 4 and row["strategy"] in ("uniform", "gate_constants")
    assert row["mean_per_attempt"] <= row["best_of_5"] <= row["best_oeval"]
    assert out["mean_best_of_20"] == row["best_of_20"]
    assert (tmp_path / f"{TASK}_attack.json").is_file()
