#!/usr/bin/env python
"""mmverify benchmarks: speed and scale measured side by side, with targets.

    python benchmarks/run.py [--quick] [--json OUT] [--profile N] [--only SECTIONS]

Prints a table of figures and (with ``--json``) writes them as JSON. Every
timed figure is the median of several repetitions, and every target is a
ratio or a rate measured in the same run, because shared machines are noisy.
In-process figures are given twice: by wall clock and by the CPU time of this
(single-threaded) process. On an idle machine the two agree; on a loaded one
the CPU figure is what one core actually delivers and the wall figure also
counts the time the process waited for a core (the load average is recorded).

Sections (``--only`` takes a comma list of these names):

* ``cold``       CLI cold start (``bench_cold.py``): ``python -m mmverify
                 score`` and ``verify`` on each of the 18 oracles against
                 ``python -c pass``, with the heavy imports and the phases of
                 one start (target: at most 5x, worst oracle);
* ``throughput`` in-process (``bench_throughput.py``): ``score_artifact``
                 over the 18 oracle artifacts repeated (at least 10,000
                 artifacts; target: at least 5,000 artifacts/s on one core),
                 per-task cost and stage split, throughput at 1x, 10x and 100x
                 the number of artifacts, the verdict-only reward path
                 (target: at least 10,000/s), and the floor (``json.loads``
                 plus reading the same fields);
* ``size``       artifacts 1x, 10x and 100x larger (list-valued fields
                 lengthened), parse + score, to show linear cost;
* ``board``      ``mmverify board`` on 1,008 manifest rows against the same
                 scoring in a plain loop;
* ``lean``       emit every obligation of the 18 anchors (always) and check
                 them in one Lean process (when a toolchain is found);
* ``memory``     peak memory of the largest case (tracemalloc and max RSS of a
                 child process).

``--quick`` runs every section with fewer repetitions and smaller batches
(well under a minute on an idle machine); the full run stays under five
minutes. Nothing here writes outside a temporary folder unless ``--json`` is
given.
"""
from __future__ import annotations

import argparse
import copy
import datetime as _dt
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

try:
    import resource
except ImportError:  # not POSIX: child CPU times are reported as not measured
    resource = None  # type: ignore[assignment]

SECTIONS = ("cold", "throughput", "size", "board", "lean", "memory", "batch")
TARGETS = {
    "cold_start_ratio": ("<=", 5.0, "CLI cold start / python -c pass, worst of the 18 oracles"),
    "throughput_per_s": (">=", 5000.0, "in-process artifacts per second, one core"),
    "reward_per_s": (">=", 10000.0, "verdict-only reward path, artifacts per second, one core"),
    "lean_seconds": ("<=", 1.0, "Lean time to check the whole anchor set"),
    # linear cost: per-artifact cost at 10x/100x the count, and per-KB cost at
    # 100x the size (against 10x, where fixed costs no longer dominate; with the
    # cyclic garbage collector paused, whose passes grow with the heap), within 25 %
    "count_cost_growth": ("<=", 1.25, "max per-artifact cost at 10x/100x artifacts over 1x"),
    "size_cost_growth": ("<=", 1.25, "per-KB cost at 100x size over 10x size, GC paused"),
    # issue 33
    "batch_floor_ratio": ("<=", 4.0, "score --output on 1,008 oracle copies / the json floor, wall, one process"),
    "batch_jobs2_speedup": (">=", 1.8, "score --output --jobs 2 against one process, 10,080 files, wall"),
    "batch_rss_growth": ("<=", 1.10, "peak RSS of score --output, 10,080 files over 1,008"),
}


# --------------------------------------------------------------------- helpers

from bench_common import (Clock, children_cpu, load_avg, load_oracles, log, machine, median,  # noqa: E402
                          versions)
from bench_cold import bench_cold  # noqa: E402
from bench_throughput import bench_throughput  # noqa: E402
import bench_batch  # noqa: E402


# ------------------------------------------------------------------ size scaling

def _growable(schema: Any) -> bool:
    """A list whose schema lets it grow: no maxItems, no positional items, no uniqueness."""
    return isinstance(schema, dict) and "maxItems" not in schema and "prefixItems" not in schema \
        and not schema.get("uniqueItems") and isinstance(schema.get("items"), dict)


def lengthen(data: Any, schema: Any, k: int) -> Any:
    """Every list the schema lets grow, k times longer (its items repeated in
    order); other values kept. Keeps the artifact valid wherever the schema
    does not pin a list's length."""
    if isinstance(data, dict):
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        return {key: lengthen(v, props.get(key), k) for key, v in data.items()}
    if isinstance(data, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        prefix = schema.get("prefixItems") if isinstance(schema, dict) else None
        inner = [lengthen(v, (prefix[i] if prefix and i < len(prefix) else items), k) for i, v in enumerate(data)]
        if k > 1 and inner and _growable(schema):
            return [copy.deepcopy(inner[i % len(inner)]) for i in range(len(inner) * k)]
        return inner
    return data


def _to_json_bytes(data: Any) -> bytes:
    """JSON text of parsed artifact data, every Decimal written back as its exact text."""
    from mmverify.plugin.exactjson import dumps_exact

    return dumps_exact(data, indent=None, sort_keys=False).encode("utf-8")


def bench_size(oracles, quick: bool) -> dict[str, Any]:
    from mmverify.reading.artifact import parse_bytes
    from mmverify.pipeline.evaluate import score_artifact

    factors = (1, 10, 100)
    reps = {1: 5, 10: 3, 100: 1} if quick else {1: 15, 10: 7, 100: 3}
    out: dict[int, dict[str, Any]] = {}
    for k in factors:
        blobs = [(task, _to_json_bytes(lengthen(art.data, task.artifact_schema, k))) for task, art, _ in oracles]
        size = sum(len(b) for _, b in blobs)
        statuses: dict[str, int] = {}
        instances = 0
        for task, b in blobs:              # warm + statuses
            r = score_artifact(task, parse_bytes(b))
            statuses[r.status] = statuses.get(r.status, 0) + 1
            instances += len(r.gates.instances) if r.gates is not None else 0
        parse_c, score_c, walls, nogc_c = [], [], [], []
        for _ in range(reps[k]):
            pc = tp = 0.0
            w0 = time.perf_counter()
            for task, b in blobs:
                c0 = time.process_time()
                art = parse_bytes(b)
                c1 = time.process_time()
                score_artifact(task, art)
                c2 = time.process_time()
                pc += c1 - c0
                tp += c2 - c1
            walls.append(time.perf_counter() - w0)
            parse_c.append(pc)
            score_c.append(tp)
            # the same pass with the cyclic garbage collector paused: the algorithmic cost
            gc.collect()
            gc.disable()
            try:
                c0 = time.process_time()
                for task, b in blobs:
                    score_artifact(task, parse_bytes(b))
                nogc_c.append(time.process_time() - c0)
            finally:
                gc.enable()
        largest = max(blobs, key=lambda tb: len(tb[1]))
        out[k] = {"bytes": size, "largest_bytes": len(largest[1]), "largest_task": largest[0].id,
                  "gate_instances": instances, "statuses": statuses, "reps": reps[k],
                  "parse_s_cpu": median(parse_c), "score_s_cpu": median(score_c), "wall_s": median(walls),
                  "s_cpu_gc_paused": median(nogc_c)}
        log(f"  size {k}x: {size / 1e6:.2f} MB, parse {median(parse_c):.2f} s, score {median(score_c):.2f} s (cpu)")
    b1 = out[1]
    for k in factors:
        r = out[k]
        r["size_ratio"] = r["bytes"] / b1["bytes"]
        r["instance_ratio"] = r["gate_instances"] / b1["gate_instances"]
        r["time_ratio"] = (r["parse_s_cpu"] + r["score_s_cpu"]) / (b1["parse_s_cpu"] + b1["score_s_cpu"])
        r["us_per_kb"] = (r["parse_s_cpu"] + r["score_s_cpu"]) / (r["bytes"] / 1024) * 1e6
        r["us_per_kb_gc_paused"] = r["s_cpu_gc_paused"] / (r["bytes"] / 1024) * 1e6
    # marginal linearity: cost per extra byte from 10x to 100x over that from 1x to 10x (1.0 = linear)
    def slope(a: int, b: int) -> float:
        ta = out[a]["parse_s_cpu"] + out[a]["score_s_cpu"]
        tb = out[b]["parse_s_cpu"] + out[b]["score_s_cpu"]
        return (tb - ta) / (out[b]["bytes"] - out[a]["bytes"])

    lin = slope(10, 100) / slope(1, 10)
    return {"factors": out, "marginal_linearity": lin}


# ------------------------------------------------------------------ board

def bench_board(oracles, quick: bool) -> dict[str, Any]:
    try:
        from mmverify.commands.board import build
        from mmverify.scoring.board_render import render
    except ImportError as exc:
        return {"available": False, "reason": f"board not available ({exc})"}
    from mmverify.reading.artifact import ArtifactError, parse_file
    from mmverify.pipeline.evaluate import score_artifact

    for task, art, _raw in oracles:        # warm: task load, compiled gates, validators
        score_artifact(task, art)
    seeds = 5 if quick else 28
    entries = ("baseline", "candidate")
    reps = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="mmverify-bench-") as tmp:
        rows = []
        for entry in entries:
            for seed in range(seeds):
                for task, _art, raw in oracles:
                    rel = f"runs/{entry}/s{seed}/{task.id}_result.json"
                    path = os.path.join(tmp, rel)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "wb") as fh:
                        fh.write(raw)
                    rows.append({"entry": entry, "task": task.id, "seed": seed, "artifact": rel,
                                 "cost_usd": 0.5, "wall_s": 600})
        manifest = os.path.join(tmp, "manifest.jsonl")
        with open(manifest, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
        tasks = {t.id: t for t, _, _ in oracles}
        board_w, board_c, loop_w, loop_c, score_w, agg_w = [], [], [], [], [], []
        def run_board() -> Any:
            gc.collect()
            with Clock() as clk:
                board, results, stats = build(manifest, "baseline")
                render(board, "table")
            board_w.append(clk.wall)
            board_c.append(clk.cpu)
            score_w.append(stats.seconds)
            agg_w.append(clk.wall - stats.seconds)
            return results

        def run_loop() -> None:
            gc.collect()
            with Clock() as clk:
                for r in rows:
                    path = os.path.join(tmp, r["artifact"])
                    try:
                        art: Any = parse_file(path)
                    except ArtifactError as exc:
                        art = exc
                    score_artifact(tasks[r["task"]], art)
            loop_w.append(clk.wall)
            loop_c.append(clk.cpu)

        results: Any = None
        for i in range(reps):                 # alternate the order, so that neither side is always second
            if i % 2 == 0:
                results = run_board()
                run_loop()
            else:
                run_loop()
                results = run_board()
        statuses: dict[str, int] = {}
        for r in results:
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {"available": True, "rows": len(rows), "reps": reps, "statuses": statuses,
            "board_s_wall": median(board_w), "board_s_cpu": median(board_c),
            "loop_s_wall": median(loop_w), "loop_s_cpu": median(loop_c),
            "ratio_wall": median(board_w) / median(loop_w), "ratio_cpu": median(board_c) / median(loop_c),
            "scoring_s_wall": median(score_w), "aggregate_render_s_wall": median(agg_w),
            "scoring_ratio_wall": median(score_w) / median(loop_w)}


# ------------------------------------------------------------------ lean

def bench_lean(quick: bool, timeout: float) -> dict[str, Any]:
    try:
        from mmverify.lean_gen import project, runner
    except ImportError as exc:
        return {"emit": None, "check": None, "reason": f"Lean layer not available ({exc})"}
    reps = 1 if quick else 3
    walls, cpus = [], []
    files: list = []
    for _ in range(reps):
        memo = getattr(project, "_CACHE", None)
        if isinstance(memo, dict):
            memo.clear()            # anchor_files() memoises its result: time the emission itself
        with Clock() as clk:
            files = project.anchor_files()
        walls.append(clk.wall)
        cpus.append(clk.cpu)
    n_obl = sum(len(f.oset.obligations) for f in files)
    emit = {"files": len(files), "obligations": n_obl, "reps": reps, "s_wall": median(walls), "s_cpu": median(cpus),
            "obligations_per_s_cpu": n_obl / median(cpus) if median(cpus) else None}
    try:
        tc = runner.find_lean()
        version = tc.version()
    except runner.LeanNotFound as exc:
        return {"emit": emit, "check": None, "toolchain": None, "reason": f"no toolchain: {exc.missing}"}
    try:
        from mmverify.lean_gen import check as lean_check
    except ImportError as exc:
        return {"emit": emit, "check": None, "toolchain": version, "reason": f"checker not available ({exc})"}
    # one repetition: a Lean run over every obligation is long on slow toolchains
    c0 = children_cpu()
    try:
        with Clock() as clk:
            report = lean_check.check_files(files, tc, timeout=timeout)
    except runner.LeanRunError as exc:
        return {"emit": emit, "check": None, "toolchain": version, "found_via": tc.how,
                "reason": f"Lean run failed: {exc}"}
    lean_cpu = children_cpu() - c0
    return {"emit": emit, "toolchain": version, "found_via": tc.how, "check": {
        "reps": 1, "s_wall_emit_and_check": clk.wall + emit["s_wall"], "s_wall_check": clk.wall,
        "lean_seconds": report.seconds, "lean_cpu_s": lean_cpu, "obligations": len(report.rows),
        "obligations_per_s": len(report.rows) / report.seconds if report.seconds else None,
        "agree": report.ok, "counts": report.counts()}}


# ------------------------------------------------------------------ memory

_MEMORY_CHILD = r"""
import json, sys, time, tracemalloc
try:
    import resource
except ImportError:
    resource = None
sys.path.insert(0, sys.argv[1])
import run as bench
from mmverify.reading.artifact import parse_bytes
from mmverify.pipeline.evaluate import score_artifact
oracles = bench.load_oracles()
k = int(sys.argv[2])
if len(sys.argv) > 3:
    task, art, raw = next(x for x in oracles if x[0].id == sys.argv[3])
else:
    task, art, raw = max(oracles, key=lambda x: len(bench._to_json_bytes(
        bench.lengthen(x[1].data, x[0].artifact_schema, k))))
blob = bench._to_json_bytes(bench.lengthen(art.data, task.artifact_schema, k))
score_artifact(task, art)             # warm: compiled gates, validators
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else float("nan")
tracemalloc.start()
a = parse_bytes(blob)
report = score_artifact(task, a)
text = report.to_json()
cur, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else float("nan")
print(json.dumps({"task": task.id, "factor": k, "artifact_bytes": len(blob), "report_bytes": len(text),
                  "status": report.status, "tracemalloc_peak_mib": peak / 2**20,
                  "max_rss_mib": rss1 / 1024, "max_rss_before_mib": rss0 / 1024}))
"""


def bench_memory(quick: bool, largest_task: str | None) -> dict[str, Any]:
    """The largest case (the largest artifact at 100x) in a fresh child process."""
    here = os.path.dirname(os.path.abspath(__file__))
    argv = [sys.executable, "-c", _MEMORY_CHILD, here, "100"] + ([largest_task] if largest_task else [])
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


# ------------------------------------------------------------------ profile

def profile(oracles, top: int, rounds: int = 5) -> dict[str, Any]:
    import cProfile
    import pstats

    from mmverify.pipeline.evaluate import score_artifact

    for task, art, _ in oracles:
        score_artifact(task, art)
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for _ in range(rounds):
        for task, art, _ in oracles:
            score_artifact(task, art)
    prof.disable()
    st = pstats.Stats(prof)
    total = st.total_tt  # type: ignore[attr-defined]

    def where(func: tuple) -> str:
        file, line, name = func
        parts = file.replace("\\", "/").split("/")
        for anchor in ("site-packages", "mmverify", "gates", "scoring", "lean_gen", "lib"):
            if anchor in parts[:-1]:
                i = len(parts) - 1 - parts[::-1].index(anchor)
                short = "/".join(parts[i + 1:] if anchor in ("site-packages", "lib") else parts[i:])
                break
        else:
            short = parts[-1]
        return f"{short}:{line}({name})" if line else name

    def rows(key: str) -> list[dict[str, Any]]:
        items = sorted(st.stats.items(), key=lambda kv: -(kv[1][2] if key == "tottime" else kv[1][3]))  # type: ignore[attr-defined]
        out = []
        for func, (_cc, nc, tt, ct, _callers) in items[:top]:
            out.append({"function": where(func), "calls": nc, "tottime_s": tt, "cumtime_s": ct,
                        "tottime_share": tt / total if total else None, "cumtime_share": ct / total if total else None})
        return out

    return {"artifacts": rounds * len(oracles), "total_s_cpu": total, "by_tottime": rows("tottime"),
            "by_cumtime": rows("cumtime")}


# ------------------------------------------------------------------ report

def verdict(op: str, value: float | None, target: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not measured"
    ok = value <= target if op == "<=" else value >= target
    return "met" if ok else "NOT met"


def table(res: dict[str, Any]) -> str:
    lines: list[str] = []
    add = lines.append
    m = res["meta"]
    add(f"mmverify benchmarks  {m['date']}  ({'quick' if m['quick'] else 'full'} run, {m['seconds']:.0f} s)")
    mc = m["machine"]
    add(f"machine: {mc['cpu_model']}, {mc['cores_usable']} usable core(s) of {mc['cores_logical']}, "
        f"{mc['memory_gib']} GiB, {mc['os']} {mc['arch']}, {mc['python']}")
    add(f"load average at start / end: {m['load_start']} / {m['load_end']}   versions: "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    rows: list[tuple[str, str, str, str]] = []
    f = res.get("figures", {})
    cold = res.get("cold")
    if cold:
        base = cold["cases"]["python -c pass"]
        rows.append(("cold start: python -c pass", f"{base['wall_s'] * 1000:.0f} ms wall, {base['cpu_s'] * 1000:.0f} ms cpu",
                     "", ""))
        bare = cold["cases"].get("python -S -c pass")
        if bare:
            rows.append(("  python -S -c pass (no site, no .pth files)",
                         f"{bare['cpu_s'] * 1000:.0f} ms cpu; editable install's finder run at every start: "
                         f"{'yes (every ratio here is lower than a regular install gives)' if cold.get('editable_install') else 'no'}",
                         "", ""))
        for kind in ("score", "verify"):
            worst = cold[f"worst_{kind}"]
            c = cold["cases"][worst]
            rows.append((f"cold start: {kind}, worst of the 18 oracles ({worst.split(' ', 1)[1]})",
                         f"{c['wall_s'] * 1000:.0f} ms wall ({c['ratio_wall']:.2f}x), "
                         f"{c['cpu_s'] * 1000:.0f} ms cpu ({c['ratio_cpu']:.2f}x)", "<= 5x",
                         res["targets"]["cold_start_ratio"] if kind == "score" else
                         verdict("<=", cold["worst_verify_ratio_wall"], 5.0)))
        rows.append(("  score, median of the 18 oracles", f"{cold['median_score_ratio_wall']:.2f}x wall", "", ""))
        ng = next((k for k in cold["cases"] if k.endswith("--no-gates")), None)
        if ng:
            c = cold["cases"][ng]
            rows.append((f"  {ng}", f"{c['wall_s'] * 1000:.0f} ms wall ({c['ratio_wall']:.2f}x)", "", ""))
        fs = cold["first_start_empty_cache"]
        rows.append(("  first start of a task (empty compiled-task cache)",
                     f"median {fs['median_ratio_wall']:.2f}x, worst {fs['worst_ratio_wall']:.2f}x wall", "", ""))
        for label in ("identity", "plain", "verify_identity"):
            imp = cold["imports"][label]
            rows.append((f"  heavy imports ({label.replace('_', ' ')})",
                         ", ".join(f"{k} {v:.0f} ms" for k, v in imp["heavy_ms"].items())
                         + "; not imported: " + (", ".join(imp["not_imported"]) or "-"), "", ""))
        for label, name in (("identity", "identity task"), ("plain", "no identity gate")):
            ph = cold["phases_ms_cpu"].get(label)
            if ph:
                rows.append((f"  in-process phases, {name} (cpu ms)",
                             ", ".join(f"{k} {v:.0f}" for k, v in ph["ms_cpu"].items())
                             + "; loaded: " + (", ".join(ph["heavy_loaded"]) or "none of sympy, jsonschema, numpy"),
                             "", ""))
    tp = res.get("throughput")
    if tp:
        rows.append((f"throughput ({tp['artifacts']:,} artifacts, median of {tp['chunks']} chunk(s))",
                     f"{tp['per_s_cpu']:,.0f}/s cpu, {tp['per_s_wall']:,.0f}/s wall "
                     f"({tp['ms_per_artifact_cpu']:.2f} ms/artifact cpu)", ">= 5,000/s", res["targets"]["throughput_per_s"]))
        sh = tp["stage_share"]
        rows.append(("  stage share (cpu)", ", ".join(f"{k} {v * 100:.0f}%" for k, v in sh.items()), "", ""))
        rd = tp["rendered"]
        rows.append(("  score and the JSON report (records made)",
                     f"{rd['per_s_cpu']:,.0f}/s cpu ({rd['us_per_artifact_cpu']:.0f} us/artifact cpu)", "", ""))
        rw = tp["reward"]
        rows.append((f"reward path ({rw['artifacts']:,} artifacts, verdict only)",
                     f"{rw['per_s_cpu']:,.0f}/s cpu, {rw['per_s_wall']:,.0f}/s wall "
                     f"({rw['us_per_artifact_cpu']:.0f} us/artifact cpu)", ">= 10,000/s",
                     res["targets"]["reward_per_s"]))
        rows.append(("replay, apart (cpu ms per artifact, excluded above)",
                     ", ".join(f"{k} {v:.0f}" for k, v in tp["replay_ms_cpu"].items()) or "-", "", ""))
        ps, fl = tp["parse_and_score"], tp["floor"]
        rows.append(("parse + score, from bytes", f"{ps['per_s_cpu']:,.0f}/s cpu ({ps['us_per_artifact_cpu']:.0f} us)",
                     "", ""))
        rows.append(("floor: json.loads + reading the same fields", f"{fl['per_s_cpu']:,.0f}/s cpu "
                     f"({fl['us_per_artifact_cpu']:.0f} us); parse + score costs "
                     f"{ps['us_per_artifact_cpu'] / fl['us_per_artifact_cpu']:.1f}x the floor", "", ""))
        for factor, s in tp["scaling_count"].items():
            rows.append((f"  {factor}x artifacts ({s['artifacts']:,})", f"{s['per_s_cpu']:,.0f}/s cpu, "
                         f"{s['per_s_wall']:,.0f}/s wall; cost/artifact {s['cost_ratio_per_artifact']:.2f}x of 1x, "
                         f"total {s['total_cost_ratio']:.1f}x", "", ""))
        rows.append(("  count scaling: worst per-artifact cost over 1x", f"{f['count_cost_growth']:.2f}x",
                     "<= 1.25x", res["targets"]["count_cost_growth"]))
    sz = res.get("size")
    if sz:
        for k, s in sz["factors"].items():
            rows.append((f"size {k}x ({s['bytes'] / 1e6:.2f} MB, {s['gate_instances']:,} gate inst.)",
                         f"parse {s['parse_s_cpu'] * 1000:.0f} ms + score {s['score_s_cpu'] * 1000:.0f} ms cpu; "
                         f"time {s['time_ratio']:.1f}x for size {s['size_ratio']:.1f}x; {s['us_per_kb']:.0f} us/KB; "
                         + ", ".join(f"{n} {st}" for st, n in sorted(s["statuses"].items())), "", ""))
        rows.append(("size marginal linearity (10x->100x over 1x->10x)", f"{sz['marginal_linearity']:.2f} "
                     "(1.00 = linear)", "", ""))
        rows.append(("size scaling: per-KB cost at 100x over 10x", f"{f['size_cost_growth']:.2f}x with the cyclic GC "
                     f"paused ({sz['factors'][10]['us_per_kb_gc_paused']:.0f} -> "
                     f"{sz['factors'][100]['us_per_kb_gc_paused']:.0f} us/KB); {f['size_cost_growth_with_gc']:.2f}x "
                     "with it running", "<= 1.25x", res["targets"]["size_cost_growth"]))
    bd = res.get("board")
    if bd is not None:
        if bd.get("available"):
            rows.append((f"board ({bd['rows']:,} rows) vs plain loop", f"{bd['board_s_wall']:.2f} s vs "
                         f"{bd['loop_s_wall']:.2f} s wall = {bd['ratio_wall']:.2f}x ({bd['ratio_cpu']:.2f}x cpu); "
                         f"its scoring part {bd['scoring_ratio_wall']:.2f}x; aggregate (bootstrap) + render "
                         f"{bd['aggregate_render_s_wall']:.2f} s", "", ""))
        else:
            rows.append(("board", "not available: " + bd.get("reason", ""), "", ""))
    ln = res.get("lean")
    if ln is not None:
        e = ln.get("emit")
        if e:
            rows.append((f"Lean emit (18 anchors, {e['files']} files)", f"{e['obligations']} obligations in "
                         f"{e['s_cpu']:.2f} s cpu ({e['s_wall']:.2f} s wall), {e['obligations_per_s_cpu']:,.0f}/s",
                         "", ""))
        else:
            rows.append(("Lean emit", "not available: " + ln.get("reason", ""), "", ""))
        c = ln.get("check")
        if c:
            rows.append((f"Lean check (one process; {ln['toolchain']})",
                         f"{c['obligations']} obligations, Lean {c['lean_seconds']:.2f} s wall "
                         f"({c['lean_cpu_s']:.2f} s cpu), {c['obligations_per_s']:,.1f}/s; emit+check "
                         f"{c['s_wall_emit_and_check']:.2f} s wall; agree {c['agree']}", "<= 1 s",
                         res["targets"]["lean_seconds"]))
        else:
            rows.append(("Lean check", ln.get("reason", "no toolchain"), "<= 1 s", res["targets"]["lean_seconds"]))
    mem = res.get("memory")
    if mem:
        if "error" in mem:
            rows.append(("peak memory", "error: " + mem["error"], "", ""))
        else:
            rows.append((f"peak memory (largest: {mem['task']} x{mem['factor']}, {mem['artifact_bytes'] / 1e6:.1f} MB)",
                         f"tracemalloc peak {mem['tracemalloc_peak_mib']:.0f} MiB (parse+score+report); max RSS "
                         f"{mem['max_rss_mib']:.0f} MiB", "", ""))
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    w[1] = min(w[1], 110)
    add("")
    add(f"{'figure'.ljust(w[0])}  {'value'.ljust(w[1])}  {'target'.ljust(w[2])}  verdict")
    add(f"{'-' * w[0]}  {'-' * w[1]}  {'-' * w[2]}  -------")
    for r in rows:
        add(f"{r[0].ljust(w[0])}  {r[1].ljust(w[1])}  {r[2].ljust(w[2])}  {r[3]}".rstrip())
    tp = res.get("throughput")
    if tp:
        add("")
        add("per-task cost (cpu ms per artifact; stage split schema / gates / panel; then rendering the report):")
        for tid, t in sorted(tp["tasks"].items(), key=lambda kv: -kv[1]["ms_cpu"]):
            add(f"  {tid:36s} {t['ms_cpu']:7.2f} ms   {t['schema_ms']:5.2f} / {t['gates_ms']:6.2f} / "
                f"{t['panel_ms']:5.2f}; render {t['render_ms']:5.2f}   {t['gate_instances']:4d} gate inst.  "
                f"{t['bytes'] / 1024:6.1f} KB  {t['status']}")
    pr = res.get("profile")
    if pr:
        add("")
        add(f"profile: score_artifact over {pr['artifacts']} oracle artifacts, {pr['total_s_cpu']:.2f} s cpu "
            "(cProfile inflates small calls)")
        add("  by own time:")
        for r in pr["by_tottime"]:
            add(f"    {r['tottime_share'] * 100:5.1f}%  {r['calls']:8d}  {r['function']}")
        add("  by cumulative time:")
        for r in pr["by_cumtime"]:
            add(f"    {r['cumtime_share'] * 100:5.1f}%  {r['calls']:8d}  {r['function']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="mmverify benchmarks (see benchmarks/README.md)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and smaller batches")
    ap.add_argument("--json", metavar="OUT", help="write every figure as JSON to OUT")
    ap.add_argument("--profile", type=int, metavar="N", default=0, help="also print the top N entries of a cProfile "
                    "of the hottest path (score_artifact over the oracles)")
    ap.add_argument("--lean-timeout", type=float, default=240.0, metavar="S",
                    help="give up the Lean check after S seconds (default 240)")
    ap.add_argument("--only", metavar="SECTIONS", help="comma list of: " + ", ".join(SECTIONS))
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else set(SECTIONS)
    unknown = only - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")

    start = time.perf_counter()
    res: dict[str, Any] = {"meta": {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick,
        "machine": machine(), "versions": versions(), "load_start": load_avg()}}
    log("loading the 18 anchored tasks ...")
    oracles = load_oracles()
    res["meta"]["tasks"] = len(oracles)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("cold", lambda: bench_cold(3 if args.quick else 5)),
        ("throughput", lambda: bench_throughput(oracles, args.quick)),
        ("size", lambda: bench_size(oracles, args.quick)),
        ("board", lambda: bench_board(oracles, args.quick)),
        ("lean", lambda: bench_lean(args.quick, args.lean_timeout)),
        ("memory", lambda: bench_memory(args.quick, res.get("size", {}).get("factors", {}).get(100, {})
                                        .get("largest_task"))),
        # issue 33: the batch command against the json floor, --jobs 2, memory at 10x
        ("batch", lambda: bench_batch.run(n=336 if args.quick else 1008, reps=2 if args.quick else 3,
                                          jobs_reps=1, scale=10, with_jobs=not args.quick)),
    ]
    for name, fn in steps:
        if name not in only:
            continue
        log(f"[{name}] ...")
        t0 = time.perf_counter()
        res[name] = fn()
        log(f"[{name}] done in {time.perf_counter() - t0:.1f} s")
    if args.profile:
        log("[profile] ...")
        res["profile"] = profile(oracles, args.profile)

    figures: dict[str, Any] = {}
    if "cold" in res:
        cold = res["cold"]
        figures["cold_start_ratio"] = cold["worst_score_ratio_wall"]
        figures["cold_start_ratio_cpu"] = cold["worst_score_ratio_cpu"]
        figures["cold_start_worst_task"] = cold["worst_score"]
        figures["cold_start_verify_ratio"] = cold["worst_verify_ratio_wall"]
        figures["cold_start_median_ratio"] = cold["median_score_ratio_wall"]
    if "throughput" in res:
        figures["throughput_per_s"] = res["throughput"]["per_s_cpu"]
        figures["throughput_per_s_wall"] = res["throughput"]["per_s_wall"]
        figures["reward_per_s"] = res["throughput"]["reward"]["per_s_cpu"]
        figures["floor_per_s"] = res["throughput"]["floor"]["per_s_cpu"]
        figures["parse_and_score_per_s"] = res["throughput"]["parse_and_score"]["per_s_cpu"]
    if "throughput" in res:
        sc = res["throughput"]["scaling_count"]
        figures["count_cost_growth"] = max(v["cost_ratio_per_artifact"] for k, v in sc.items() if k != 1)
    if "size" in res:
        figures["size_marginal_linearity"] = res["size"]["marginal_linearity"]
        fz = res["size"]["factors"]
        figures["size_cost_growth"] = fz[100]["us_per_kb_gc_paused"] / fz[10]["us_per_kb_gc_paused"]
        figures["size_cost_growth_with_gc"] = fz[100]["us_per_kb"] / fz[10]["us_per_kb"]
    if res.get("board", {}).get("available"):
        figures["board_ratio"] = res["board"]["ratio_wall"]
    if res.get("lean", {}).get("check"):
        figures["lean_seconds"] = res["lean"]["check"]["lean_seconds"]
    if res.get("lean", {}).get("emit"):
        figures["lean_emit_s_cpu"] = res["lean"]["emit"]["s_cpu"]
        figures["lean_obligations"] = res["lean"]["emit"]["obligations"]
    if "memory" in res and "error" not in res["memory"]:
        figures["peak_memory_mib"] = res["memory"]["tracemalloc_peak_mib"]
        figures["max_rss_mib"] = res["memory"]["max_rss_mib"]
    if "batch" in res:
        figures["batch_floor_ratio"] = res["batch"]["ratio_wall_min"]
        if "jobs" in res["batch"]:
            figures["batch_jobs2_speedup"] = res["batch"]["jobs"]["speedup_min"]
            figures["batch_rss_growth"] = res["batch"]["rss_growth"]
    res["figures"] = figures
    targets = {}
    for key, (op, target, _desc) in TARGETS.items():
        if key == "lean_seconds" and "lean" in res and not res["lean"].get("check"):
            reason = res["lean"].get("reason", "")
            targets[key] = ("no toolchain" if reason.startswith("no toolchain")
                            else "NOT met (timed out)" if "did not finish" in reason else "not available")
        else:
            targets[key] = verdict(op, figures.get(key), target)
    if args.quick and "throughput" in res:
        targets["throughput_per_s"] += " (quick: 1,800 artifacts)"
    res["targets"] = targets
    res["meta"]["load_end"] = load_avg()
    res["meta"]["seconds"] = time.perf_counter() - start
    if "cold" in res or "throughput" in res or "size" in res or "board" in res or "lean" in res or "memory" in res:
        print(table(res), end="")
    if "batch" in res:
        print(bench_batch.table(res["batch"]), end="")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
        log(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
