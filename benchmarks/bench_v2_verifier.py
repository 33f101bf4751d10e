"""``mmverify verify`` beside the public TB-MathModeling v2 harness verifier,
on the same artifact, interleaved in one run with ``python -c pass``.

The v2 verifier of a task is its ``tests/test.sh``: ``pytest --ctrf ...
test_outputs.py -rA`` and then ``python score_result.py``. Both scripts name
fixed container paths (``/tests/``, ``/root/results/``, ``/logs/verifier/``);
here they are copied into a temporary folder with those three path prefixes
replaced by folders inside it (nothing else is changed), and the two commands
of ``test.sh`` run in order, as the harness runs them. The v2 side needs
``pytest`` and ``pytest-json-ctrf`` (the versions its verifier image pins:
``pip install pytest==8.4.1 pytest-json-ctrf==0.3.5``) in the interpreter
given by ``--v2-python`` (default: this one).

    python benchmarks/bench_v2_verifier.py --v2-repo CHECKOUT [--task ID] [--reps N]

``CHECKOUT`` is a clone of the public repository
``wxj630/terminal-bench-math-modeling``. The artifact is mmverify's oracle of
the task (the v2 reference with the published corrections). Each figure is
the median over the repetitions of wall time and child CPU time (user +
system); the ratios are the issue's acceptance figures: ``verify`` against
``python -c pass`` (target <= 5x) and against the v2 verifier (target <= 0.2x).

The same rounds time the floor the project's rules set for any verifier
start (:func:`floor_source`: json, decimal, fractions and frozen dataclasses
shaped as those a ``verify`` run defines, nothing read or scored), and a
child reports the CPU time of ``verify``'s work alone, every module it needs
already imported. The floor over the v2 verifier is the least ratio any
start under those rules can reach on this machine.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from bench_common import _child_run, log, median

DEFAULT_TASK = "cumcm-2024-a-dragon-dance"
V2_PATHS = ("/tests/", "/root/results/", "/logs/verifier/")

FLOOR = "floor: json, decimal, fractions, frozen dataclasses"

# Run in a child as ``python -c _PROBE MODE ARGS``: ``mmverify ARGS`` in
# process. MODE ``--shapes`` prints, as JSON, the modules the run loaded and the
# field count of every dataclass defined in mmverify's modules; MODE ``--work``
# (``python -c _PROBE --work MODULES ARGS``) imports the modules first and
# prints the CPU seconds of the run alone.
_PROBE = """
import dataclasses, json, sys, time
work = sys.argv[1] == "--work"
if work:
    for m in json.loads(sys.argv[2]):
        try:
            __import__(m)
        except ImportError:
            pass
sys.argv = ["mmverify"] + json.loads(sys.argv[-1])
from mmverify.launch import main
t = time.process_time()
try:
    main()
except SystemExit:
    pass
t = time.process_time() - t
if work:
    print(t)
else:
    mine = [m for m in list(sys.modules) if m.split(".")[0] == "mmverify"]
    shapes = sorted(len(dataclasses.fields(c)) for m in mine for c in vars(sys.modules[m]).values()
                    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == m)
    print(json.dumps({"modules": [m for m in sys.modules if m not in sys.builtin_module_names], "shapes": shapes}))
"""


def floor_source(shapes: list[int]) -> str:
    """A program paying what the project's rules impose on any verifier start:
    json (the artifact and the reports), decimal and fractions (exact
    arithmetic), and frozen dataclasses with the field counts of the records
    a ``verify`` defines. It reads and scores nothing."""
    lines = ["import json, decimal, fractions", "from dataclasses import dataclass"]
    for i, n in enumerate(shapes):
        lines += ["@dataclass(frozen=True)", f"class R{i}:", "    'a record'"]
        lines += [f"    f{j}: int" for j in range(n)] or ["    pass"]
    return "\n".join(lines) + "\n"


def v2_tests_dir(repo: str, task_id: str) -> str:
    """The task's ``tests/`` folder in a checkout of the v2 repository."""
    hits = sorted(glob.glob(os.path.join(repo, "tasks", "*", task_id, "tests")))
    if not hits:
        raise SystemExit(f"error: no tasks/*/{task_id}/tests in {repo}")
    return hits[0]


def stage_v2(tests: str, tmp: str, artifact: str, task_id: str) -> dict[str, str]:
    """Copy the v2 verifier into ``tmp`` with its three container paths
    rewritten; returns the folders standing in for them."""
    roots = {p: os.path.join(tmp, name) for p, name in zip(V2_PATHS, ("tests", "results", "verifier"))}
    for d in roots.values():
        os.makedirs(d, exist_ok=True)
    for name in os.listdir(tests):
        src = os.path.join(tests, name)
        if not os.path.isfile(src):
            continue
        if name.endswith(".py"):
            with open(src, encoding="utf-8") as fh:
                text = fh.read()
            for prefix, root in roots.items():
                text = text.replace(prefix, root + "/")
            with open(os.path.join(roots["/tests/"], name), "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            shutil.copyfile(src, os.path.join(roots["/tests/"], name))
    shutil.copyfile(artifact, os.path.join(roots["/root/results/"], f"{task_id}_result.json"))
    return roots


def has_ctrf(python: str) -> bool:
    """Whether ``python`` has pytest with the ``--ctrf`` option of pytest-json-ctrf."""
    return subprocess.run([python, "-c", "import pytest, ctrf"], capture_output=True).returncode == 0


def bench_v2(repo: str, task_id: str, reps: int, v2_python: str) -> dict[str, Any]:
    from mmverify.tasks import load_task

    if not has_ctrf(v2_python):
        raise SystemExit(f"error: {v2_python} lacks pytest or pytest-json-ctrf "
                         "(pip install pytest==8.4.1 pytest-json-ctrf==0.3.5)")
    task = load_task(task_id)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="mmverify-v2-") as tmp:
        roots = stage_v2(v2_tests_dir(repo, task_id), tmp, task.oracle_path, task_id)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["MMVERIFY_CACHE"] = os.path.join(tmp, "cache")
        tests, verifier = roots["/tests/"], roots["/logs/verifier/"]
        v2_pytest = [v2_python, "-m", "pytest", "--ctrf", os.path.join(verifier, "ctrf.json"),
                     os.path.join(tests, "test_outputs.py"), "-rA", "-p", "no:cacheprovider"]
        v2_score = [v2_python, os.path.join(tests, "score_result.py")]
        verify_args = ["verify", "--task", task_id, "--artifact", task.oracle_path,
                       "--reward-dir", os.path.join(tmp, "mmverify"), "--quiet"]
        probe = json.loads(subprocess.run([py, "-c", _PROBE, "--shapes", json.dumps(verify_args)], env=env,
                                          cwd=tmp, capture_output=True, text=True, check=True).stdout)
        cases = {
            "python -c pass": [[py, "-c", "pass"]],
            "mmverify verify": [[py, "-m", "mmverify"] + verify_args],
            "v2 verifier (pytest + score_result.py)": [v2_pytest, v2_score],
            FLOOR: [[py, "-c", floor_source(probe["shapes"])]],
        }
        work_argv = [py, "-c", _PROBE, "--work", json.dumps(probe["modules"]), json.dumps(verify_args)]
        for steps in cases.values():          # warm: byte-code caches, compiled-task cache, OS cache
            for argv in steps:
                _child_run(argv, env, tmp)
        walls: dict[str, list[float]] = {k: [] for k in cases}
        cpus: dict[str, list[float]] = {k: [] for k in cases}
        codes: dict[str, list[int]] = {k: [] for k in cases}
        for r in range(reps):
            for name, steps in cases.items():
                w = c = 0.0
                rcs = []
                for argv in steps:
                    dw, dc, rc = _child_run(argv, env, tmp)
                    w, c = w + dw, c + dc
                    rcs.append(rc)
                walls[name].append(w)
                cpus[name].append(c)
                codes[name] = rcs
            log(f"  v2 round {r + 1}/{reps}")
        work = median([float(subprocess.run(work_argv, env=env, cwd=tmp, capture_output=True, text=True,
                                             check=True).stdout) for _ in range(reps)])
        with open(os.path.join(verifier, "reward.txt"), encoding="utf-8") as fh:
            v2_reward = fh.read().strip()
    rows = {k: {"wall_s": median(walls[k]), "cpu_s": median(cpus[k]), "exit_codes": codes[k]} for k in cases}
    base, ours, theirs = rows["python -c pass"], rows["mmverify verify"], rows["v2 verifier (pytest + score_result.py)"]
    floor = rows[FLOOR]
    return {"task": task_id, "reps": reps, "cases": rows, "v2_reward": v2_reward,
            "records": len(probe["shapes"]), "fields": sum(probe["shapes"]), "work_cpu_s": work,
            "floor_over_v2_cpu": floor["cpu_s"] / theirs["cpu_s"],
            "floor_and_work_over_v2_cpu": (floor["cpu_s"] + work) / theirs["cpu_s"],
            "verify_over_python_wall": ours["wall_s"] / base["wall_s"],
            "verify_over_python_cpu": ours["cpu_s"] / base["cpu_s"],
            "verify_over_v2_wall": ours["wall_s"] / theirs["wall_s"],
            "verify_over_v2_cpu": ours["cpu_s"] / theirs["cpu_s"]}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--v2-repo", required=True, metavar="CHECKOUT", help="a clone of the public v2 repository")
    ap.add_argument("--task", default=DEFAULT_TASK)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--v2-python", default=sys.executable, metavar="PYTHON",
                    help="interpreter with pytest and pytest-json-ctrf for the v2 side")
    args = ap.parse_args(argv)
    res = bench_v2(args.v2_repo, args.task, args.reps, args.v2_python)
    for name, row in res["cases"].items():
        print(f"{name:42s} {row['wall_s'] * 1000:7.0f} ms wall {row['cpu_s'] * 1000:7.0f} ms cpu  exit {row['exit_codes']}")
    print(f"verify / python -c pass: {res['verify_over_python_wall']:.2f}x wall, {res['verify_over_python_cpu']:.2f}x cpu"
          " (target <= 5x)")
    print(f"verify / v2 verifier:    {res['verify_over_v2_wall']:.3f}x wall, {res['verify_over_v2_cpu']:.3f}x cpu"
          " (target <= 0.2x)")
    print(f"v2 reward on this artifact: {res['v2_reward']}")
    print(f"{FLOOR} ({res['records']} records, {res['fields']} fields)\n"
          f"  = {res['floor_over_v2_cpu']:.3f}x the v2 verifier's cpu; with verify's work in process "
          f"({res['work_cpu_s'] * 1000:.0f} ms cpu, every module already imported): "
          f"{res['floor_and_work_over_v2_cpu']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
