"""Fuzzing the agent-side entry points (mmverify.plugin): a reward function an
RL harness calls on every rollout must never raise on artifact content, must
stay in [0, 1] and must equal the full report's O-EVAL; the self-check an
agent may call on itself must never raise and never leak an anchor value.

``MMVERIFY_FUZZ_EXAMPLES=N`` runs long, as in test_fuzz_pipeline.py.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.hostile import dump
from tests.helpers.hostile.strategies import fuzz_settings, json_values, mutated_oracle, planted
from mmverify.reading.artifact import ArtifactError, parse_bytes
from mmverify.tasks import load_all

reward_mod = pytest.importorskip("mmverify.plugin.reward")
selfcheck = pytest.importorskip("mmverify.plugin.selfcheck")

TASKS = load_all()
cases = st.one_of(mutated_oracle(TASKS).map(lambda c: (c[0], c[1])), planted(TASKS))


@fuzz_settings(30)
@given(cases, st.sampled_from(["bytes", "dict"]))
def test_reward_is_total_and_equals_the_report(case, form):
    task, data = case
    raw = dump(data).encode("utf-8")
    if form == "bytes":
        artifact = raw
    else:
        try:
            artifact = parse_bytes(raw).data     # a parsed dict (Decimals), as a harness might pass
        except ArtifactError:
            artifact = raw
    r = reward_mod.reward(task.id, artifact)
    assert isinstance(r, float) and 0.0 <= r <= 1.0
    report = reward_mod.score(task.id, artifact)
    assert r == (float(report.oeval) if report.oeval is not None else 0.0)


@fuzz_settings(20)
@given(st.sampled_from(TASKS), json_values)
def test_reward_on_arbitrary_python_values(task, value):
    artifact = value if isinstance(value, dict) else {"value": value}
    r = reward_mod.reward(task.id, artifact)
    assert 0.0 <= r <= 1.0


@fuzz_settings(30)
@given(cases)
def test_self_check_is_total_and_leaks_nothing(case):
    task, data = case
    raw = dump(data).encode("utf-8")
    out = selfcheck.self_check(task.id, raw)
    assert out["status"] in ("ok", "invalid", "infeasible", "error", "missing")
    json.dumps(out, allow_nan=False).encode("utf-8")
    try:
        parsed = parse_bytes(raw).data
    except ArtifactError:
        return
    assert not selfcheck.find_leaks(out, task, parsed)
