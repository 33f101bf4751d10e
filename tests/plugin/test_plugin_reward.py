"""Reward API: ``mmverify.reward`` and ``reward_batch`` (serial and multi-process)."""
import json
import multiprocessing
import os
import subprocess
import sys

import pytest
from tests.helpers.taskfactory import SPEED_LIMIT, speed_task

import mmverify
from mmverify.reading.artifact import parse_file
from mmverify.pipeline.evaluate import score_artifact
from mmverify.plugin.reward import coerce_artifact, reward_batch
from mmverify.tasks import TaskLoadError, load_task

TID = "t-speed"


@pytest.fixture()
def anchors(tmp_path):
    speed_task(str(tmp_path / "anchors"), TID, gates=[SPEED_LIMIT])
    return speed_task(str(tmp_path / "anchors"), "t-other", band={"abs": "0.5"})


def art(speed=1.246266, pitch=0.4, handles=224, ratio=1.604793):
    return {"result": {"speed": speed, "pitch": pitch, "handles": handles, "ratio": ratio}}


def test_import_mmverify_stays_cheap_and_reward_is_lazy():
    code = ("import sys, mmverify; heavy = [m for m in ('sympy', 'numpy', 'jsonschema') if m in sys.modules]; "
            "assert not heavy, heavy; f = mmverify.reward; assert callable(f); "
            "from mmverify import reward; assert reward is f; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    with pytest.raises(AttributeError):
        mmverify.no_such_attribute  # noqa: B018


def test_reward_takes_a_path_bytes_or_a_dict_and_equals_the_report(anchors, tmp_path):
    oracle = os.path.join(anchors, TID, "oracle.json")
    raw = open(oracle, "rb").read()
    assert mmverify.reward(TID, oracle, anchors) == 1.0
    assert mmverify.reward(TID, raw, anchors) == 1.0
    assert mmverify.reward(TID, json.loads(raw), anchors) == 1.0
    slow = art(speed=1.2)
    expected = float(score_artifact(load_task(TID, anchors), coerce_artifact(slow)).oeval)
    assert 0 < expected < 1 and mmverify.reward(TID, slow, anchors) == expected


def test_bad_artifacts_are_zero_bad_calls_raise(anchors, tmp_path):
    assert mmverify.reward(TID, str(tmp_path / "absent.json"), anchors) == 0.0
    assert mmverify.reward(TID, b'{"result": ', anchors) == 0.0
    assert mmverify.reward(TID, {"result": {"speed": float("nan")}}, anchors) == 0.0
    assert mmverify.reward(TID, art(speed=1.5), anchors) == 0.0  # hard gate: 1.5 * 1.604793 > 2
    # schema: pitch >= 0; the violation zeroes pitch only (weight 1 of 4), unless the task is strict
    assert mmverify.reward(TID, art(pitch=-1), anchors) == 0.75
    assert mmverify.reward(TID, None, anchors) == 0.0
    with pytest.raises(TaskLoadError):
        mmverify.reward("no-such-task", art(), anchors)
    with pytest.raises(TypeError):
        mmverify.reward(TID, 42, anchors)


def _pairs(anchors):
    oracle = os.path.join(anchors, TID, "oracle.json")
    pairs = []
    for k in range(12):
        pairs.append((TID, art(speed=1.0 + k / 40)))          # some pass, some fail the gate
        pairs.append(("t-other", art(speed=1.0 + k / 50, pitch=0.4 + k / 100)))
    pairs += [(TID, oracle), (TID, b"not json"), ("t-other", open(oracle, "rb").read())]
    return pairs


def test_batch_matches_single_calls_in_input_order(anchors):
    pairs = _pairs(anchors)
    single = [mmverify.reward(t, a, anchors) for t, a in pairs]
    assert reward_batch(pairs, anchors) == single
    assert 0.0 in single and 1.0 in single and any(0 < r < 1 for r in single)
    assert reward_batch([], anchors) == []


def test_batch_applies_the_gate_multiplier(anchors):
    fast, ok = art(speed=1.5), art(speed=1.2)
    task = load_task(TID, anchors)
    closeness = score_artifact(task, coerce_artifact(fast), run_gates=False, ruleset="paper").oeval
    assert closeness == 1  # beyond the anchor: one-sided closeness is full ...
    assert reward_batch([(TID, fast), (TID, ok)], anchors)[0] == 0.0  # ... but infeasible


def test_batch_loads_each_task_once(anchors, monkeypatch):
    import mmverify.tasks

    calls = []
    real = mmverify.tasks.load_task

    def counting(task_id, anchors_dir=None):
        calls.append(task_id)
        return real(task_id, anchors_dir)

    monkeypatch.setattr(mmverify.tasks, "load_task", counting)
    reward_batch(_pairs(anchors), anchors)
    assert sorted(calls) == ["t-other", TID]


def test_batch_rejects_malformed_pairs(anchors):
    with pytest.raises(TypeError):
        reward_batch([(TID,)], anchors)
    with pytest.raises(TypeError):
        reward_batch([(7, art())], anchors)
    with pytest.raises(TaskLoadError):
        reward_batch([("no-such-task", art())], anchors)


def test_batch_with_two_processes_equals_serial(anchors):
    pairs = _pairs(anchors)
    serial = reward_batch(pairs, anchors)
    assert reward_batch(pairs, anchors, processes=2) == serial
    assert reward_batch(pairs, anchors, processes=2, start_method="spawn") == serial


def _reward_job(args):
    task_id, artifact, anchors = args
    return mmverify.reward(task_id, artifact, anchors)


def test_reward_is_safe_from_two_worker_processes(anchors):
    pairs = _pairs(anchors)
    jobs = [(t, a, anchors) for t, a in pairs]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parallel = pool.map(_reward_job, jobs, chunksize=3)
    assert parallel == [mmverify.reward(t, a, anchors) for t, a in pairs]


def test_parsed_artifacts_pass_through(anchors):
    oracle = parse_file(os.path.join(anchors, TID, "oracle.json"))
    assert mmverify.reward(TID, oracle, anchors) == 1.0


def test_one_bad_value_in_a_dict_is_one_zero_row_of_the_batch(anchors):
    import numpy as np

    good = art()
    cases = [dict(good, note=10 ** 5000), dict(good, note=[0] * 300_000), dict(good, note=np.float64("inf"))]
    got = reward_batch([(TID, good)] + [(TID, c) for c in cases] + [(TID, good)], anchors)
    assert got == [1.0, 0.0, 0.0, 0.0, 1.0]
    # a numpy float is a float: read as one, not an error
    assert mmverify.reward(TID, {"result": dict(good["result"], speed=np.float64(1.246266))}, anchors) == 1.0
