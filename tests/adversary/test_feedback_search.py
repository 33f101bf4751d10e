"""The score-feedback search: it spends no more scores than its budget, never
ends below where it started, moves only what raised the score, and is
deterministic; on a task whose metrics nothing couples it climbs."""
from __future__ import annotations

import json

from mmverify.adversary import attack_task
from mmverify.adversary import to_json
from mmverify.adversary.feedback import climb
from mmverify.reading.artifact import from_python, parse_bytes
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.tasks import load_task

TENNIS = "mcm-2024-c-tennis-momentum"


def _start(task):
    return attack_task(task, strategies=("mid",)).best.artifact


def test_the_search_keeps_its_budget_and_climbs():
    task = load_task(TENNIS)
    start = _start(task)
    frozen = json.dumps(start, default=str, sort_keys=True)
    found = climb(task, start, budget=300)
    assert json.dumps(start, default=str, sort_keys=True) == frozen      # the start is left alone
    assert found.calls <= 300
    assert found.start == reward_of(task, from_python(start))
    assert found.final == reward_of(task, from_python(found.artifact)) >= found.start
    assert found.final > found.start and found.moved       # tennis: numbers nothing couples pay one by one
    assert all(before != after for _path, before, after in found.moved)


def test_the_search_is_deterministic():
    task = load_task(TENNIS)
    a, b = climb(task, _start(task), budget=150), climb(task, _start(task), budget=150)
    assert (a.final, a.calls, a.moved) == (b.final, b.calls, b.moved)


def test_it_reads_only_the_scores_it_is_given():
    task = load_task(TENNIS)
    seen = []

    def flat(data):
        seen.append(1)
        return 0.25          # a reward that never moves: nothing is worth keeping
    found = climb(task, _start(task), budget=40, score=flat)
    assert found.calls == len(seen) <= 40 and found.final == found.start == 0.25 and not found.moved


def test_the_final_artifact_is_what_the_report_scores():
    task = load_task(TENNIS)
    found = climb(task, _start(task), budget=120)
    report = score_artifact(task, parse_bytes(to_json(found.artifact).encode()))
    assert float(report.oeval) == found.final
