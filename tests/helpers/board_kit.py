"""Shared helpers for the board tests (no tests here): small real tasks, artifacts,
manifests, the CLI, and an independent re-computation of the board's numbers
straight from the definitions in docs/board.md."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

from tests.helpers.taskfactory import speed_task

SPEED = "1.246266"
FORCED = {"infeasible", "invalid", "error", "missing", "absent"}
GATE = {"id": "speed_cap", "form": "range", "level": "A", "severity": "hard", "path": "result.speed", "max": "3",
        "description": "test cap"}


def synthetic_anchors(folder: str) -> str:
    """Three small real tasks: t-a (CUMCM), t-b (MCM), t-c (MCM, headline false);
    each has a hard range gate speed <= 3."""
    speed_task(folder, "t-a", gates=[GATE])
    speed_task(folder, "t-b", gates=[GATE], suite="MCM")
    speed_task(folder, "t-c", gates=[GATE], suite="MCM", headline=False, headline_reason="literature split (test)")
    return folder


def speed_artifact(speed: str = SPEED, pitch: str = "0.4", handles: int = 224) -> str:
    return '{"result": {"speed": %s, "pitch": %s, "handles": %d, "ratio": 1.604793}}\n' % (speed, pitch, handles)


def write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def write_manifest(path: str, rows: list) -> str:
    """rows: dicts (dumped as JSON) or raw strings (written as they are)."""
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path


def run_board(*args: str, cwd: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmverify", "board", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def frac(text):
    return None if text is None else Fraction(text)


# --------------------------------------------------- independent computation

def expected_board(cells: dict, task_suite: dict, task_headline: dict, baseline: str) -> dict:
    """Recompute the board from per-cell expectations.

    cells: {(entry, task, seed): (status, oeval Fraction or None)}; every entry
    must have every (task, seed) it is meant to have (absent cells included as
    ("absent", 0)). Returns {entry: {...}} with exact values."""
    entries = sorted({e for e, _, _ in cells})
    tasks = sorted({t for _, t, _ in cells})
    headline = [t for t in tasks if task_headline[t]]
    out = {}

    def value(c):
        status, o = c
        return Fraction(0) if status in FORCED else o

    def task_mean(e, t):
        seeds = sorted({s for ee, tt, s in cells if ee == e and tt == t})
        vals = [value(cells[(e, t, s)]) for s in seeds]
        forced = all(cells[(e, t, s)][0] in FORCED for s in seeds)
        return sum(vals, Fraction(0)) / len(vals), forced

    for e in entries:
        seeds = sorted({s for ee, _, s in cells if ee == e})

        def stat(ts, e=e, seeds=seeds):
            per_seed = [sum((value(cells[(e, t, s)]) for t in ts), Fraction(0)) / len(ts) for s in seeds]
            mean = sum(per_seed, Fraction(0)) / len(per_seed)
            var = sum(((m - mean) ** 2 for m in per_seed), Fraction(0)) / (len(per_seed) - 1) if len(per_seed) > 1 else None
            return mean, var

        mean, var = stat(headline)
        suites = {}
        for su in sorted({task_suite[t] for t in headline}):
            suites[su] = stat([t for t in headline if task_suite[t] == su])[0]
        terms = []
        for t in headline:
            o, forced = task_mean(e, t)
            f, bforced = task_mean(baseline, t)
            if forced and bforced:
                b = Fraction(0)
            elif forced:
                b = Fraction(-1)
            elif f == 1:
                b = Fraction(0) if o == 1 else Fraction(-1)
            else:
                b = max(Fraction(-1), min(Fraction(1), (o - f) / (1 - f)))
            terms.append(b)
        out[e] = {"mean": mean, "var": var, "sd": math.sqrt(var) if var is not None else None,
                  "suites": suites, "multi_bo": 1 + sum(terms, Fraction(0)) / len(terms),
                  "task_means": {t: task_mean(e, t)[0] for t in tasks},
                  "missing": sum(1 for (ee, _, _), c in cells.items() if ee == e and c[0] in ("missing", "absent")),
                  "gate_zeroes": sum(1 for (ee, _, _), c in cells.items() if ee == e and c[0] == "infeasible")}
    return out


def check_board_against(board: dict, exp: dict) -> None:
    """Assert a board JSON matches an expected_board() computation exactly."""
    by_entry = {er["entry"]: er for er in board["entries"]}
    assert set(by_entry) == set(exp)
    for e, x in exp.items():
        er = by_entry[e]
        assert frac(er["headline"]["oeval_exact"]) == x["mean"], e
        if x["var"] is None:
            assert er["headline"]["sd"] is None and er["headline"]["variance_exact"] is None
        else:
            assert frac(er["headline"]["variance_exact"]) == x["var"], e
            assert er["headline"]["sd"] == round(x["sd"], 6)
        assert {su: frac(v["oeval_exact"]) for su, v in er["suites"].items()} == x["suites"], e
        assert frac(er["multi_bo_exact"]) == x["multi_bo"], e
        assert {t["task"]: frac(t["oeval_exact"]) for t in er["tasks"]} == x["task_means"], e
        assert er["counts"]["missing"] == x["missing"], e
        assert er["counts"]["hard_gate_zeroes"] == x["gate_zeroes"], e
    means = [frac(er["headline"]["oeval_exact"]) for er in board["entries"]]
    assert means == sorted(means, reverse=True)
    assert [er["rank"] for er in board["entries"]] == list(range(1, len(means) + 1))
