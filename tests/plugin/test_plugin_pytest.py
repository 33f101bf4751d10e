"""The pytest plugin, run through ``pytester``: contract items for a maintainer's
own anchors folder, and silence without the option."""
import json
import os

import pytest
from tests.helpers.taskfactory import paper, speed_task

from mmverify.plugin import contracts
from mmverify.tasks import load_task

pytest_plugins = ["pytester"]

TID = "t-speed"
GATES = [{"id": "speed_limit", "form": "identity", "level": "B", "severity": "hard",
          "expr": "speed * ratio <= 2", "vars": {"speed": "result.speed", "ratio": "result.ratio"},
          "description": "every handle moves at most 2 m/s"}]
PER_TASK = ["loads", "oracle_validates", "gates_pass_on_oracle", "oracle_scores_one", "one_sided[speed]",
            "one_sided[pitch]", "selfcheck_no_leak"]


def good_anchors(folder):
    speed_task(folder, TID, gates=GATES, extra_papers=[paper("P2", {"speed": "1.31", "pitch": "0.45"},
                                                             excluded={"handles": "figure_only"})])
    return speed_task(folder, "t-two", band={"abs": "0.2"})


def edit(folder, tid, name, change):
    file = os.path.join(folder, tid, name)
    data = json.load(open(file))
    change(data)
    json.dump(data, open(file, "w"))


def test_contract_items_pass_on_good_anchors(pytester):
    anchors = good_anchors(str(pytester.path / "my_anchors"))
    result = pytester.runpytest("--mmverify-anchors", anchors, "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2 * len(PER_TASK))
    text = result.stdout.str()
    for name in PER_TASK:
        assert f"mmverify-anchors::{TID}::{name} PASSED" in text
    assert "mmverify-anchors::t-two::one_sided[pitch] PASSED" in text
    assert "collected 14 items" in text


def test_nothing_happens_without_the_option(pytester):
    good_anchors(str(pytester.path / "my_anchors"))
    pytester.makepyfile(test_other="def test_one():\n    assert True\n")
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "mmverify-anchors" not in result.stdout.str()


def test_ini_option_relative_to_the_ini_file_and_k_selection(pytester):
    good_anchors(str(pytester.path / "anchors"))
    pytester.makeini("[pytest]\nmmverify_anchors = anchors\n")
    result = pytester.runpytest("-k", "one_sided and t-speed", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_a_broken_anchors_folder_fails_the_right_contracts(pytester):
    anchors = good_anchors(str(pytester.path / "anchors"))
    # t-speed: the oracle no longer reproduces its own paper, and breaks the speed limit
    edit(anchors, TID, "oracle.json", lambda d: d["result"].update(speed=1.5))
    # t-two: task.json is malformed (a direction that does not exist)
    edit(anchors, "t-two", "task.json", lambda d: d["metrics"][0].update(direction="sideways"))
    result = pytester.runpytest("--mmverify-anchors", anchors, "-v", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        f"*{TID}::gates_pass_on_oracle FAILED*",
        f"*{TID}::oracle_scores_one FAILED*",
        "*t-two::loads FAILED*",
    ])
    result.stdout.fnmatch_lines(["*hard gate(s) fail on the oracle*", "*speed_limit*"])
    result.stdout.fnmatch_lines(["*t-two*task.json: metrics/0/direction*"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 3 and result.ret == 1


def test_a_metric_removed_for_everyone_is_skipped_at_the_task(pytester):
    anchors = str(pytester.path / "anchors")
    speed_task(anchors, TID)
    edit(anchors, TID, "task.json", lambda d: d["metrics"][0].update(comparable=False,
                                                                        comparable_reason="scales differ"))
    result = pytester.runpytest("--mmverify-anchors", anchors, "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(PER_TASK) - 1, skipped=1)
    result.stdout.fnmatch_lines([f"SKIPPED*{TID}*task.json*speed: no paper votes on it*scales differ*"])


def test_missing_anchors_folder_is_a_usage_error(pytester):
    result = pytester.runpytest("--mmverify-anchors", "nowhere", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*anchors folder not found*"])


def test_empty_anchors_folder_fails_an_index_item(pytester):
    os.makedirs(pytester.path / "empty")
    result = pytester.runpytest("--mmverify-anchors", "empty", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*not an anchors folder*"])


# ---------------------------------------- the contract functions themselves

def test_one_sided_contract_catches_a_two_sided_kernel(tmp_path, monkeypatch):
    anchors = good_anchors(str(tmp_path / "anchors"))
    task = load_task(TID, anchors)
    metric = task.metric("speed")
    assert contracts.check_one_sided(task, metric)
    from dataclasses import replace

    from mmverify.scoring.kernels import DIRECTIONS

    # the old symmetric scoring, registered for the one-sided directions: overshoot costs
    for name in ("higher_is_better", "lower_is_better"):
        monkeypatch.setitem(DIRECTIONS, name, replace(DIRECTIONS["target_value"], name=name, one_sided=True))
    task = replace(task)  # a fresh task object: its scoring plan takes the kernels registered now
    with pytest.raises(contracts.ContractFailure, match="not one-sided"):
        contracts.check_one_sided(task, metric)


def test_leak_contract_catches_a_leaky_self_check(tmp_path, monkeypatch):
    anchors = good_anchors(str(tmp_path / "anchors"))
    task = load_task(TID, anchors)
    assert "scanned" in contracts.check_selfcheck_no_leak(task)
    from mmverify.plugin import selfcheck

    real = selfcheck.self_check
    monkeypatch.setattr(selfcheck, "self_check", lambda t, a, d=None, **kw: dict(real(t, a, d, **kw),
                                                                            hint="aim for 1.246266"))
    with pytest.raises(contracts.ContractFailure, match="1.246266"):
        contracts.check_selfcheck_no_leak(task)


def test_removed_metric_is_skipped_not_failed(tmp_path):
    anchors = str(tmp_path / "anchors")
    speed_task(anchors, TID)
    edit(anchors, TID, "task.json", lambda d: d["metrics"][0].update(comparable=False,
                                                                        comparable_reason="test"))
    task = load_task(TID, anchors)
    with pytest.raises(contracts.ContractSkip):
        contracts.check_one_sided(task, task.metric("speed"))
