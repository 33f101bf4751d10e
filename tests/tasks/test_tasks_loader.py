"""Task loading: malformed tasks are rejected naming file, field and problem."""
import json
import os

import pytest

from mmverify.tasks import TaskLoadError, load_task

from tests.helpers.taskfactory import speed_task


def reload(anchors, tid="t-speed"):
    from mmverify.tasks.load import _load_task_cached

    _load_task_cached.cache_clear()
    return load_task(tid, anchors)


def edit(anchors, fn, tid="t-speed", name="task.json"):
    f = os.path.join(anchors, tid, name)
    data = json.load(open(f))
    fn(data)
    json.dump(data, open(f, "w"))


def test_good_task_loads(tmp_path):
    t = reload(speed_task(str(tmp_path)))
    assert [m.id for m in t.metrics] == ["speed", "pitch", "handles"]
    assert t.oracle_papers[0].paper_id == "P1"


@pytest.mark.parametrize("mutate,field,problem", [
    (lambda d: d["metrics"].append(dict(d["metrics"][0])), "metrics", "duplicate metric id"),
    (lambda d: d["metrics"][0].update(direction="up"), "metrics/0/direction", "is not one of"),
    (lambda d: d["metrics"][0].pop("band"), "metrics/0", "'band' is a required property"),
    (lambda d: d["panel"][0]["values"].pop("pitch"), "panel/0 (P1)/excluded", "neither reported nor excluded"),
    (lambda d: d["panel"][0].update(excluded={"pitch": "lost_it"}), "panel/0/excluded/pitch", "is not one of"),
    (lambda d: d["panel"][0]["values"].update(bogus="1"), "panel/0 (P1)", "unknown metric id 'bogus'"),
    (lambda d: d["panel"][0].update(oracle=False), "panel", "no paper is marked oracle"),
    (lambda d: d["metrics"][0].update(path="result.nope"), "result.nope", "does not describe"),
    (lambda d: d["metrics"][0].update(unit="km/h"), "result.speed", "differs from metric"),
    (lambda d: d["panel"][0]["values"].update(speed="fast"), "panel/0 (P1)/values/speed", "not a decimal"),
    (lambda d: d.update(headline=False), "(top level)", "'headline_reason' is a required property"),
])
def test_malformed_task_is_rejected_with_file_field_problem(tmp_path, mutate, field, problem):
    anchors = speed_task(str(tmp_path))
    edit(anchors, mutate)
    with pytest.raises(TaskLoadError) as exc:
        reload(anchors)
    assert exc.value.file.endswith("task.json") or exc.value.file.endswith("schema.json")
    assert exc.value.field == field
    assert problem in exc.value.problem


def test_zero_anchor_needs_absolute_band(tmp_path):
    anchors = speed_task(str(tmp_path))
    edit(anchors, lambda d: d["panel"][0]["values"].update(pitch="0"))
    with pytest.raises(TaskLoadError, match="absolute band"):
        reload(anchors)
    edit(anchors, lambda d: d["metrics"][1].update(band={"abs": "0.05"}))
    reload(anchors)


def test_metric_path_the_oracle_lacks(tmp_path):
    anchors = speed_task(str(tmp_path))
    edit(anchors, lambda d: d["result"].pop("pitch"), name="oracle.json")
    with pytest.raises(TaskLoadError) as exc:
        reload(anchors)
    assert exc.value.field == "metrics/pitch/path" and "oracle artifact lacks" in exc.value.problem


def test_schema_without_unit_is_a_task_defect(tmp_path):
    anchors = speed_task(str(tmp_path))
    edit(anchors, lambda d: d["properties"]["result"]["properties"]["speed"].pop("x-unit"),
         name="artifact.schema.json")
    with pytest.raises(TaskLoadError, match="no x-unit"):
        reload(anchors)


def test_unknown_task_id_and_traversal(tmp_path):
    anchors = speed_task(str(tmp_path))
    with pytest.raises(TaskLoadError):
        reload(anchors, "nope")
    with pytest.raises(TaskLoadError):
        reload(anchors, "../t-speed")


def test_duplicate_keys_in_task_json(tmp_path):
    anchors = speed_task(str(tmp_path))
    f = os.path.join(anchors, "t-speed", "task.json")
    text = open(f).read().replace('"suite": "CUMCM"', '"suite": "CUMCM", "suite": "MCM"', 1)
    open(f, "w").write(text)
    with pytest.raises(TaskLoadError, match="duplicate key"):
        reload(anchors)
