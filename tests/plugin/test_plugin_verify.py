"""Harness verifier: ``mmverify verify`` end to end (subprocess) and its library core."""
import json
import os
import subprocess
import sys

import pytest
from tests.helpers.taskfactory import SPEED_LIMIT, speed_task

from mmverify.pipeline.evaluate import score_path
from mmverify.plugin import verifier

TID = "t-speed"


@pytest.fixture()
def anchors(tmp_path):
    return speed_task(str(tmp_path / "anchors"), TID, gates=[SPEED_LIMIT])


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mmverify", "verify", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def write(path, obj):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)
    return str(path)


def read(folder):
    with open(os.path.join(folder, "reward.json"), encoding="utf-8") as fh:
        reward = json.load(fh)
    with open(os.path.join(folder, "reward-details.json"), encoding="utf-8") as fh:
        details = json.load(fh)
    return reward, details


def artifact(speed=1.246266, pitch=0.4, handles=224, ratio=1.604793):
    return {"result": {"speed": speed, "pitch": pitch, "handles": handles, "ratio": ratio}}


# ------------------------------------------------------------- end to end

def test_oracle_gets_reward_one_and_the_full_report(anchors, tmp_path):
    oracle = os.path.join(anchors, TID, "oracle.json")
    out = tmp_path / "logs" / "verifier"  # created, nested
    proc = run("--task", TID, "--artifact", oracle, "--reward-dir", str(out), "--anchors", anchors)
    assert proc.returncode == 0, proc.stderr
    reward, details = read(out)
    assert reward == {"reward": 1.0} and isinstance(reward["reward"], float)
    assert details == json.loads(score_path(oracle, TID, anchors).to_json())
    assert details["status"] == "scored" and details["gates"]["counts"]["pass"] == 1
    assert sorted(os.listdir(out)) == ["reward-details.json", "reward.json"]  # no temp file left


def test_failure_paths_write_reward_zero_with_the_reason(anchors, tmp_path):
    cases = {
        "missing": (str(tmp_path / "absent.json"), 1, "missing", "missing_artifact"),
        "malformed": (str(tmp_path / "bad.json"), 1, "error", "malformed_json"),
        "infeasible": (write(tmp_path / "fast.json", artifact(speed=1.5)), 1, "infeasible", "hard_gate_failed"),
    }
    (tmp_path / "bad.json").write_text('{"result": {"speed": 1.2,,}}')
    for name, (path, code, status, err) in cases.items():
        out = tmp_path / name
        proc = run("--task", TID, "--artifact", path, "--reward-dir", str(out), "--anchors", anchors)
        assert proc.returncode == code, (name, proc.stderr)
        assert "Traceback" not in proc.stderr
        reward, details = read(out)
        assert reward == {"reward": 0.0}, name
        assert details["status"] == status and details["error"]["code"] == err, (name, details["error"])
        assert details["artifact"]["source"] == path


def test_unknown_task_and_broken_anchors_give_reward_zero_and_exit_3(anchors, tmp_path):
    oracle = os.path.join(anchors, TID, "oracle.json")
    proc = run("--task", "no-such-task", "--artifact", oracle, "--reward-dir", str(tmp_path / "u"),
               "--anchors", anchors)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    reward, details = read(tmp_path / "u")
    assert reward == {"reward": 0.0}
    assert details["error"]["code"] == "unknown_task" and "no-such-task" in details["error"]["message"]

    task_json = os.path.join(anchors, TID, "task.json")
    task = json.load(open(task_json))
    task["metrics"][0]["direction"] = "sideways"
    write(task_json, task)
    proc = run("--task", TID, "--artifact", oracle, "--reward-dir", str(tmp_path / "b"), "--anchors", anchors)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    reward, details = read(tmp_path / "b")
    assert reward == {"reward": 0.0} and details["error"]["code"] == "task_error"
    assert "task.json" in details["error"]["message"]


def test_default_artifact_is_task_result_json_in_the_working_folder(anchors, tmp_path):
    write(tmp_path / f"{TID}_result.json", artifact(speed=1.2))
    proc = run("--task", TID, "--reward-dir", "out", "--anchors", anchors, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    reward, details = read(tmp_path / "out")
    assert 0 < reward["reward"] < 1
    assert details["artifact"]["source"] == f"{TID}_result.json"


def test_unwritable_reward_dir_is_exit_2_not_a_crash(anchors, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run("--task", TID, "--artifact", os.path.join(anchors, TID, "oracle.json"),
               "--reward-dir", str(blocker / "sub"), "--anchors", anchors)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "cannot write" in proc.stderr


# ------------------------------------------------------------- library

def test_internal_error_is_reward_zero_with_a_trace(anchors, tmp_path, monkeypatch):
    import mmverify.pipeline.evaluate

    def boom(*a, **k):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(mmverify.pipeline.evaluate, "score_artifact", boom)
    result = verifier.run_verifier(TID, os.path.join(anchors, TID, "oracle.json"), str(tmp_path / "r"), anchors)
    assert result.reward == 0.0 and result.exit_code == 1
    assert result.details["error"]["code"] == "internal_error" and "engine bug" in result.details["traceback"]
    assert json.load(open(result.reward_path)) == {"reward": 0.0}


def test_schema_violation_zeroes_its_field_or_all_when_the_task_is_strict(anchors, tmp_path):
    path = write(tmp_path / "neg.json", artifact(pitch=-1))
    result = verifier.run_verifier(TID, path, str(tmp_path / "r"), anchors)
    assert (result.exit_code, result.details["status"]) == (0, "scored") and 0 < result.reward < 1
    assert result.details["schema_errors"][0]["field"] == "result.pitch"
    # the task-level setting restores all-or-nothing
    task_file = os.path.join(anchors, TID, "task.json")
    with open(task_file, encoding="utf-8") as fh:
        spec = json.load(fh)
    spec["strict_schema"] = True
    with open(task_file, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    r = run("--task", TID, "--artifact", path, "--reward-dir", str(tmp_path / "s"), "--anchors", anchors)
    assert r.returncode == 1
    reward, details = read(str(tmp_path / "s"))
    assert reward == {"reward": 0.0} and details["status"] == "invalid" and details["oeval"] == 0


def test_rewrite_replaces_previous_files_atomically(anchors, tmp_path):
    out = str(tmp_path / "r")
    verifier.run_verifier(TID, os.path.join(anchors, TID, "oracle.json"), out, anchors)
    assert json.load(open(os.path.join(out, "reward.json"))) == {"reward": 1.0}
    verifier.run_verifier(TID, str(tmp_path / "absent.json"), out, anchors)
    assert json.load(open(os.path.join(out, "reward.json"))) == {"reward": 0.0}
    assert sorted(os.listdir(out)) == ["reward-details.json", "reward.json"]


def test_reward_files_are_renamed_into_place_without_fsync(anchors, tmp_path, monkeypatch):
    """The reward files are atomic (rename) but not flushed to disk; batch files are."""
    from mmverify.batch.atomic import replace_file

    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    out = str(tmp_path / "r")
    verifier.run_verifier(TID, os.path.join(anchors, TID, "oracle.json"), out, anchors)
    assert json.load(open(os.path.join(out, "reward.json"))) == {"reward": 1.0}
    assert synced == [] and sorted(os.listdir(out)) == ["reward-details.json", "reward.json"]
    replace_file(str(tmp_path / "batch.jsonl"), [b"{}\n"])
    assert len(synced) == 2 and (tmp_path / "batch.jsonl").read_bytes() == b"{}\n"


def test_example_test_sh_is_shipped_and_uses_the_verifier():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(here, "docs", "examples", "test.sh")
    text = open(script, encoding="utf-8").read()
    assert text.startswith("#!") and "mmverify verify" in text and "/logs/verifier" in text
    proc = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_plugin_docs_cover_every_entry_point():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(here, "docs", "plugin.md"), encoding="utf-8").read()
    for needle in ("mmverify verify", "reward-details.json", "self_check", "mmverify gate",
                   "mmverify adapt mm-agent", ".results.json", "_provenance", "--mmverify-anchors",
                   "mmverify_anchors", "mmverify.reward", "reward_batch", "examples/test.sh"):
        assert needle in text, needle


def _link_to_the_oracle(path, anchors):
    # an agent links its answer to the oracle, which a harness puts in place only afterwards
    path.symlink_to(os.path.join(anchors, TID, "oracle.json"))
    return "symbolic link"


def _named_pipe(path, anchors):
    # nobody ever writes to it: a blocking open would wait for ever
    os.mkfifo(path)
    return "not a regular file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX")
@pytest.mark.parametrize("make", [_link_to_the_oracle, _named_pipe])
def test_an_answer_that_is_no_regular_file_scores_zero_at_once(anchors, tmp_path, make):
    answer = tmp_path / f"{TID}_result.json"
    said = make(answer, anchors)
    out = tmp_path / "r"
    proc = run("--task", TID, "--artifact", str(answer), "--reward-dir", str(out), "--anchors", anchors)
    assert proc.returncode == 1
    reward, details = read(out)
    assert reward == {"reward": 0.0}
    assert details["error"]["code"] == "unreadable" and said in details["error"]["message"]


# ------------------------------------------------------------- stale rewards

def test_a_reward_the_agent_left_never_stands(anchors, tmp_path):
    """The agent writes reward.json = 1.0 and makes reward-details.json a
    folder; verify removes both and writes its own reward for the garbage."""
    out = tmp_path / "logs"
    out.mkdir()
    (out / "reward.json").write_text('{"reward": 1.0}')
    (out / "reward-details.json").mkdir()
    (out / "reward-details.json" / "x").write_text("planted")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not json at all")
    proc = run("--task", TID, "--artifact", str(garbage), "--reward-dir", str(out), "--anchors", anchors)
    assert proc.returncode == 1, proc.stderr
    reward, details = read(out)
    assert reward == {"reward": 0.0} and details["status"] == "error"


def test_a_stale_reward_is_removed_even_when_the_task_is_unknown(anchors, tmp_path):
    out = tmp_path / "logs"
    out.mkdir()
    (out / "reward.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text('{"reward": 1.0}')
    proc = run("--task", "no-such-task", "--artifact", str(tmp_path / "a.json"), "--reward-dir", str(out),
               "--anchors", anchors)
    assert proc.returncode == 3
    assert not os.path.islink(out / "reward.json")
    assert read(out)[0] == {"reward": 0.0}
    assert (tmp_path / "elsewhere.json").read_text() == '{"reward": 1.0}'    # the link was not followed
