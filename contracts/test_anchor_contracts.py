"""Contracts over the bundled anchors: every oracle scores exactly 1.0 against
its own oracle paper, validates against its schema, and broken copies of it
are rejected naming the field."""
import copy
import os
from decimal import Decimal

import pytest

from mmverify.reading import paths
from mmverify.reading.artifact import from_python, parse_file
from mmverify.pipeline.evaluate import score_artifact
from mmverify.tasks import default_anchors_dir, load_index, load_task, schema_at
from mmverify.pipeline.validate import validate_artifact

ANCHORS = default_anchors_dir()
INDEX = load_index(ANCHORS)
IDS = [t["id"] for t in INDEX]


def present(tid):
    if not os.path.exists(os.path.join(ANCHORS, tid, "task.json")):
        pytest.skip(f"anchors/{tid} not written yet")
    return load_task(tid, ANCHORS)


def test_index_lists_the_eighteen_contest_tasks():
    assert len(IDS) == 18 and len(set(IDS)) == 18
    assert {t["suite"] for t in INDEX} == {"CUMCM", "MCM"}
    assert {t["year"] for t in INDEX} == {2023, 2024, 2025}


def test_every_indexed_task_is_present():
    missing = [t for t in IDS if not os.path.exists(os.path.join(ANCHORS, t, "task.json"))]
    assert not missing, f"tasks in index.json without a folder: {missing}"


@pytest.mark.parametrize("tid", IDS)
def test_index_agrees_with_task(tid):
    task = present(tid)
    entry = next(t for t in INDEX if t["id"] == tid)
    assert (entry["suite"], entry["year"], entry["problem"], entry["headline"]) == \
        (task.suite, task.year, task.problem, task.headline)


@pytest.mark.parametrize("tid", IDS)
def test_oracle_scores_exactly_one_against_its_oracle_paper(tid):
    task = present(tid)
    oracle = parse_file(task.oracle_path)
    report = score_artifact(task, oracle)
    assert report.status == "scored", report.error
    oracle_ids = {p.paper_id for p in task.oracle_papers}
    for paper in report.panel.papers:
        if paper.paper_id in oracle_ids:
            assert paper.r == 1, f"{tid}: oracle paper {paper.paper_id} R = {paper.r}"
    if all(p.oracle for p in task.panel):
        assert report.oeval == 1


@pytest.mark.parametrize("tid", IDS)
def test_oracle_validates_against_its_schema(tid):
    task = present(tid)
    assert validate_artifact(task.artifact_schema, parse_file(task.oracle_path).data) == ()


@pytest.mark.parametrize("tid", IDS)
def test_every_metric_field_has_a_unit(tid):
    task = present(tid)
    for m in task.metrics:
        sub = schema_at(task.artifact_schema, m.path)
        assert sub is not None, m.id
        if m.direction != "exact_value" or sub.get("type") in ("number", "integer"):
            assert "x-unit" in sub, f"{tid}: {m.id} reads {m.path.text} without x-unit"


def _bounded_numeric_field(task, data):
    """A scalar numeric field with a unit and a schema bound that the oracle holds:
    metric fields first, then any other field of the schema."""
    candidates = [m.path for m in task.metrics if not m.is_list]

    def walk(node, segs):
        if not isinstance(node, dict):
            return
        for name, sub in sorted(node.get("properties", {}).items()):
            here = segs + (name,)
            candidates.append(paths.FieldPath(".".join(here), here))
            walk(sub, here)

    walk(task.artifact_schema, ())
    for path in candidates:
        sub = schema_at(task.artifact_schema, path)
        if not sub or "x-unit" not in sub or isinstance(paths.get(data, path), paths.Missing):
            continue
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key in sub:
                return path, key, Decimal(str(sub[key]))
    return None


@pytest.mark.parametrize("tid", IDS)
def test_broken_copies_of_the_oracle_are_rejected_naming_the_field(tid):
    task = present(tid)
    data = parse_file(task.oracle_path).data
    required = task.artifact_schema.get("required", [])
    assert required, f"{tid}: the artifact schema requires nothing"
    broken = copy.deepcopy(data)
    broken.pop(required[0])
    errors = validate_artifact(task.artifact_schema, broken)
    assert any(required[0] in e.problem for e in errors)

    found = _bounded_numeric_field(task, data)
    if found is None:
        pytest.fail(f"{tid}: no unit-pinned field with a schema range in the oracle")
    path, key, bound = found
    bad = bound - 1 if "inimum" in key else bound + 1
    broken = copy.deepcopy(data)
    parent = paths.parent(broken, path)
    parent[path.segments[-1]] = bad
    errors = validate_artifact(task.artifact_schema, broken)
    assert any(e.field == path.text for e in errors), errors
    # local by default: listed with its effect, never a pass for the broken value
    report = score_artifact(task, from_python(broken))
    listed = [e for e in report.schema_errors if e.field == path.text]
    assert listed and listed[0].effect["kind"] == "local", report.schema_errors
    assert report.status in ("scored", "infeasible")
    for m in report.panel.metrics:
        if m.path == path.text:
            assert m.read_status == "missing" and all(pm.r in (None, 0) for pm in m.per_paper)
    # all-or-nothing on request
    strict = score_artifact(task, from_python(broken), strict_schema=True)
    assert strict.status == "invalid" and strict.oeval == 0


@pytest.mark.parametrize("tid", IDS)
def test_readme_one_sided_review_is_current(tid):
    """Each task README carries the one-sided review generated from its anchors
    (`mmverify audit --review --write-readmes` rewrites it)."""
    import os

    from mmverify.gates.review import readme_with_review

    task = present(tid)
    text = open(os.path.join(task.directory, "README.md"), encoding="utf-8").read()
    assert readme_with_review(text, task) == text, f"{tid}: README one-sided review is stale"


@pytest.mark.parametrize("tid", IDS)
def test_readme_specification_is_current(tid):
    """The part of each task README that restates task.json (metrics, bands,
    gates, severities, tolerances, rules) is generated from it and current
    (`mmverify audit --review --write-readmes` rewrites it); no hand-written
    metric or gate table restates it beside the generated one."""
    import os
    import re

    from mmverify.gates.spec_readme import BEGIN, END, readme_with_spec

    task = present(tid)
    text = open(os.path.join(task.directory, "README.md"), encoding="utf-8").read()
    assert BEGIN in text and END in text, f"{tid}: README has no generated specification"
    assert readme_with_spec(text, task) == text, f"{tid}: README specification is stale (drift from task.json)"
    outside = text.split(BEGIN)[0] + text.split(END, 1)[1]
    assert not re.search(r"^\| *id *\| *(direction|form) *\|", outside, re.M), \
        f"{tid}: a hand-written metric or gate table restates task.json outside the generated specification"
