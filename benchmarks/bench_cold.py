"""Cold start: ``python -m mmverify score ORACLE`` and ``python -m mmverify
verify`` on each of the 18 oracles, against ``python -c pass``, interleaved in
one run (wall and child CPU time, median of the repetitions), with the heavy
imports (``-X importtime``) and the in-process phases of one start.

The runs use a compiled-task cache in a fresh temporary folder: the first
start of each task fills it (that start is reported apart, as the cost of a
cache miss) and the measured starts read it, as every start after the first
does on a user's machine. ``PYTHONDONTWRITEBYTECODE`` is cleared for the
children, so the warm-up runs leave byte-code caches as an installation does.

Run alone: ``python benchmarks/bench_cold.py [--reps N] [--python PATH]``;
``--python`` times another environment's interpreter (for instance one with
a regular ``pip install .``, whose start differs from an editable install's).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

from bench_common import _child_run, log, median

IDENTITY_TASK = "cumcm-2024-a-dragon-dance"      # identity gates
PLAIN_TASK = "mcm-2024-b-submersible-search"     # no identity gate
HEAVY_MODULES = ("sympy", "numpy", "jsonschema", "click", "mpmath", "matplotlib")

_PHASES = r"""
import json, sys, time
clock = time.process_time
t = [clock()]
import click, mmverify.cli, mmverify.commands.score
t.append(clock())
import mmverify.pipeline.evaluate, mmverify.pipeline.report, mmverify.batch.score_files
t.append(clock())
from mmverify.tasks import load_task
task = load_task(sys.argv[1])
t.append(clock())
from mmverify.gates import compile_gates
compile_gates(task)
t.append(clock())
from mmverify.pipeline.evaluate import score_artifact
from mmverify.reading.artifact import parse_file
report = score_artifact(task, parse_file(task.oracle_path))
t.append(clock())
mmverify.pipeline.report.render(report, "table")
report.to_json()
t.append(clock())
names = ["import click + CLI", "import pipeline", "load task (cached checks, oracle check)",
         "import gates + compile", "parse + score (schema, gates, panel)", "render table + JSON"]
heavy = sorted(m for m in ("sympy", "jsonschema", "numpy") if m in sys.modules)
print(json.dumps({"phases": {n: t[i + 1] - t[i] for i, n in enumerate(names)}, "heavy_loaded": heavy}))
"""


def importtime(argv: list[str], env: dict[str, str], cwd: str | None = None) -> dict[str, Any]:
    """Cumulative import time (ms) of the heavy modules, and whether they load."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    cumulative: dict[str, float] = {}
    total = 0.0
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
        if not m:
            continue
        name, cum, indent = m.group(4), int(m.group(2)) / 1000, len(m.group(3))
        if indent == 1:                 # a top-level import
            total += cum
        if name in HEAVY_MODULES or (name.startswith("mmverify") and name.count(".") <= 1):
            cumulative[name] = max(cumulative.get(name, 0.0), cum)
    heavy = {m: round(cumulative[m], 1) for m in HEAVY_MODULES if m in cumulative}
    own = {m: round(v, 1) for m, v in sorted(cumulative.items(), key=lambda kv: -kv[1])
           if m.startswith("mmverify")}
    return {"imports_ms_total": round(total, 1), "heavy_ms": heavy,
            "not_imported": [m for m in HEAVY_MODULES if m not in cumulative], "mmverify_ms": own}


def bench_cold(reps: int, python: str | None = None) -> dict[str, Any]:
    """Every oracle, ``score`` and ``verify``, interleaved with ``python -c pass``
    (``python``: the interpreter whose starts are timed; default this one)."""
    from mmverify.tasks import load_all

    tasks = load_all()
    py = python or sys.executable
    with tempfile.TemporaryDirectory(prefix="mmverify-bench-") as tmp:
        env = dict(os.environ)
        env.pop("PYTHONPROFILEIMPORTTIME", None)
        # byte-code caches are written (as pip does at install time): a start
        # that recompiles every module measures the compiler, not mmverify
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["MMVERIFY_CACHE"] = os.path.join(tmp, "cache")
        reward_dir = os.path.join(tmp, "reward")
        # the interpreter's start with and without ``site`` (which runs the
        # .pth files: an editable install's finder costs every start, python
        # -c pass included, and so lowers every ratio below a regular install's)
        cases: dict[str, list[str]] = {"python -c pass": [py, "-c", "pass"], "python -S -c pass": [py, "-S", "-c", "pass"]}
        for t in tasks:
            cases[f"score {t.id}"] = [py, "-m", "mmverify", "score", t.oracle_path]
        for t in tasks:
            cases[f"verify {t.id}"] = [py, "-m", "mmverify", "verify", "--task", t.id, "--artifact", t.oracle_path,
                                       "--reward-dir", reward_dir, "--quiet"]
        cases[f"score {IDENTITY_TASK} --no-gates"] = [py, "-m", "mmverify", "score",
                                                      next(t for t in tasks if t.id == IDENTITY_TASK).oracle_path,
                                                      "--no-gates"]
        # the first start of each task meets an empty cache (jsonschema and, for
        # the JSON report of verify, sympy run once and their results are kept)
        first: dict[str, dict[str, float]] = {}
        for name, argv in cases.items():
            w, c, _ = _child_run(argv, env, tmp)
            if name.startswith("score "):
                first[name] = {"wall_s": w, "cpu_s": c}
        for argv in cases.values():           # warm the OS cache and the .pyc files
            _child_run(argv, env, tmp)
        walls: dict[str, list[float]] = {k: [] for k in cases}
        cpus: dict[str, list[float]] = {k: [] for k in cases}
        codes: dict[str, int] = {}
        for r in range(reps):                  # interleaved, so load changes hit every case alike
            for name, argv in cases.items():
                w, c, rc = _child_run(argv, env, tmp)
                walls[name].append(w)
                cpus[name].append(c)
                codes[name] = rc
            log(f"  cold round {r + 1}/{reps}")
        base_w, base_c = median(walls["python -c pass"]), median(cpus["python -c pass"])
        rows = {}
        for name in cases:
            rows[name] = {"wall_s": median(walls[name]), "cpu_s": median(cpus[name]),
                          "ratio_wall": median(walls[name]) / base_w, "ratio_cpu": median(cpus[name]) / base_c,
                          "exit_code": codes[name]}
        phases: dict[str, Any] = {}
        for label, tid in (("identity", IDENTITY_TASK), ("plain", PLAIN_TASK)):
            runs: dict[str, list[float]] = {}
            heavy: list[str] = []
            for _ in range(max(1, min(reps, 3))):
                out = subprocess.run([py, "-c", _PHASES, tid], capture_output=True, text=True, env=env, cwd=tmp)
                if out.returncode == 0:
                    got = json.loads(out.stdout)
                    heavy = got["heavy_loaded"]
                    for k, v in got["phases"].items():
                        runs.setdefault(k, []).append(v)
            phases[label] = {"ms_cpu": {k: round(median(v) * 1000, 1) for k, v in runs.items()},
                             "heavy_loaded": heavy}
        imports = {
            "identity": importtime(cases[f"score {IDENTITY_TASK}"], env, tmp),
            "plain": importtime(cases[f"score {PLAIN_TASK}"], env, tmp),
            "verify_identity": importtime(cases[f"verify {IDENTITY_TASK}"], env, tmp),
            "help": importtime([py, "-m", "mmverify", "--help"], env, tmp),
        }
    score_rows = {k: v for k, v in rows.items() if k.startswith("score ") and not k.endswith("--no-gates")}
    verify_rows = {k: v for k, v in rows.items() if k.startswith("verify ")}
    worst_score = max(score_rows, key=lambda k: score_rows[k]["ratio_wall"])
    worst_verify = max(verify_rows, key=lambda k: verify_rows[k]["ratio_wall"])
    first_ratio = {k: v["wall_s"] / base_w for k, v in first.items()}
    editable = subprocess.run([py, "-c", "import sys; print(any(m.startswith('__editable__') for m in sys.modules))"],
                              capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout.strip() == "True"
    return {"reps": reps, "cases": rows, "phases_ms_cpu": phases, "imports": imports, "editable_install": editable,
            "worst_score": worst_score, "worst_verify": worst_verify,
            "worst_score_ratio_wall": score_rows[worst_score]["ratio_wall"],
            "worst_score_ratio_cpu": max(v["ratio_cpu"] for v in score_rows.values()),
            "worst_verify_ratio_wall": verify_rows[worst_verify]["ratio_wall"],
            "worst_verify_ratio_cpu": max(v["ratio_cpu"] for v in verify_rows.values()),
            "median_score_ratio_wall": median(v["ratio_wall"] for v in score_rows.values()),
            "first_start_empty_cache": {"median_ratio_wall": median(first_ratio.values()),
                                        "worst_ratio_wall": max(first_ratio.values())}}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="mmverify cold start, every oracle")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--python", default=None, help="the interpreter to time (default: this one)")
    args = ap.parse_args(argv)
    res = bench_cold(args.reps, args.python)
    base = res["cases"]["python -c pass"]
    print(f"interpreter: {args.python or sys.executable} "
          f"({'editable' if res['editable_install'] else 'regular'} install of mmverify)")
    print(f"python -c pass: {base['wall_s'] * 1000:.0f} ms wall, {base['cpu_s'] * 1000:.0f} ms cpu")
    for name, c in res["cases"].items():
        if name != "python -c pass":
            print(f"{name:52s} {c['wall_s'] * 1000:6.0f} ms {c['ratio_wall']:5.2f}x   cpu {c['cpu_s'] * 1000:5.0f} ms "
                  f"{c['ratio_cpu']:5.2f}x")
    print(f"worst score: {res['worst_score']} {res['worst_score_ratio_wall']:.2f}x wall; "
          f"worst verify: {res['worst_verify']} {res['worst_verify_ratio_wall']:.2f}x wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
