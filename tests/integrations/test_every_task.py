"""Every integration over every bundled task: the chat prompt, the Harbor
export (loaded with Harbor's own task model) and the inspect_ai task factory.
A task whose schema holds a non-integer number (the heliostat field's
``"maximum": 1.366``) once broke all three."""
import json
import os
import sys
from decimal import Decimal

import pytest
from click.testing import CliRunner
from tests.helpers.integrations_util import require

from mmverify.cli import main
from mmverify.integrations.harbor import artifact_path
from mmverify.integrations.prompt import chat_prompt, file_prompt, schema_text
from mmverify.tasks import load_task, task_ids

ALL = task_ids()


def test_the_bundle_has_eighteen_tasks():
    assert len(ALL) == 18


def schema_in(prompt: str):
    block = prompt.split("```json\n", 1)[1].split("\n```", 1)[0]
    return json.loads(block, parse_float=Decimal)


@pytest.mark.parametrize("task_id", ALL)
def test_chat_and_file_prompts_hold_the_exact_schema_of_every_task(task_id):
    task = load_task(task_id)
    for prompt in (chat_prompt(task), file_prompt(task, artifact_path(task_id))):
        assert f"Task id: `{task_id}`" in prompt
        assert schema_in(prompt) == task.artifact_schema
    # the schema file's own key order, numbers from their own text
    assert list(json.loads(schema_text(task))) == list(task.artifact_schema)


def test_a_decimal_bound_is_written_from_its_own_text():
    task = load_task("cumcm-2023-a-heliostat-field")
    assert '"maximum": 1.366' in schema_text(task)


@pytest.fixture(scope="module")
def exported_all(tmp_path_factory):
    out = tmp_path_factory.mktemp("harbor-all")
    result = CliRunner().invoke(main, ["export", "harbor", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_export_harbor_without_task_writes_every_task(exported_all):
    assert sorted(os.listdir(exported_all)) == sorted(ALL)
    for task_id in ALL:
        instruction = (exported_all / task_id / "instruction.md").read_text(encoding="utf-8")
        assert schema_in(instruction) == load_task(task_id).artifact_schema


def test_harbor_task_model_loads_all_eighteen(exported_all, monkeypatch):
    if sys.version_info < (3, 12):      # harbor's task model uses typing.override (3.12)
        import typing

        import typing_extensions
        monkeypatch.setattr(typing, "override", typing_extensions.override, raising=False)
    Task = require("harbor.models.task.task").Task
    for task_id in ALL:
        folder = exported_all / task_id
        assert Task.is_valid_dir(folder), task_id
        task = Task(folder)
        assert task.short_name == task_id and task.config.metadata["mmverify_task_id"] == task_id
        assert artifact_path(task_id) in task.instruction
        assert os.access(task.paths.discovered_test_path, os.X_OK)


def test_inspect_task_factory_over_every_task():
    require("inspect_ai")
    from mmverify.integrations.inspect import mmverify_task

    task = mmverify_task()
    assert sorted(s.id for s in task.dataset) == sorted(ALL)
    for sample in task.dataset:
        assert schema_in(sample.input) == load_task(sample.id).artifact_schema


def test_inspect_task_ids_given_as_one_string_is_one_task():
    """``inspect eval ... -T task_ids=ID`` passes the id as a string, not a list."""
    require("inspect_ai")
    from mmverify.integrations.inspect import mmverify_task

    one = ALL[0]
    assert [s.id for s in mmverify_task(task_ids=one).dataset] == [one]
    two = f"{ALL[0]},{ALL[1]}"
    assert [s.id for s in mmverify_task(task_ids=two).dataset] == ALL[:2]
