"""What a new user hits on day one: a wrong or empty anchors folder, the
words of ``gate`` for replay gates, the board's reasons and plurals, an
unreachable cluster, the batch summary."""
import json
import os

import pytest
from click.testing import CliRunner
from tests.helpers.board_kit import speed_artifact, synthetic_anchors, write, write_manifest
from tests.helpers.integrations_util import require

from mmverify.cli import EXIT_TASK, EXIT_USAGE, main
from mmverify.tasks import default_anchors_dir

ANCHORS = default_anchors_dir()
DRAGON = "cumcm-2024-a-dragon-dance"


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def dragon_oracle(tmp_path, name=f"{DRAGON}_result.json", **extra):
    with open(os.path.join(ANCHORS, DRAGON, "oracle.json"), encoding="utf-8") as fh:
        data = dict(json.load(fh), **extra)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("command", ["audit", "tasks"])
@pytest.mark.parametrize("folder", ["empty", "absent"])
def test_a_wrong_or_empty_anchors_folder_is_exit_3_with_a_message(tmp_path, command, folder):
    anchors = tmp_path / "anchors"
    if folder == "empty":
        anchors.mkdir()
    r = invoke(command, "--anchors", str(anchors))
    assert r.exit_code == EXIT_TASK, r.output
    assert str(anchors) in r.output and ("not an anchors folder" in r.output or "cannot list" in r.output)


def test_score_with_an_empty_anchors_folder_says_so_not_set_task_id(tmp_path):
    (tmp_path / "anchors").mkdir()
    path = dragon_oracle(tmp_path, "answer.json", task_id=DRAGON)
    r = invoke("score", path, "--anchors", str(tmp_path / "anchors"))
    assert r.exit_code == EXIT_TASK
    assert "not an anchors folder" in r.output and "set task_id" not in r.output


def test_gate_says_a_replay_gate_is_decided_by_score(tmp_path):
    r = invoke("gate", dragon_oracle(tmp_path), "--format", "json")
    assert r.exit_code == 0, r.output
    replayed = [i for i in json.loads(r.stdout)["gates"]["instances"]
                if any(p.startswith("$replay.") for p in i["paths"])]
    assert replayed and all(i["verdict"] == "gap" and i["reason"] == "replay" for i in replayed)
    table = invoke("gate", dragon_oracle(tmp_path)).output
    assert "no field '$replay'" not in table and "decided by `mmverify score`" in table


def test_board_says_why_the_baseline_rows_are_invalid(tmp_path):
    anchors = synthetic_anchors(str(tmp_path / "anchors"))
    write(str(tmp_path / "a.json"), speed_artifact())
    manifest = write_manifest(str(tmp_path / "m.jsonl"), [
        {"entry": "base", "task": "t-a", "artifact": "a.json"},                 # no seed
        {"entry": "other", "task": "t-a", "seed": 0, "artifact": "a.json"},
    ])
    r = invoke("board", manifest, "--baseline", "base", "--anchors", anchors, "--bootstrap", "0")
    assert r.exit_code != 0
    assert "seed" in r.output and "line 1" in r.output and "has no scored rows" not in r.output


def test_board_of_one_row_says_1_row(tmp_path):
    anchors = synthetic_anchors(str(tmp_path / "anchors"))
    write(str(tmp_path / "a.json"), speed_artifact())
    manifest = write_manifest(str(tmp_path / "m.jsonl"),
                              [{"entry": "base", "task": "t-a", "seed": 0, "artifact": "a.json"}])
    r = invoke("board", manifest, "--baseline", "base", "--anchors", anchors, "--bootstrap", "0")
    assert r.exit_code == 0, r.output
    assert "1 row;" in r.output and "1 rows" not in r.output


def test_several_artifacts_end_with_a_summary_line(tmp_path):
    good = dragon_oracle(tmp_path)
    bad = tmp_path / "broken.json"
    bad.write_text("{", encoding="utf-8")
    r = invoke("score", good, str(bad), "--task", DRAGON, "--format", "json")
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)     # JSON Lines
    assert "2 artifacts: 1 error, 1 scored" in r.stderr


@pytest.mark.distributed
def test_an_unreachable_ray_cluster_is_exit_2_with_a_message(tmp_path, monkeypatch):
    require("ray")
    # the Ray client's first wait for a server (5 s, growing over its retries;
    # read when it connects) shortened, so that giving up takes seconds, not 30
    import ray.util.client.worker as ray_client_worker

    monkeypatch.setattr(ray_client_worker, "INITIAL_TIMEOUT_SEC", 1)
    r = invoke("score", dragon_oracle(tmp_path), "--output", str(tmp_path / "o.jsonl"),
               "--executor", "ray://127.0.0.1:9")
    assert r.exit_code == EXIT_USAGE
    assert "cannot be reached" in r.output and "Traceback" not in r.output and "output file" not in r.output
