"""Authoring: ``new-task``, ``schema-from`` and the audit's authoring checks."""
from __future__ import annotations

import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.cli import main
from mmverify.gates.audit import audit_anchors, audit_task_id
from mmverify.gates.authoring import GUIDE_ORDER, PLACEHOLDER, authoring_findings
from mmverify.plugin.contracts import check_gates_pass_on_oracle, check_loads, check_one_sided, check_oracle_scores_one, check_oracle_validates, check_selfcheck_no_leak, directional_metrics
from mmverify.tasks.scaffold import RANGE_NOTE, SCHEMA_DIALECT, UNIT_NOTE, draft_schema
from mmverify.tasks import default_anchors_dir, load_task, task_ids

BUNDLED = default_anchors_dir()
AUTHORING_KINDS = ("unfinished_placeholder", "unitless_field", "unranged_field", "unjustified_direction")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def contracts(task_id: str, anchors: str) -> None:
    """Every contract the pytest plugin runs on a task."""
    check_loads(task_id, anchors)
    task = load_task(task_id, anchors)
    check_oracle_validates(task)
    check_gates_pass_on_oracle(task)
    check_oracle_scores_one(task)
    for metric in directional_metrics(task):
        check_one_sided(task, metric)
    check_selfcheck_no_leak(task)


def placeholders_in(folder: Path) -> int:
    return sum(p.read_text(encoding="utf-8").count(PLACEHOLDER) for p in folder.iterdir() if p.is_file())


# ================================================================ new-task

def test_new_task_loads_passes_contracts_and_lists_every_placeholder(tmp_path):
    r = run("new-task", tmp_path, "--id", "my-task")
    assert r.exit_code == 0, r.output
    folder = tmp_path / "my-task"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "artifact.schema.json", "oracle.json", "problem.md", "task.json"]
    task = load_task("my-task", str(tmp_path))
    assert (len(task.metrics), len(task.gates), len(task.panel)) == (1, 1, 1)
    contracts("my-task", str(tmp_path))
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "| id | path | direction | weight | band | why |" in readme
    assert "| id | form | level | severity | statement sentence |" in readme

    audit = audit_task_id("my-task", str(tmp_path))
    unfinished = [f for f in audit.findings if f.kind in AUTHORING_KINDS]
    assert all(f.severity == "problem" for f in unfinished)
    # one finding per placeholder, none missed
    assert len(unfinished) == placeholders_in(folder)
    assert {f.kind for f in unfinished} == {"unfinished_placeholder", "unitless_field", "unranged_field"}
    out = run("audit", "--anchors", tmp_path)
    assert out.exit_code == 1
    assert out.output.rstrip().endswith(f"run the task's contracts: pytest --mmverify-anchors {tmp_path}")


def test_new_task_refuses_a_used_folder_and_a_bad_id(tmp_path):
    assert run("new-task", tmp_path, "--id", "t1").exit_code == 0
    again = run("new-task", tmp_path, "--id", "t1")
    assert again.exit_code == 2 and "not empty" in again.output
    bad = run("new-task", tmp_path, "--id", "Bad_Id")
    assert bad.exit_code == 2 and "not a task id" in bad.output


def test_new_task_joins_an_index(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"schema_version": 1, "tasks": []}), encoding="utf-8")
    assert run("new-task", tmp_path, "--id", "t2").exit_code == 0
    assert task_ids(str(tmp_path)) == ["t2"]


def _finish(folder: Path) -> None:
    """What an author does to the scaffold: two metrics, two gates, no placeholder left."""
    task = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    task.pop("$comment")
    task.update(suite="TEST", problem="A", title="Two metrics, two gates", provenance={"source": "a test"})
    task["metrics"] = [
        {"id": "q1.cost", "path": "experiment_result.q1.cost_yuan", "unit": "yuan", "direction": "lower_is_better",
         "weight": 2, "band": {"rel": "0.1"}},
        {"id": "q1.units", "path": "experiment_result.q1.units", "unit": "count", "direction": "exact_value",
         "weight": 1},
    ]
    task["gates"] = [
        {"id": "q1.cost_covers_units", "form": "identity", "level": "B", "severity": "hard",
         "expr": "cost >= 7 * units", "vars": {"cost": "experiment_result.q1.cost_yuan",
                                               "units": "experiment_result.q1.units"},
         "description": "each unit costs at least 7 yuan"},
        {"id": "q1.units_whole", "form": "integer", "level": "A", "severity": "hard",
         "path": "experiment_result.q1.units", "description": "units are whole"},
    ]
    task["panel"] = [{"paper_id": "P1", "title": "a paper", "award": "O", "oracle": True,
                      "provenance": {"source": "a test"}, "values": {"q1.cost": "2310", "q1.units": "330"}}]
    (folder / "task.json").write_text(json.dumps(task, indent=2), encoding="utf-8")
    (folder / "oracle.json").write_text(json.dumps(
        {"task_id": folder.name, "experiment_result": {"q1": {"cost_yuan": 2310, "units": 330}}}), encoding="utf-8")
    schema = draft_schema({"task_id": "x", "experiment_result": {"q1": {"cost_yuan": 1, "units": 1}}}, "a task")
    q1 = schema["properties"]["experiment_result"]["properties"]["q1"]["properties"]
    q1["cost_yuan"].update({"x-unit": "yuan", "minimum": 0})
    q1["units"].update({"x-unit": "count", "minimum": 0, "x-range": "no maximum in the statement"})
    del q1["cost_yuan"]["x-range"]
    (folder / "artifact.schema.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    (folder / "problem.md").write_text("# A statement\n\nEach unit costs at least 7 yuan.\n", encoding="utf-8")
    (folder / "README.md").write_text(
        "# t3\n\n| id | path | direction | weight | band | why |\n|---|---|---|---|---|---|\n"
        "| q1.cost | experiment_result.q1.cost_yuan | lower_is_better | 2 | rel 0.1 | cheaper is better; "
        "7 yuan a unit bounds it below |\n| q1.units | experiment_result.q1.units | exact_value | 1 | - | a count |\n",
        encoding="utf-8")


def test_two_metrics_two_gates_pass_audit_and_contracts(tmp_path):
    assert run("new-task", tmp_path / "draft", "--id", "t3").exit_code == 0
    shutil.copytree(tmp_path / "draft", tmp_path / "done")
    _finish(tmp_path / "done" / "t3")
    assert placeholders_in(tmp_path / "done" / "t3") == 0
    r = run("audit", "--anchors", tmp_path / "done")
    assert r.exit_code == 0, r.output
    assert "nothing: every audit check passes" in r.output
    contracts("t3", str(tmp_path / "done"))


# ================================================================ guided order

def test_guide_lists_what_is_missing_in_order(tmp_path):
    assert run("new-task", tmp_path / "draft", "--id", "t4").exit_code == 0
    shutil.copytree(tmp_path / "draft", tmp_path / "wip")
    folder = tmp_path / "wip" / "t4"
    task = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    # an ungated one-sided metric without a README row, and its reference value in the schema's prose
    task["metrics"][0].update(direction="higher_is_better")
    task["gates"] = []
    task["panel"][0]["values"]["q1.answer"] = "1.2345"
    (folder / "task.json").write_text(json.dumps(task), encoding="utf-8")
    (folder / "oracle.json").write_text(json.dumps({"experiment_result": {"q1": {"answer": 1.2345}}}),
                                        encoding="utf-8")
    schema = json.loads((folder / "artifact.schema.json").read_text(encoding="utf-8"))
    schema["properties"]["experiment_result"]["description"] = "the answer is about 1.2345"
    (folder / "artifact.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    r = run("audit", "--anchors", tmp_path / "wip")
    assert r.exit_code == 1
    guide = r.output.split("what is left, in the order to fix it", 1)[1]
    steps = [line.split(":")[0].split(". ", 1)[1] for line in guide.splitlines() if line[:5].strip().endswith(".")]
    assert steps == ["unfinished_placeholder", "unitless_field", "unranged_field", "ungated_directional",
                     "unjustified_direction", "anchor_leak"]
    assert steps == [k for k in GUIDE_ORDER if k in steps]
    assert r.output.rstrip().splitlines()[-1] == f"run the task's contracts: pytest --mmverify-anchors {tmp_path / 'wip'}"


def test_bundled_anchors_have_no_authoring_finding():
    report = audit_anchors(BUNDLED)
    assert not [f for f in report.findings if f.kind in AUTHORING_KINDS]
    assert not report.problems


# ================================================================ schema-from

VOCABULARY = {SCHEMA_DIALECT, UNIT_NOTE, RANGE_NOTE, "object", "array", "number", "integer", "string", "boolean"}
FORBIDDEN = {"enum", "const", "examples", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
             "minItems", "maxItems", "pattern", "format", "minLength", "maxLength"}


def _keys(value, out=None) -> set[str]:
    out = set() if out is None else out
    if isinstance(value, dict):
        out.update(value)
        for v in value.values():
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def assert_no_value_copied(schema, example) -> None:
    keys = _keys(example)

    def walk(node, key=None):
        if isinstance(node, dict):
            if key != "properties":           # (a properties map's keys are field names, not keywords)
                assert not FORBIDDEN & set(node), f"value-carrying keyword in {sorted(FORBIDDEN & set(node))}"
            for k, v in node.items():
                if key == "properties":
                    assert k in keys          # a field name of the example, not a value
                walk(v, None if key == "properties" else k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str):
            if key == "required":
                assert node in keys
            else:
                assert node in VOCABULARY or node.startswith(PLACEHOLDER), f"{node!r} is not the draft's own text"
        else:
            raise AssertionError(f"the draft holds a value {node!r}")

    walk(schema)


@pytest.mark.parametrize("task_id", task_ids(BUNDLED))
def test_schema_from_bundled_oracle_leaks_nothing(task_id, tmp_path):
    from mmverify.reading.artifact import parse_file

    oracle = os.path.join(BUNDLED, task_id, "oracle.json")
    out = tmp_path / "draft.json"
    r = run("schema-from", oracle, "-o", out)
    assert r.exit_code == 0, r.output
    schema = json.loads(out.read_text(encoding="utf-8"))
    example = parse_file(oracle).data
    assert_no_value_copied(schema, example)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(Path(oracle).read_text(encoding="utf-8")))
    # no oracle value of three or more characters appears anywhere in the draft's text
    text = out.read_text(encoding="utf-8")
    values = {str(v) for v in _leaves(example)} - _keys(example)
    assert not [v for v in values if len(v) >= 3 and (f'"{v}"' in text or f": {v}," in text or f": {v}\n" in text)]


def test_schema_from_types_counts_as_integers(tmp_path):
    """A whole number written without decimals is drafted as an integer; one
    written with them, or a list mixing both, as a number."""
    example = tmp_path / "example.json"
    example.write_text('{"sheep": 312, "width_m": 25.0, "area_m2": 1.25E+3, "sides": [25, 50.5], "ids": [1, 2]}',
                       encoding="utf-8")
    out = tmp_path / "draft.json"
    assert run("schema-from", example, "-o", out).exit_code == 0
    props = json.loads(out.read_text(encoding="utf-8"))["properties"]
    assert props["sheep"]["type"] == "integer"
    assert props["width_m"]["type"] == props["area_m2"]["type"] == "number"
    assert props["sides"]["items"]["type"] == "number"
    assert props["ids"]["items"]["type"] == "integer"
    assert "anyOf" not in props["sides"]["items"]


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None and not isinstance(value, bool):
        yield value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: Decimal(str(d)))
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_draft_accepts_its_example_and_copies_no_value(example):
    schema = draft_schema(example)
    assert_no_value_copied(schema, example)
    plain = json.loads(json.dumps(example, default=float))
    jsonschema.Draft202012Validator(schema).validate(plain)


def test_audit_names_every_number_field_of_a_draft(tmp_path):
    assert run("new-task", tmp_path / "a", "--id", "t5").exit_code == 0
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    folder = tmp_path / "b" / "t5"
    example = {"experiment_result": {"q1": {"answer": 1.5, "parts": [{"a": 1, "b": 2}], "label": "x"}}}
    (folder / "oracle.json").write_text(json.dumps(example), encoding="utf-8")
    assert run("schema-from", folder / "oracle.json", "-o", folder / "artifact.schema.json").exit_code == 0
    task = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    audit = audit_task_id("t5", str(tmp_path / "b"))
    fields = sorted(f.subject for f in audit.findings if f.kind == "unitless_field")
    assert fields == ["experiment_result.q1.answer", "experiment_result.q1.parts[*].a",
                      "experiment_result.q1.parts[*].b"]
    assert sorted(f.subject for f in audit.findings if f.kind == "unranged_field") == fields
    assert task["metrics"][0]["unit"] == UNIT_NOTE   # the scaffold's metric unit matches the draft's note


def test_schema_from_rejects_a_bad_example(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": NaN}', encoding="utf-8")
    r = run("schema-from", bad)
    assert r.exit_code == 1 and "error" in r.output


def test_generated_review_is_no_justification(tmp_path):
    from mmverify.gates.review import readme_with_review

    assert run("new-task", tmp_path / "draft", "--id", "t6").exit_code == 0
    shutil.copytree(tmp_path / "draft", tmp_path / "done")
    folder = tmp_path / "done" / "t6"
    _finish(folder)
    task = load_task("t6", str(tmp_path / "done"))
    (folder / "README.md").write_text(readme_with_review("# t6\n", task), encoding="utf-8")
    assert "lower_is_better" in (folder / "README.md").read_text(encoding="utf-8")
    found = [f for f in authoring_findings(task, ()) if f.kind == "unjustified_direction"]
    assert [f.subject for f in found] == ["q1.cost"]
