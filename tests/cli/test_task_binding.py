"""The harness binds the task: ``--task``, a manifest row's task or Harbor's
task decides it; an artifact whose ``task_id`` or file name names another task
is a ``task_mismatch`` row (O-EVAL 0), never scored on the task it names. With
nothing binding, the task is inferred as before, and a ``task_id`` that names
one task in a file named for another is a mismatch too."""
import json
import os
import subprocess
import sys

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.board_kit import synthetic_anchors, write_manifest
from tests.helpers.taskfactory import speed_task

from mmverify.cli import EXIT_NO_TASK, main
from mmverify.pipeline.evaluate import TaskMismatch, bind_task
from mmverify.tasks import default_anchors_dir, task_ids

ANCHORS = default_anchors_dir()
DRAGON, LAMPREY = "cumcm-2024-a-dragon-dance", "mcm-2024-a-lamprey"


def oracle_data(task_id):
    with open(os.path.join(ANCHORS, task_id, "oracle.json"), encoding="utf-8") as fh:
        return json.load(fh)


def dragon_oracle_saying_dragon(path):
    data = dict(oracle_data(DRAGON), task_id=DRAGON)
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def score(*args):
    return CliRunner().invoke(main, ["score", *args])


def test_a_lamprey_named_file_saying_dragon_dance_is_not_scored_as_dragon_dance(tmp_path):
    path = dragon_oracle_saying_dragon(tmp_path / f"{LAMPREY}_result.json")
    r = score(path, "--format", "json")
    assert r.exit_code == EXIT_NO_TASK
    row = json.loads(r.stdout)
    assert row["status"] == "task_mismatch" and row["oeval"] == 0.0
    assert DRAGON in row["error"]["message"] and LAMPREY in row["error"]["message"]
    # the table form says so too
    r = score(path)
    assert r.exit_code == EXIT_NO_TASK and "task_mismatch" in r.output


def test_task_option_binds_and_a_disagreeing_task_id_is_a_mismatch(tmp_path):
    path = dragon_oracle_saying_dragon(tmp_path / "answer.json")
    r = score(path, "--task", LAMPREY, "--format", "json")
    assert r.exit_code == EXIT_NO_TASK
    row = json.loads(r.stdout)
    assert row["status"] == "task_mismatch" and row["task"]["id"] == LAMPREY
    # the same file under its own task scores as before
    r = score(path, "--task", DRAGON, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["oeval"] == 1.0


def test_task_option_and_a_file_named_for_another_task(tmp_path):
    path = tmp_path / f"{DRAGON}_result.json"
    path.write_text(json.dumps(oracle_data(DRAGON)), encoding="utf-8")
    r = score(str(path), "--task", LAMPREY, "--format", "json")
    assert r.exit_code == EXIT_NO_TASK and json.loads(r.stdout)["status"] == "task_mismatch"


def test_nothing_binding_infers_as_before(tmp_path):
    named = tmp_path / f"{DRAGON}_result.json"
    named.write_text(json.dumps(oracle_data(DRAGON)), encoding="utf-8")
    field = dragon_oracle_saying_dragon(tmp_path / "answer.json")
    for path in (str(named), field):
        r = score(path, "--format", "json")
        assert r.exit_code == 0 and json.loads(r.stdout)["oeval"] == 1.0


def test_a_batch_keeps_the_mismatch_as_a_row_with_its_status(tmp_path):
    bad = dragon_oracle_saying_dragon(tmp_path / f"{LAMPREY}_result.json")
    good = tmp_path / f"{DRAGON}_result.json"
    good.write_text(json.dumps(oracle_data(DRAGON)), encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    r = score(bad, str(good), "--output", str(out))
    assert r.exit_code == EXIT_NO_TASK
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["status"] for row in rows] == ["task_mismatch", "scored"]
    assert "1 task_mismatch" in r.output


def test_gate_with_a_disagreeing_task_is_exit_4(tmp_path):
    path = dragon_oracle_saying_dragon(tmp_path / "answer.json")
    r = CliRunner().invoke(main, ["gate", path, "--task", LAMPREY])
    assert r.exit_code == EXIT_NO_TASK and f"the task is '{LAMPREY}'" in r.output and DRAGON in r.output


def test_a_board_row_binds_its_task(tmp_path):
    anchors = synthetic_anchors(str(tmp_path / "anchors"))
    oracle = json.loads((tmp_path / "anchors" / "t-a" / "oracle.json").read_text())
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.json").write_text(json.dumps(oracle), encoding="utf-8")
    (tmp_path / "runs" / "b.json").write_text(json.dumps(dict(oracle, task_id="t-a")), encoding="utf-8")
    manifest = write_manifest(str(tmp_path / "m.jsonl"), [
        {"entry": "base", "task": "t-b", "seed": 0, "artifact": "runs/a.json"},
        {"entry": "sneaky", "task": "t-b", "seed": 0, "artifact": "runs/b.json"},
    ])
    r = CliRunner().invoke(main, ["board", manifest, "--baseline", "base", "--anchors", anchors,
                                  "--bootstrap", "0", "--format", "json", "--output", str(tmp_path / "r.jsonl")])
    assert r.exit_code in (0, 1), r.output
    rows = {row["entry"]: row for row in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    assert rows["base"]["status"] == "scored"
    assert rows["sneaky"]["status"] == "task_mismatch" and rows["sneaky"]["oeval"] == 0.0
    assert "t-a" in rows["sneaky"]["error"]["message"]


def test_verify_with_a_disagreeing_task_id_is_reward_zero(tmp_path):
    path = dragon_oracle_saying_dragon(tmp_path / "answer.json")
    proc = subprocess.run([sys.executable, "-m", "mmverify", "verify", "--task", LAMPREY, "--artifact", path,
                           "--reward-dir", str(tmp_path / "r")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "r" / "reward.json").read_text()) == {"reward": 0.0}
    details = json.loads((tmp_path / "r" / "reward-details.json").read_text())
    assert details["status"] == "task_mismatch" and details["error"]["code"] == "task_mismatch"


def test_verify_infers_the_task_without_the_option(tmp_path):
    path = tmp_path / f"{DRAGON}_result.json"
    path.write_text(json.dumps(oracle_data(DRAGON)), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mmverify", "verify", "--artifact", str(path),
                           "--reward-dir", str(tmp_path / "r")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r" / "reward.json").read_text()) == {"reward": 1.0}
    untold = tmp_path / "answer.json"
    untold.write_text(json.dumps(oracle_data(DRAGON)), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mmverify", "verify", "--artifact", str(untold),
                           "--reward-dir", str(tmp_path / "u")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4 and "--task" in proc.stderr
    assert json.loads((tmp_path / "u" / "reward.json").read_text()) == {"reward": 0.0}
    proc = subprocess.run([sys.executable, "-m", "mmverify", "verify", "--reward-dir", str(tmp_path / "n")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--task" in proc.stderr


class _Art:
    def __init__(self, data):
        self.data = data


ALL = task_ids()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bound=st.sampled_from(ALL), named=st.sampled_from(ALL + [None]), field=st.sampled_from(ALL + [None]))
def test_the_bound_task_decides_and_any_disagreement_is_a_mismatch(bound, named, field):
    filename = f"/runs/{named}_result.json" if named else "/runs/answer.json"
    art = _Art({"task_id": field} if field else {})
    agrees = field in (None, bound) and named in (None, bound)
    try:
        got = bind_task(art, filename, bound)
    except TaskMismatch:
        assert not agrees
    else:
        assert got == bound and agrees


def test_a_speed_task_field_that_is_not_a_known_id_is_still_a_mismatch_when_bound(tmp_path):
    anchors = speed_task(str(tmp_path / "anchors"), "t-speed")
    try:
        bind_task(_Art({"task_id": "t-other"}), str(tmp_path / "x.json"), "t-speed", anchors)
    except TaskMismatch as exc:
        assert "t-other" in str(exc)
    else:
        raise AssertionError("a task_id naming another task was taken")
