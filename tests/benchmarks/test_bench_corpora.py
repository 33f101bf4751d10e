"""The throughput benchmark's corpora are what their figures say: the new
artifacts all differ and keep the oracles' verdicts; the failing ones each
break a hard gate, so the reward's all-pass check cannot answer for them."""
import os

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")


@pytest.fixture(scope="module")
def common():
    import sys

    sys.path.insert(0, BENCH)
    try:
        import bench_common
    finally:
        sys.path.remove(BENCH)
    return bench_common


@pytest.fixture(scope="module")
def oracles(common):
    return common.load_oracles()


def test_new_artifacts_differ_and_keep_the_verdicts(common, oracles):
    from mmverify.gates import evaluate_gates

    corpus = common.varied(oracles, 2)
    assert len(corpus) == 2 * len(oracles)
    assert len({art.sha256 for _, art, _ in corpus} | {art.sha256 for _, art, _ in oracles}) == 3 * len(oracles)
    from mmverify.pipeline.validate import is_valid

    by_task = {task.id: art for task, art, _ in oracles}
    for task, art, _ in corpus[len(oracles):]:
        assert is_valid(task.artifact_schema, art.data), task.id
    for task, art, _ in corpus[:len(oracles)]:
        if task.replay:
            continue   # (the verdicts of replay tasks are the oracle's too; their replays are slow)
        want = [(i.name, i.verdict) for i in evaluate_gates(task, by_task[task.id].data).instances]
        assert [(i.name, i.verdict) for i in evaluate_gates(task, art.data).instances] == want


def test_failing_artifacts_break_a_hard_gate_on_every_task(common, oracles):
    from mmverify.pipeline.evaluate import reward_of
    from mmverify.gates import evaluate_gates
    from mmverify.gates.quick import hard_gates_pass
    from mmverify.replay import gate_view, run_replay

    corpus = common.failing(oracles)
    assert {t.id for t, _, _ in corpus} == {t.id for t, _, _ in oracles}
    for task, art, _ in corpus:
        replayed = run_replay(task, art.data)
        assert evaluate_gates(task, art.data, replayed, hard_only=True).hard_failures
        assert hard_gates_pass(task, gate_view(art.data, replayed), replayed) is None
        assert reward_of(task, art) == 0.0
