"""A normal (non-editable) install works from any folder.

Builds the wheel from a clean copy of the sources, installs it into a fresh
virtual environment and runs the main commands from a folder outside the
repository. The new environment borrows the running environment's
dependencies (click, jsonschema, numpy, sympy) through a ``.pth`` line, so no
network is needed beyond what pip needs to build a wheel (setuptools, wheel).
The running environment's own mmverify (an editable install, say) is not
visible in it: its ``.pth`` hooks are not processed, and the test checks that
``mmverify`` is imported from the new environment.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

REPO = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", ".lake", "__pycache__", ".hypothesis",
                                ".pytest_cache", "results")
ORACLE_TASK = "cumcm-2024-a-dragon-dance"


def _run(argv, cwd, env=None, timeout=300):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of the new environment, a folder outside the repository, seconds taken)."""
    t0 = time.perf_counter()
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    shutil.copytree(REPO, src, ignore=IGNORE)
    wheels = base / "wheels"
    r = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)], cwd=base)
    assert r.returncode == 0, f"building the wheel failed:\n{r.stdout}\n{r.stderr}"
    (wheel,) = wheels.glob("mmverify-*.whl")
    venv = base / "venv"
    r = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    assert r.returncode == 0, r.stderr
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=base)
                .stdout.strip())
    (site / "borrowed-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    r = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
              str(wheel)], cwd=base)
    assert r.returncode == 0, f"installing the wheel failed:\n{r.stdout}\n{r.stderr}"
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return py, elsewhere, time.perf_counter() - t0


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("MMVERIFY_ANCHORS", "MMVERIFY_LEANPROOFS",
                                                           "PYTHONPATH")}
    return env


def _mmverify(installed, *args):
    py, cwd, _ = installed
    return _run([str(py), "-m", "mmverify", *args], cwd=cwd, env=_env())


def test_installed_package_is_the_wheel(installed):
    py, cwd, seconds = installed
    r = _run([str(py), "-c", "import mmverify, sys; print(mmverify.__file__)"], cwd=cwd, env=_env())
    assert r.returncode == 0, r.stderr
    where = Path(r.stdout.strip()).resolve()
    assert str(where).startswith(str(Path(py).parent.parent.resolve())), where
    assert not str(where).startswith(str(REPO))
    # building and installing stays a small part of a CI run
    assert seconds < 120, f"wheel build + install took {seconds:.1f} s"


def test_installed_audit_finds_the_bundled_anchors(installed):
    r = _mmverify(installed, "audit", "--format", "json")
    assert r.returncode == 0, r.stderr + r.stdout[-2000:]
    report = json.loads(r.stdout)
    assert report["totals"]["tasks"] == 18 and report["totals"]["loaded"] == 18


def test_installed_score_and_verify(installed):
    py, cwd, _ = installed
    oracle = _run([str(py), "-c", "from mmverify.tasks import load_task; "
                   f"print(load_task({ORACLE_TASK!r}).oracle_path)"], cwd=cwd, env=_env()).stdout.strip()
    assert "site-packages" in oracle or "lib" in oracle
    art = cwd / f"{ORACLE_TASK}_result.json"
    shutil.copyfile(oracle, art)
    r = _mmverify(installed, "score", art.name, "--format", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["status"] == "scored" and report["oeval"] == 1.0
    r = _mmverify(installed, "verify", "--task", ORACLE_TASK, "--artifact", art.name, "--reward-dir", "rw")
    assert r.returncode == 0, r.stderr
    assert json.loads((cwd / "rw" / "reward.json").read_text()) == {"reward": 1.0}


def test_installed_lean_emit_check_has_no_drift(installed):
    r = _mmverify(installed, "lean", "emit", "--check")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "no drift" in r.stdout
    assert "missing:" not in r.stdout


def test_installed_help_names_the_bundled_anchors_folder(installed):
    py, cwd, _ = installed
    r = _mmverify(installed, "tasks")
    assert r.returncode == 0, r.stderr
    assert "18 task(s)" in r.stdout


def test_installed_package_holds_every_anchor_and_lean_file(installed):
    py, cwd, _ = installed
    r = _run([str(py), "-c", "import importlib.resources as r; print(r.files('mmverify'))"], cwd=cwd, env=_env())
    root = Path(r.stdout.strip())
    for folder in ("anchors", "LeanProofs"):
        src = {p.relative_to(REPO / folder) for p in (REPO / folder).rglob("*")
               if p.is_file() and ".lake" not in p.parts and "__pycache__" not in p.parts}
        shipped = {p.relative_to(root / folder) for p in (root / folder).rglob("*") if p.is_file()}
        assert src <= shipped, sorted(map(str, src - shipped))[:10]
