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
IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", ".lake", "__pycache__",
                                ".hypothesis", ".pytest_cache", "results")
ORACLE_TASK = "cumcm-2024-a-dragon-dance"


def _run(argv, cwd, env=None, timeout=300):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of the new environment, a folder outside the repository, seconds
    taken); the build's log is ``build.log`` beside that folder."""
    t0 = time.perf_counter()
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    shutil.copytree(REPO, src, ignore=IGNORE)
    wheels = base / "wheels"
    r = _run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(wheels), str(src)], cwd=base)
    assert r.returncode == 0, f"building the wheel failed:\n{r.stdout[-5000:]}\n{r.stderr[-5000:]}"
    (base / "build.log").write_text(r.stdout + r.stderr, encoding="utf-8")
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


def test_the_build_warns_of_nothing_left_out_and_nothing_deprecated(installed):
    log = (installed[1].parent / "build.log").read_text(encoding="utf-8")
    assert "absent from the `packages` configuration" not in log
    assert "SetuptoolsDeprecationWarning" not in log


def test_every_package_folder_of_the_sources_is_installed(installed):
    """Packages are discovered (setup.py): every folder with an ``__init__.py``
    under mmverify/ and the mapped top-level folders is in the install."""
    py, cwd, _ = installed
    r = _run([str(py), "-c", "import importlib.resources as r; print(r.files('mmverify'))"], cwd=cwd, env=_env())
    root = Path(r.stdout.strip())
    sources = {"": REPO / "mmverify", "scoring": REPO / "scoring", "gates": REPO / "gates",
               "lean_gen": REPO / "lean_gen", "replay": REPO / "replay"}
    for sub, folder in sources.items():
        for init in folder.rglob("__init__.py"):
            rel = init.relative_to(folder)
            assert (root / sub / rel).is_file(), f"{init} is not installed"


# every command of the program, run for real from the folder outside the
# repository (the test below fails when a command is added without one here)
def _oracle(py, cwd, task):
    return _run([str(py), "-c", f"from mmverify.tasks import load_task; print(load_task({task!r}).oracle_path)"],
                cwd=cwd, env=_env()).stdout.strip()


def _manifest(py, cwd):
    art = cwd / "board-oracle.json"
    shutil.copyfile(_oracle(py, cwd, ORACLE_TASK), art)
    rows = [{"entry": e, "task": ORACLE_TASK, "seed": 0, "artifact": art.name} for e in ("base", "other")]
    (cwd / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ["manifest.jsonl", "--baseline", "base", "--bootstrap", "0"]


def _artifact_copy(py, cwd, name):
    shutil.copyfile(_oracle(py, cwd, ORACLE_TASK), cwd / name)
    return name


COMMAND_RUNS = {
    "score": lambda py, cwd: ["score", _artifact_copy(py, cwd, f"{ORACLE_TASK}_result.json")],
    "tasks": lambda py, cwd: ["tasks"],
    "gate": lambda py, cwd: ["gate", _artifact_copy(py, cwd, f"{ORACLE_TASK}_gate.json")],
    "audit": lambda py, cwd: ["audit"],
    "lean": lambda py, cwd: ["lean", "emit", "--check"],
    "board": lambda py, cwd: ["board", *_manifest(py, cwd)],
    "verify": lambda py, cwd: ["verify", "--artifact", _artifact_copy(py, cwd, f"{ORACLE_TASK}_result.json"),
                               "--reward-dir", "rw-all"],
    "adapt": lambda py, cwd: ["adapt", "mm-agent", "--emit-prompt", "mcm-2024-c-tennis-momentum"],
    "attack": lambda py, cwd: ["attack", "--task", ORACLE_TASK, "--strategy", "mid", "--attempts", "1"],
    "export": lambda py, cwd: ["export", "harbor", "harbor-out", "--task", ORACLE_TASK],
    "new-task": lambda py, cwd: ["new-task", "new-tasks", "--id", "my-new-task"],
    "schema-from": lambda py, cwd: ["schema-from", _artifact_copy(py, cwd, "example.json")],
}


def test_the_command_runs_cover_every_command():
    from mmverify.cli import COMMANDS

    assert set(COMMAND_RUNS) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMAND_RUNS))
def test_every_command_runs_from_the_wheel(installed, command):
    py, cwd, _ = installed
    r = _mmverify(installed, command, "--help")
    assert r.returncode == 0 and "Usage:" in r.stdout, r.stderr
    r = _mmverify(installed, *COMMAND_RUNS[command](py, cwd))
    assert r.returncode == 0, f"mmverify {command}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr and "No module named" not in r.stderr
