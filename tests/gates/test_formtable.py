"""The form table is the one list of gate forms: the task schema, the reports
and the Lean layer agree with it."""
import json
from importlib import resources

from mmverify.gates import FORM_TABLE, FORMS, compile_gates, evaluate_gates
from mmverify.tasks import default_anchors_dir, load_index, load_task


def test_schema_enum_is_the_table():
    schema = json.loads(resources.files("mmverify.schemas").joinpath("task.schema.json").read_text("utf-8"))
    text = json.dumps(schema)   # wherever the gate object is defined, its form enum lists the table
    start = text.index('"form": {"enum": ') + len('"form": {"enum": ')
    enum = json.loads(text[start:text.index("]", start) + 1])
    assert list(enum) == list(FORMS) == list(FORM_TABLE)


def test_every_anchor_gate_reports_its_forms_bounds():
    anchors = default_anchors_dir()
    seen = set()
    for entry in load_index(anchors):
        task = load_task(entry["id"], anchors)
        gates = compile_gates(task)
        assert all(g.form in FORM_TABLE for g in gates)
        for inst in evaluate_gates(task, {}).instances:
            seen.add(inst.form)
            assert isinstance(inst.as_dict()["exact"], dict)
    assert seen <= set(FORMS) and seen


def _schema_enum(name: str) -> list:
    schema = json.loads(resources.files("mmverify.schemas").joinpath("task.schema.json").read_text("utf-8"))
    return schema["$defs"]["gate_common"]["properties"][name]["enum"]


def test_gate_literals_are_the_schema_enums():
    from typing import get_args

    from mmverify.gates.model import LEVELS, Level, Severity

    assert list(get_args(Level)) == list(LEVELS) == _schema_enum("level")
    assert list(get_args(Severity)) == _schema_enum("severity")
