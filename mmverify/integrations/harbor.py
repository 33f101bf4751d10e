"""Harbor task folders for the anchors (``mmverify export harbor``).

Design notes: docs/architecture.md, `mmverify/integrations/harbor.py`.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from dataclasses import dataclass
from typing import Iterable, Sequence

from mmverify.integrations.prompt import file_prompt
from mmverify.plugin.verifier import default_artifact_name

APP_DIR = "/app"
REWARD_DIR = "/logs/verifier"
TESTS_DIR = "/tests"
BASE_IMAGE = "python:3.11-slim"
#: The engine's runtime dependencies, installed in the task image.
RUNTIME_DEPS = ("click>=8.0", "jsonschema>=4.18", "numpy>=1.22", "sympy>=1.10")
ORG = "mmverify"
AGENT_TIMEOUT_SEC = 3600.0
VERIFIER_TIMEOUT_SEC = 600.0

# Files of the engine that are copied (sources and bundled JSON schemas).
_ENGINE_SUFFIXES = (".py", ".json")
_PACKAGE_REF = re.compile(r"\bmmverify((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_RELATIVE_REF = re.compile(r"^\s*from \.([A-Za-z_][A-Za-z0-9_]*) import", re.MULTILINE)


@dataclass(frozen=True)
class ExportedTask:
    task_id: str
    path: str


def artifact_path(task_id: str) -> str:
    """Where the agent writes its artifact: ``/app/<task-id>_result.json``."""
    return f"{APP_DIR}/{default_artifact_name(task_id)}"


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def task_toml(task) -> str:
    """The ``task.toml`` of one task."""
    from mmverify import __version__

    return "\n".join([
        'schema_version = "1.4"',
        "",
        "[task]",
        f"name = {_toml_str(f'{ORG}/{task.id}')}",
        f"version = {_toml_str(__version__)}",
        f"description = {_toml_str(task.title)}",
        f"keywords = [{', '.join(_toml_str(k) for k in (task.suite.lower(), str(task.year), 'math-modelling'))}]",
        "",
        "[metadata]",
        f"mmverify_task_id = {_toml_str(task.id)}",
        f"suite = {_toml_str(task.suite)}",
        f"year = {task.year}",
        f"problem = {_toml_str(task.problem)}",
        f"headline = {'true' if task.headline else 'false'}",
        f"artifact = {_toml_str(artifact_path(task.id))}",
        "",
        "[verifier]",
        f"timeout_sec = {VERIFIER_TIMEOUT_SEC}",
        "",
        "[agent]",
        f"timeout_sec = {AGENT_TIMEOUT_SEC}",
        "",
        "[environment]",
        "build_timeout_sec = 600.0",
        "cpus = 2",
        "memory_mb = 4096",
        "",
    ])


def dockerfile() -> str:
    deps = " ".join(f"'{d}'" for d in RUNTIME_DEPS)
    return (f"FROM {BASE_IMAGE}\n\n"
            "# the engine's runtime dependencies (the engine itself ships in tests/)\n"
            f"RUN python3 -m pip install --no-cache-dir {deps}\n\n"
            f"WORKDIR {APP_DIR}\n")


def test_sh(task_id: str) -> str:
    """``tests/test.sh``: run ``mmverify verify`` with the shipped engine and anchors.
    ``MMVERIFY_APP_DIR`` and ``MMVERIFY_REWARD_DIR`` override ``/app`` and
    ``/logs/verifier`` (for running the script outside a container)."""
    deps = " ".join(f"'{d}'" for d in RUNTIME_DEPS)
    name = default_artifact_name(task_id)
    return f"""#!/usr/bin/env bash
# Verifier of the mmverify task {task_id}: scores {artifact_path(task_id)} and writes
# {REWARD_DIR}/reward.json = {{"reward": <O-EVAL>}} and {REWARD_DIR}/reward-details.json
# (the full report: status, schema errors, gate verdicts, per-metric scores).
# A reward this script did not write never stands: what the agent left at
# reward.json is removed first, and every error, every exit other than a grade,
# ends with reward 0.0.
set -u
TESTS="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
APP="${{MMVERIFY_APP_DIR:-{APP_DIR}}}"
REWARD="${{MMVERIFY_REWARD_DIR:-{REWARD_DIR}}}"
mkdir -p "$REWARD"
rm -rf "$REWARD/reward.json" "$REWARD/reward-details.json"

zero() {{
  rm -rf "$REWARD/reward.json"
  echo '{{"reward": 0.0}}' > "$REWARD/reward.json"
}}

# Python runs from the shipped engine's folder, never from the agent's: with
# -m the working folder comes first on the import path, so a package the agent
# left in its folder (a "mmverify" or a "click" of its own) is never imported;
# -s leaves out the user's site folder, and PYTHONPATH is not read.
cd "$TESTS/engine" || {{ zero; exit 3; }}
unset PYTHONPATH PYTHONSTARTUP PYTHONHOME

if ! python3 -s -c 'import click, jsonschema, numpy, sympy' >/dev/null 2>&1; then
  python3 -s -m pip install --quiet {deps}
fi

python3 -s -m mmverify verify \\
  --task {task_id} --artifact "$APP/{name}" \\
  --reward-dir "$REWARD" --anchors "$TESTS/anchors"
status=$?

# 0 scored, 1 the artifact failed (reward 0 is the verdict): both are grades,
# and the reward is the one verify wrote. Any other exit (2: reward folder not
# writable, 3: task or anchors broken, a crash of Python itself) writes 0.0
# and is passed on, so that Harbor reports a verifier error.
echo "mmverify verify: exit $status (details: $REWARD/reward-details.json)"
if [ "$status" -le 1 ] && [ -s "$REWARD/reward.json" ]; then
  exit 0
fi
zero
if [ "$status" -le 1 ]; then
  exit 0
fi
exit "$status"
"""


def solve_sh(task_id: str, oracle_text: str) -> str:
    """``solution/solve.sh``: writes the oracle artifact (for Harbor's oracle
    agent); ``MMVERIFY_APP_DIR`` overrides ``/app``."""
    marker = "MMVERIFY_ORACLE_EOF"
    if marker in oracle_text:  # pragma: no cover - the marker never occurs in an anchor
        raise ValueError("oracle artifact holds the here-document marker")
    return (f"#!/usr/bin/env bash\n# Writes the oracle artifact of {task_id} (it scores 1.0).\nset -eu\n"
            f'APP="${{MMVERIFY_APP_DIR:-{APP_DIR}}}"\nmkdir -p "$APP"\n'
            f"cat > \"$APP/{default_artifact_name(task_id)}\" <<'{marker}'\n"
            f"{oracle_text.rstrip()}\n{marker}\n")


# ------------------------------------------------------------------- engine

def _package_dir(name: str) -> str | None:
    """The source folder of package ``name``; None for a module or nothing."""
    try:
        spec = importlib.util.find_spec(name)   # imports the parent packages
    except (ImportError, AttributeError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def engine_packages() -> dict[str, str]:
    """``{package name: source folder}`` of the installed engine: ``mmverify``
    and every subpackage its sources name (``mmverify.X.Y`` or ``from .X
    import``), to a fixed point. Works for a wheel install and for an editable
    install whose subpackages live in other folders."""
    found: dict[str, str] = {}
    todo = ["mmverify"]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        folder = _package_dir(name)
        if folder is None:
            continue
        found[name] = folder
        for fname in sorted(os.listdir(folder)):
            if not fname.endswith(".py"):
                continue
            with open(os.path.join(folder, fname), encoding="utf-8") as fh:
                src = fh.read()
            dotted = [("mmverify" + d).split(".") for d in _PACKAGE_REF.findall(src)]
            dotted += [name.split(".") + [m] for m in _RELATIVE_REF.findall(src)]
            for parts in dotted:
                # the longest prefix that is a package; "mmverify.scoring.panel.PanelScore"
                # stops at mmverify.scoring (panel is a module)
                for k in range(2, len(parts) + 1):
                    prefix = ".".join(parts[:k])
                    if prefix not in found and _package_dir(prefix) is None:
                        break
                    todo.append(prefix)
    return found


def copy_engine(dest: str) -> list[str]:
    """Copy the engine's sources into ``dest/mmverify/...``; the package names copied."""
    packages = engine_packages()
    for name, folder in sorted(packages.items()):
        target = os.path.join(dest, *name.split("."))
        os.makedirs(target, exist_ok=True)
        for fname in sorted(os.listdir(folder)):
            src = os.path.join(folder, fname)
            if os.path.isfile(src) and fname.endswith(_ENGINE_SUFFIXES):
                shutil.copyfile(src, os.path.join(target, fname))
    return sorted(packages)


# ------------------------------------------------------------------- export

def _write(path: str, text: str, executable: bool = False) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    if executable:
        os.chmod(path, 0o755)


def export_task(task, out_dir: str, engine_src: str) -> ExportedTask:
    """Write the Harbor folder of one loaded task into ``out_dir/<task-id>``;
    ``engine_src`` is a folder prepared by :func:`copy_engine`."""
    root = os.path.join(out_dir, task.id)
    if os.path.exists(root):
        shutil.rmtree(root)
    _write(os.path.join(root, "instruction.md"), file_prompt(task, artifact_path(task.id)))
    _write(os.path.join(root, "task.toml"), task_toml(task))
    _write(os.path.join(root, "environment", "Dockerfile"), dockerfile())
    with open(task.oracle_path, encoding="utf-8") as fh:
        oracle = fh.read()
    _write(os.path.join(root, "solution", "solve.sh"), solve_sh(task.id, oracle), executable=True)
    tests = os.path.join(root, "tests")
    _write(os.path.join(tests, "test.sh"), test_sh(task.id), executable=True)
    anchors = os.path.join(tests, "anchors")
    shutil.copytree(task.directory, os.path.join(anchors, task.id),
                    ignore=shutil.ignore_patterns("__pycache__", ".*"))
    index = {"schema_version": 1, "tasks": [{"id": task.id, "suite": task.suite, "year": task.year,
                                             "problem": task.problem, "headline": task.headline}]}
    _write(os.path.join(anchors, "index.json"), json.dumps(index, indent=2) + "\n")
    shutil.copytree(engine_src, os.path.join(tests, "engine"))
    return ExportedTask(task.id, root)


def export_harbor(out_dir: str, task_ids: Iterable[str] | None = None,
                  anchors_dir: str | None = None) -> list[ExportedTask]:
    """Write one Harbor task folder per task (all tasks of the anchors folder
    when ``task_ids`` is empty). Unknown ids raise
    :class:`mmverify.tasks.TaskLoadError` before anything is written."""
    import tempfile

    from mmverify.tasks import load_task, task_ids as all_ids

    ids: Sequence[str] = list(task_ids or ()) or all_ids(anchors_dir)
    tasks = [load_task(tid, anchors_dir) for tid in dict.fromkeys(ids)]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        copy_engine(tmp)
        return [export_task(t, out_dir, tmp) for t in tasks]
