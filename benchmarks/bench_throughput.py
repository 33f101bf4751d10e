"""In-process throughput: ``score_artifact`` (schema, gates, panel) and the
verdict-only reward path over the 18 oracle artifacts repeated, beside the
floor (``json.loads`` plus reading the same fields, on the same bytes).

Replay is excluded, as the targets ask, and reported apart: a task's replay
(level-C simulation of the witness) is run once per oracle and its result
reused for every scoring of that oracle (every artifact of these runs is its
task's oracle, so the result is the same); the replay's own cost per task is
measured separately.

Run alone: ``python benchmarks/bench_throughput.py [--quick]``.
"""
from __future__ import annotations

import gc
import json
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

from bench_common import Clock, log, median

def _score_all(oracles, rounds: int, per_task: dict[str, list[float]] | None = None) -> tuple[float, float, int]:
    from mmverify.pipeline.evaluate import score_artifact

    n = 0
    with Clock() as clk:
        if per_task is None:
            for _ in range(rounds):
                for task, art, _raw in oracles:
                    score_artifact(task, art)
                    n += 1
        else:
            pc = time.process_time
            for _ in range(rounds):
                for task, art, _raw in oracles:
                    c0 = pc()
                    score_artifact(task, art)
                    per_task[task.id].append(pc() - c0)
                    n += 1
    return clk.wall, clk.cpu, n


def stage_split(oracles, rounds: int) -> dict[str, dict[str, float]]:
    """CPU ms per artifact of each stage of ``score_artifact``, per task (the
    same calls: the gate report and the panel whose records are made when the
    report is rendered), and of rendering the report (``render``: its JSON
    form, the gate instances and panel records made then)."""
    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.gates import score_gates
    from mmverify.scoring.panel import deferred_panel
    from mmverify.pipeline.validate import validate_artifact

    out = {}
    pc = time.process_time
    for task, art, _raw in oracles:
        s = {"schema": [], "gates": [], "panel": [], "render": []}
        for _ in range(rounds):
            c0 = pc()
            gates = score_gates(task, art.data)
            c1 = pc()
            validate_artifact(task.artifact_schema, art.data)
            c2 = pc()
            deferred_panel(task, art.data, gates)
            c3 = pc()
            report = score_artifact(task, art)
            c4 = pc()
            report.as_dict()
            c5 = pc()
            s["gates"].append(c1 - c0)
            s["schema"].append(c2 - c1)
            s["panel"].append(c3 - c2)
            s["render"].append(c5 - c4)
        out[task.id] = {k: median(v) * 1000 for k, v in s.items()}
    return out


@contextmanager
def replay_excluded(oracles, reps: int = 3) -> Iterator[dict[str, float]]:
    """Within the block, ``run_replay`` returns each oracle's replay result
    computed once; yields the replay's own CPU ms per task (median of ``reps``)."""
    from mmverify import replay

    real = replay.run_replay
    memo: dict[str, Any] = {}
    cost: dict[str, float] = {}
    pc = time.process_time
    for task, art, _raw in oracles:
        if replay.replay_module(task) is None:
            continue
        runs = []
        for _ in range(reps):
            c0 = pc()
            memo[task.id] = real(task, art.data)
            runs.append(pc() - c0)
        cost[task.id] = median(runs) * 1000

    def reused(task, data, **kwargs):
        return memo[task.id] if task.id in memo else real(task, data, **kwargs)

    replay.run_replay = reused
    try:
        yield cost
    finally:
        replay.run_replay = real


def bench_throughput(oracles, quick: bool) -> dict[str, Any]:
    with replay_excluded(oracles) as replay_ms:
        res = _throughput(oracles, quick)
    res["replay_ms_cpu"] = replay_ms
    return res


def _throughput(oracles, quick: bool) -> dict[str, Any]:
    from mmverify.pipeline.evaluate import score_artifact

    n_tasks = len(oracles)
    for task, art, _raw in oracles:        # warm: task load, compiled gates, validators
        score_artifact(task, art)
    gc.collect()
    # scaling in the number of artifacts: 1x and 10x the 18 oracles here; the
    # 100x point is the long run below (chunks of 100 rounds = 1,800 artifacts)
    scale_reps = {1: 5, 10: 3} if quick else {1: 15, 10: 7}
    scale = {}
    for factor, reps in scale_reps.items():
        walls, cpus = [], []
        for _ in range(reps):
            w, c, n = _score_all(oracles, factor)
            walls.append(w)
            cpus.append(c)
        scale[factor] = {"artifacts": factor * n_tasks, "reps": reps, "wall_s": median(walls), "cpu_s": median(cpus)}
    # the long run: at least 10,000 artifacts in chunks of 1,800 (quick: one chunk)
    chunk_rounds = 100
    chunks = 1 if quick else 6
    per_task: dict[str, list[float]] = {t.id: [] for t, _, _ in oracles}
    walls, cpus, total = [], [], 0
    for i in range(chunks):
        w, c, n = _score_all(oracles, chunk_rounds, per_task)
        walls.append(w)
        cpus.append(c)
        total += n
        log(f"  throughput chunk {i + 1}/{chunks}: {n / c:.0f} artifacts/s (cpu), {n / w:.0f} (wall)")
    chunk_n = chunk_rounds * n_tasks
    scale[chunk_rounds] = {"artifacts": chunk_n, "reps": chunks, "wall_s": median(walls), "cpu_s": median(cpus)}
    for sc in scale.values():
        sc["per_s_wall"] = sc["artifacts"] / sc["wall_s"]
        sc["per_s_cpu"] = sc["artifacts"] / sc["cpu_s"]
        sc["ms_per_artifact_cpu"] = sc["cpu_s"] / sc["artifacts"] * 1000
    base = scale[1]["ms_per_artifact_cpu"]
    for factor, sc in scale.items():
        sc["cost_ratio_per_artifact"] = sc["ms_per_artifact_cpu"] / base
        sc["total_cost_ratio"] = sc["cost_ratio_per_artifact"] * factor
    stages = stage_split(oracles, 5 if quick else 20)
    tasks = {}
    for task, _art, raw in oracles:
        ms = median(per_task[task.id]) * 1000
        tasks[task.id] = {"ms_cpu": ms, "bytes": len(raw), "gate_instances": None, **{
            f"{k}_ms": v for k, v in stages[task.id].items()}}
    # gate instance counts (one extra scoring each)
    for task, art, _raw in oracles:
        r = score_artifact(task, art)
        tasks[task.id]["gate_instances"] = len(r.gates.instances) if r.gates is not None else 0
        tasks[task.id]["status"] = r.status
    share = {k: sum(t[f"{k}_ms"] for t in tasks.values()) for k in ("schema", "gates", "panel")}
    tot = sum(share.values()) or 1.0
    rounds = 20 if quick else 100
    fresh = bench_varied(oracles, 10 if quick else 60)
    log(f"  new artifacts each time: score {fresh['score']['per_s_cpu']:.0f}/s, "
        f"reward {fresh['reward']['per_s_cpu']:.0f}/s (cpu)")
    rendered = bench_rendered(oracles, max(1, rounds // 2))
    log(f"  score and JSON report: {rendered['per_s_cpu']:.0f} artifacts/s (cpu)")
    reward = bench_reward(oracles, rounds)
    log(f"  reward path: {reward['per_s_cpu']:.0f} artifacts/s (cpu)")
    broken = bench_failing(oracles, max(1, rounds // 2))
    log(f"  reward path, a hard gate failing: {broken['per_s_cpu']:.0f} artifacts/s (cpu), "
        f"{broken['tasks']} tasks")
    parse_score = bench_parse_score(oracles, max(1, rounds // 2))
    floor = bench_floor(oracles, max(1, rounds // 2))
    return {
        "reward": reward, "reward_failing": broken, "parse_and_score": parse_score, "floor": floor,
        "rendered": rendered,
        "varied": fresh,
        "artifacts": total, "chunks": chunks, "chunk_artifacts": chunk_n,
        "per_s_wall": chunk_n / median(walls), "per_s_cpu": chunk_n / median(cpus),
        "ms_per_artifact_cpu": median(cpus) / chunk_n * 1000,
        "scaling_count": scale, "tasks": tasks,
        "stage_share": {k: v / tot for k, v in share.items()},
    }


# ------------------------------------------------------------------ reward, floor

def _rate(n: int, clk: Clock) -> dict[str, float]:
    return {"artifacts": n, "wall_s": clk.wall, "cpu_s": clk.cpu, "per_s_cpu": n / clk.cpu,
            "per_s_wall": n / clk.wall, "us_per_artifact_cpu": clk.cpu / n * 1e6}


def bench_rendered(oracles, rounds: int) -> dict[str, Any]:
    """``score_artifact(..., records=True)`` and the report's JSON form
    (``as_dict``): what a batch row or the verifier pays, every gate instance
    and panel record made."""
    from mmverify.pipeline.evaluate import score_artifact

    n = 0
    with Clock() as clk:
        for _ in range(rounds):
            for task, art, _raw in oracles:
                score_artifact(task, art, records=True).as_dict()
                n += 1
    return _rate(n, clk)


def bench_reward(oracles, rounds: int) -> dict[str, Any]:
    """The verdict-only path of ``mmverify.reward`` on pre-parsed artifacts
    (``evaluate.reward_of``: no report, no schema error list, no detail text)."""
    from mmverify.pipeline.evaluate import reward_of, score_artifact

    for task, art, _raw in oracles:
        assert reward_of(task, art) == score_artifact(task, art).reward
    return _rewards(oracles, rounds)


def _rewards(corpus, rounds: int) -> dict[str, Any]:
    """The rate of ``reward_of`` over ``corpus``, ``rounds`` times."""
    from mmverify.pipeline.evaluate import reward_of

    n = 0
    with Clock() as clk:
        for _ in range(rounds):
            for task, art, _raw in corpus:
                reward_of(task, art)
                n += 1
    return _rate(n, clk)


def bench_failing(oracles, rounds: int) -> dict[str, Any]:
    """``reward_of`` on the oracles with one hard gate made to fail
    (:func:`bench_common.failing`): every hard gate is evaluated instance by
    instance up to the failing one, the all-pass check having declined."""
    from bench_common import failing

    from mmverify.pipeline.evaluate import reward_of

    corpus = failing(oracles)
    for task, art, _raw in corpus:
        assert reward_of(task, art) == 0.0
    return {**_rewards(corpus, rounds), "tasks": len(corpus)}


def bench_varied(oracles, copies: int) -> dict[str, Any]:
    """``score_artifact`` and ``reward_of`` on artifacts that are all different
    (:func:`bench_common.varied`: each oracle with the numbers no gate reads nudged,
    ``copies`` variants per task), each scored once: the rates of new work."""
    from bench_common import varied

    from mmverify.pipeline.evaluate import reward_of, score_artifact

    corpus = varied(oracles, copies)
    out = {}
    for name, fn in (("score", score_artifact), ("reward", reward_of)):
        gc.collect()
        with Clock() as clk:
            for task, art, _raw in corpus:
                fn(task, art)
        out[name] = _rate(len(corpus), clk)
    return out


def _read_fields(task) -> list:
    """Every path the task reads (metrics, then gate inputs), parsed once."""
    from mmverify.gates import compile_gates

    out, seen = [], set()
    for p in [m.path for m in task.metrics] + [p for g in compile_gates(task) for p in g.inputs]:
        if p.text not in seen:
            seen.add(p.text)
            out.append(p)
    return out


def bench_floor(oracles, rounds: int) -> dict[str, Any]:
    """The floor: ``json.loads`` (exact decimals) of the oracle bytes plus
    reading every field the task reads, and nothing else."""
    from decimal import Decimal

    from mmverify.reading.paths import get, items

    fields = [(raw, _read_fields(task)) for task, _art, raw in oracles]
    n = 0
    with Clock() as clk:
        for _ in range(rounds):
            for raw, paths in fields:
                data = json.loads(raw, parse_float=Decimal)
                for p in paths:
                    items(data, p) if p.is_list else get(data, p)
                n += 1
    return _rate(n, clk)


def bench_parse_score(oracles, rounds: int) -> dict[str, Any]:
    """The strict parse plus ``score_artifact``, from the same bytes as the floor."""
    from mmverify.reading.artifact import parse_bytes
    from mmverify.pipeline.evaluate import score_artifact

    n = 0
    with Clock() as clk:
        for _ in range(rounds):
            for task, _art, raw in oracles:
                score_artifact(task, parse_bytes(raw))
                n += 1
    return _rate(n, clk)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from bench_common import load_oracles

    ap = argparse.ArgumentParser(description="mmverify in-process throughput")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    res = bench_throughput(load_oracles(), args.quick)
    print(f"score_artifact: {res['per_s_cpu']:,.0f}/s cpu ({res['ms_per_artifact_cpu']:.3f} ms/artifact)")
    for key in ("reward", "reward_failing", "parse_and_score", "floor"):
        r = res[key]
        print(f"{key}: {r['per_s_cpu']:,.0f}/s cpu ({r['us_per_artifact_cpu']:.0f} us/artifact)")
    for key, r in res["varied"].items():
        print(f"{key}, new artifacts: {r['per_s_cpu']:,.0f}/s cpu ({r['us_per_artifact_cpu']:.0f} us/artifact)")
    print("stage share:", ", ".join(f"{k} {v * 100:.0f}%" for k, v in res["stage_share"].items()))
    print("replay, apart (cpu ms per artifact):", ", ".join(f"{k} {v:.0f}" for k, v in res["replay_ms_cpu"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
