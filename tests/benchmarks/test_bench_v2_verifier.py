"""The v2 side-by-side benchmark stages the public verifier faithfully: only its
three container path prefixes change, and the artifact lands where it looks."""
import os
import subprocess
import sys

import pytest

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
