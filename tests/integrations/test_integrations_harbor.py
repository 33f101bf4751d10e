"""``mmverify export harbor``: the folders load with Harbor's own task model, and
their scripts, run outside a container, give the reward ``mmverify score`` gives."""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from tests.helpers.integrations_util import cli_reward, oracle_text, require

from mmverify.cli import EXIT_TASK, main
from mmverify.integrations.harbor import artifact_path, engine_packages

TASKS = ["cumcm-2024-a-dragon-dance", "mcm-2024-a-lamprey"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("harbor")
    args = ["export", "harbor", str(out)] + [a for t in TASKS for a in ("--task", t)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def harbor_task_class(monkeypatch):
    """Harbor's task model. Harbor declares Python >= 3.12; on 3.11 its task
    model only lacks ``typing.override`` (3.12), backfilled from typing_extensions."""
    if sys.version_info < (3, 12):
        import typing

        import typing_extensions
        monkeypatch.setattr(typing, "override", typing_extensions.override, raising=False)
    return require("harbor.models.task.task").Task


def test_harbor_task_model_loads_every_exported_folder(exported, monkeypatch):
    Task = harbor_task_class(monkeypatch)
    assert sorted(os.listdir(exported)) == sorted(TASKS)
    for task_id in TASKS:
        folder = exported / task_id
        assert Task.is_valid_dir(folder)                     # the check `harbor run -p DIR` applies
        task = Task(folder)
        assert task.name == f"mmverify/{task_id}" and task.short_name == task_id
        assert task.config.metadata["mmverify_task_id"] == task_id
        assert task.config.verifier.timeout_sec > 0 and task.config.agent.timeout_sec > 0
        assert "## Problem statement" in task.instruction and artifact_path(task_id) in task.instruction
        assert '"experiment_result"' in task.instruction       # the artifact schema
        test_sh = task.paths.discovered_test_path
        assert test_sh == task.paths.tests_dir / "test.sh" and os.access(test_sh, os.X_OK)
        assert (task.paths.environment_dir / "Dockerfile").is_file()
        assert os.access(task.paths.discovered_solve_path, os.X_OK)


def run_sh(script, app, reward):
    env = dict(os.environ, MMVERIFY_APP_DIR=str(app), MMVERIFY_REWARD_DIR=str(reward),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("task_id, variant", [(TASKS[1], "oracle"), (TASKS[0], "infeasible")])
def test_test_sh_writes_the_reward_mmverify_score_gives(exported, tmp_path, task_id, variant):
    folder = exported / task_id
    app, reward = tmp_path / "app", tmp_path / "logs" / "verifier"
    proc = run_sh(folder / "solution" / "solve.sh", app, reward)
    assert proc.returncode == 0, proc.stderr
    artifact = app / os.path.basename(artifact_path(task_id))
    if variant == "infeasible":
        data = json.loads(artifact.read_text(encoding="utf-8"))
        data["experiment_result"]["q5"]["max_head_speed_mps"] = 1.5      # over the 2 m/s handle limit
        artifact.write_text(json.dumps(data), encoding="utf-8")
    proc = run_sh(folder / "tests" / "test.sh", app, reward)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads((reward / "reward.json").read_text())
    details = json.loads((reward / "reward-details.json").read_text())
    expected = cli_reward(task_id, str(artifact))
    assert got == {"reward": expected}
    assert expected == (1.0 if variant == "oracle" else 0.0)
    assert details["status"] == ("scored" if variant == "oracle" else "infeasible")
    if variant == "oracle":      # solve.sh wrote the oracle byte for byte
        assert artifact.read_text(encoding="utf-8").strip() == oracle_text(task_id).strip()


def test_shipped_engine_runs_without_the_installed_package(exported, tmp_path):
    """The engine copy in tests/engine is complete: it scores with the
    installed mmverify hidden (editable finder removed, copy first on the path)."""
    task_id = TASKS[0]                     # the dragon dance: its gates run a replay
    engine = exported / task_id / "tests" / "engine"
    anchors = exported / task_id / "tests" / "anchors"
    oracle = tmp_path / "a.json"
    oracle.write_text(oracle_text(task_id), encoding="utf-8")
    code = ("import sys, runpy\n"
            "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
            f"sys.path.insert(0, {str(engine)!r})\n"
            f"sys.argv = ['mmverify', 'verify', '--task', {task_id!r}, '--artifact', {str(oracle)!r},"
            f" '--reward-dir', {str(tmp_path / 'r')!r}, '--anchors', {str(anchors)!r}]\n"
            "import mmverify, mmverify.cli\n"
            f"assert mmverify.__file__.startswith({str(engine)!r}), mmverify.__file__\n"
            "runpy.run_module('mmverify', run_name='__main__', alter_sys=True)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r" / "reward.json").read_text()) == {"reward": 1.0}
    copied = {".".join(p.relative_to(engine).parts) for p in engine.rglob("*") if (p / "__init__.py").is_file()}
    assert set(engine_packages()) <= copied


def test_unknown_task_is_a_task_error_and_writes_nothing(tmp_path):
    result = CliRunner().invoke(main, ["export", "harbor", str(tmp_path / "out"), "--task", "no-such-task"])
    assert result.exit_code == EXIT_TASK and "no-such-task" in result.output
    assert not (tmp_path / "out").exists()


def test_a_package_the_agent_leaves_in_its_folder_is_never_imported(exported, tmp_path):
    """Harbor runs test.sh from /app, the agent's folder: a ``mmverify`` (or a
    ``click``) planted there must not replace the shipped engine."""
    task_id = TASKS[0]
    app, reward = tmp_path / "app", tmp_path / "logs"
    for name in ("mmverify", "click"):
        (app / name).mkdir(parents=True)
        (app / name / "__init__.py").write_text("import sys; sys.exit('planted package imported')\n",
                                                encoding="utf-8")
    (app / "mmverify" / "__main__.py").write_text("", encoding="utf-8")
    answer = app / os.path.basename(artifact_path(task_id))
    answer.write_text("{}", encoding="utf-8")
    env = dict(os.environ, MMVERIFY_APP_DIR=str(app), MMVERIFY_REWARD_DIR=str(reward),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(["bash", str(exported / task_id / "tests" / "test.sh")], env=env, cwd=str(app),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "planted package imported" not in proc.stdout + proc.stderr
    details = json.loads((reward / "reward-details.json").read_text())
    assert details["task"]["id"] == task_id and details["artifact"]["source"] == str(answer)
    assert json.loads((reward / "reward.json").read_text()) == {"reward": cli_reward(task_id, str(answer))} \
        == {"reward": 0.0}


def test_a_pre_seeded_reward_with_a_garbage_artifact_ends_at_zero(exported, tmp_path):
    task_id = TASKS[1]
    app, reward = tmp_path / "app", tmp_path / "logs" / "verifier"
    app.mkdir()
    reward.mkdir(parents=True)
    (app / os.path.basename(artifact_path(task_id))).write_text("garbage", encoding="utf-8")
    (reward / "reward.json").write_text('{"reward": 1.0}')
    (reward / "reward-details.json").mkdir()
    proc = run_sh(exported / task_id / "tests" / "test.sh", app, reward)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((reward / "reward.json").read_text()) == {"reward": 0.0}


@pytest.mark.parametrize("defect", ["anchors", "engine"])
def test_test_sh_writes_zero_on_any_exit_other_than_a_grade(exported, tmp_path, defect):
    """A broken task folder (exit 3) or an engine that cannot start: a reward
    the agent left is replaced by 0.0, and the exit is passed on."""
    import shutil

    task_id = TASKS[1]
    folder = tmp_path / "task"
    shutil.copytree(exported / task_id, folder)
    if defect == "anchors":
        (folder / "tests" / "anchors" / "index.json").write_text("{", encoding="utf-8")
    else:
        (folder / "tests" / "engine" / "mmverify" / "__main__.py").write_text("raise SystemExit(7)\n")
    app, reward = tmp_path / "app", tmp_path / "logs" / "verifier"
    proc = run_sh(folder / "solution" / "solve.sh", app, reward)
    assert proc.returncode == 0
    reward.mkdir(parents=True)
    (reward / "reward.json").write_text('{"reward": 1.0}')
    proc = run_sh(folder / "tests" / "test.sh", app, reward)
    assert proc.returncode == (3 if defect == "anchors" else 7), proc.stdout + proc.stderr
    assert json.loads((reward / "reward.json").read_text()) == {"reward": 0.0}
