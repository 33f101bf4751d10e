"""The v2 side-by-side benchmark stages the public verifier faithfully: only its
three container path prefixes change, and the artifact lands where it looks."""
import dataclasses
import json
import os
import subprocess
import sys

import pytest

from mmverify.gates.model import GateInstance
from mmverify.pipeline.report import Report
from mmverify.tasks import load_task

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")


@pytest.fixture()
def bench(monkeypatch):
    monkeypatch.syspath_prepend(BENCH)
    import bench_v2_verifier

    return bench_v2_verifier


def fake_repo(tmp_path, task_id):
    tests = tmp_path / "repo" / "tasks" / "CUMCM" / task_id / "tests"
    tests.mkdir(parents=True)
    (tests / "score_result.py").write_text(
        "from pathlib import Path\n"
        f"OUT = Path('/root/results/{task_id}_result.json')\n"
        "CFG = Path('/tests/score_config.json')\n"
        "REWARD = Path('/logs/verifier/reward.txt')\n"
        "REWARD.write_text(str(len(OUT.read_text()) > 0 and CFG.read_text() == '{}'))\n", encoding="utf-8")
    (tests / "score_config.json").write_text("{}", encoding="utf-8")
    (tests / "test.sh").write_text("#!/bin/bash\n", encoding="utf-8")
    return tmp_path / "repo"


def test_stage_rewrites_only_the_container_paths(bench, tmp_path):
    task_id = "cumcm-2024-a-dragon-dance"
    repo = fake_repo(tmp_path, task_id)
    artifact = tmp_path / "a.json"
    artifact.write_text('{"x": 1}', encoding="utf-8")
    tests = bench.v2_tests_dir(str(repo), task_id)
    roots = bench.stage_v2(tests, str(tmp_path / "stage"), str(artifact), task_id)
    script = os.path.join(roots["/tests/"], "score_result.py")
    text = open(script, encoding="utf-8").read()
    assert "'/tests/" not in text and "'/root/results/" not in text and "'/logs/verifier/" not in text
    assert open(os.path.join(roots["/tests/"], "test.sh"), encoding="utf-8").read() == "#!/bin/bash\n"
    subprocess.run([sys.executable, script], check=True)
    assert open(os.path.join(roots["/logs/verifier/"], "reward.txt"), encoding="utf-8").read() == "True"


def test_a_task_missing_from_the_checkout_is_named(bench, tmp_path):
    with pytest.raises(SystemExit, match="no tasks/\\*/cumcm-9999-z-none/tests"):
        bench.v2_tests_dir(str(tmp_path), "cumcm-9999-z-none")


def test_the_floor_defines_frozen_records_of_the_given_shapes(bench):
    ns: dict = {}
    exec(bench.floor_source([0, 3, 1]), ns)
    records = [ns[f"R{i}"] for i in range(3)]
    assert [len(dataclasses.fields(r)) for r in records] == [0, 3, 1]
    one = records[1](1, 2, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.f0 = 5
    assert {"json", "decimal", "fractions"} <= set(ns)


def test_the_probe_reads_the_records_and_the_work_of_a_real_verify(bench, tmp_path):
    task = load_task("cumcm-2024-a-dragon-dance")
    args = ["verify", "--task", task.id, "--artifact", task.oracle_path, "--reward-dir", str(tmp_path / "r"), "-q"]
    out = subprocess.run([sys.executable, "-c", bench._PROBE, "--shapes", json.dumps(args)], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    probe = json.loads(out)
    # the report's own records are among those counted, with their field counts
    assert len(dataclasses.fields(Report)) in probe["shapes"]
    assert len(dataclasses.fields(GateInstance)) in probe["shapes"]
    assert "mmverify.pipeline.evaluate" in probe["modules"] and "dataclasses" in probe["modules"]
    assert json.loads((tmp_path / "r" / "reward.json").read_text())["reward"] == 1.0
    (tmp_path / "r" / "reward.json").unlink()
    work = subprocess.run([sys.executable, "-c", bench._PROBE, "--work", json.dumps(probe["modules"]),
                           json.dumps(args)], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert 0 < float(work) < 60
    assert json.loads((tmp_path / "r" / "reward.json").read_text())["reward"] == 1.0
