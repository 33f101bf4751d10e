"""Every example of docs/integrations.md runs as written: each ```python block in
a fresh interpreter, each `mmverify ...` line of the ```sh blocks through the CLI."""
import os
import re
import shlex
import subprocess
import sys

import pytest
from tests.helpers.integrations_util import require

DOC = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "integrations.md")
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[str]:
    with open(DOC, encoding="utf-8") as fh:
        return [body for kind, body in BLOCK.findall(fh.read()) if kind == lang]


PYTHON = blocks("python")


def test_the_doc_has_one_example_per_integration():
    assert len(PYTHON) == 3 and any("trl_reward_func" in b for b in PYTHON)
    assert any("compute_score" in b for b in PYTHON) and any("mmverify_task" in b for b in PYTHON)
    assert any("mmverify export harbor" in b for b in blocks("sh"))


@pytest.mark.parametrize("code", PYTHON, ids=["trl", "verl", "inspect"])
def test_python_example_runs_as_written(code, tmp_path):
    if "inspect_ai" in code:
        require("inspect_ai")
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_shell_example_runs_as_written(tmp_path):
    lines = [ln for b in blocks("sh") for ln in b.splitlines() if ln.startswith("mmverify ")]
    assert lines
    exe = os.path.join(os.path.dirname(sys.executable), "mmverify")
    for line in lines:
        args = shlex.split(line)
        proc = subprocess.run([exe, *args[1:]], cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path / "harbor-tasks")) == ["cumcm-2024-a-dragon-dance", "mcm-2024-a-lamprey"]
