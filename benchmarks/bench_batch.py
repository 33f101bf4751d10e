"""Batch scoring as users run it: ``mmverify score FILES --output rows.jsonl``.

Measured side by side in one run (issue 33):

* **against the json floor**: the command on N copies of the anchored oracles
  (N = 1,008 by default: 63 copies of each of 16 oracles, or 56 of 18), one
  process, gates and replays included, against a plain Python program that
  ``json.load``\\ s each file and writes one JSON line per file (the artifact
  under its path, keys sorted). Both are child processes started the same
  way, interleaved, repeated; the ratio is taken of the minima (and of the
  medians, printed beside it);
* **``--jobs 2`` against one process** on 10 times as many files (10,080),
  the two files compared byte for byte;
* **peak RSS** of the command (the driver's ``ru_maxrss``; with ``--jobs``
  the largest worker's too) for N and 10 N files;
* **where the time goes**, per stage, in process: start (a one-file run of
  the command, less its scoring), task loading, read and hash, parse, task
  inference, replay, gates, schema, panel, the report's JSON form, the row's
  line, and the write (append, flush, fsync at most once a second, lock, the
  end). Each stage is run on its own over the same files, so the stages sum
  to about what ``score_one`` does.

Tasks whose anchors fail to load are left out and named. The machine may be
shared: the load average is printed at the start and the end, every timed
figure is repeated, and the spread of the repetitions is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests.helpers

from bench_common import fmt, load_avg, log, machine  # noqa: E402

FLOOR = r"""
import json, sys
files = open(sys.argv[1], encoding="utf-8").read().split("\n")
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for p in files:
        with open(p, encoding="utf-8") as fh:
            doc = json.load(fh)
        out.write(json.dumps({"input": p, "artifact": doc}, sort_keys=True, ensure_ascii=False) + "\n")
"""

# the command, reporting its own peak RSS and its workers' (children) at exit


def usable_tasks() -> tuple[list[Any], list[str]]:
    """The anchored tasks whose oracle scores, and the ids of those that fail to load."""
    from mmverify.batch.score_files import score_one
    from mmverify.tasks import TaskLoadError, load_task, task_ids

    ok, bad = [], []
    for tid in task_ids():
        try:
            task = load_task(tid)
            score_one(task.oracle_path)
        except TaskLoadError:
            bad.append(tid)
            continue
        ok.append(task)
    return ok, bad


def corpus(folder: str, tasks: list[Any], n: int) -> list[str]:
    """``n`` files, round-robin copies of the oracles (distinct paths, distinct files)."""
    os.makedirs(folder, exist_ok=True)
    raws = []
    for t in tasks:
        with open(t.oracle_path, "rb") as fh:
            raws.append((t.id, fh.read()))
    paths = []
    for i in range(n):
        tid, raw = raws[i % len(raws)]
        sub = os.path.join(folder, f"c{i // len(raws):04d}")
        os.makedirs(sub, exist_ok=True)
        p = os.path.join(sub, f"{tid}.json")
        with open(p, "wb") as fh:
            fh.write(raw)
        paths.append(p)
    return paths


def _child(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of a child (its own and its children's), and its stderr."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{argv[:4]}... exited {proc.returncode}: {proc.stderr[-2000:]}")
    return wall, cpu, proc.stderr


def run_command(listing: str, out: str, *extra: str) -> dict[str, Any]:
    if os.path.exists(out):
        os.unlink(out)
    from tests.helpers import peakrss

    wall, cpu, err = _child([sys.executable, "-c", peakrss.SCRIPT, listing, "--output", out, *extra])
    peak = peakrss.parse(err)
    return {"wall_s": wall, "cpu_s": cpu, "rss_mib": peak.kib / 1024, "workers_rss_mib": peak.children_kib / 1024,
            "driver_cpu_s": peak.cpu, "workers_cpu_s": peak.children_cpu}


def run_floor(listing: str, out: str) -> dict[str, Any]:
    wall, cpu, _ = _child([sys.executable, "-c", FLOOR, listing, out])
    return {"wall_s": wall, "cpu_s": cpu}


def _listing(folder: str, name: str, paths: list[str]) -> str:
    file = os.path.join(folder, name)
    with open(file, "w", encoding="utf-8") as fh:
        fh.write("\n".join(paths))
    return file


def _summary(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    xs = [r[key] for r in runs]
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs),
            "spread": (max(xs) - min(xs)) / min(xs) if min(xs) else float("nan")}


def stages(paths: list[str], work: str) -> dict[str, Any]:
    """CPU and wall time per stage, each stage run on its own over ``paths``
    (inputs prepared by the stage before it, outside its clock)."""
    from mmverify import replay
    from mmverify.reading import digest
    from mmverify.pipeline import violations
    from mmverify.reading.artifact import parse_bytes, read_bounded
    from mmverify.batch.score_files import _anchors_root, _batch_block, _known_ids, anchors_fingerprint, row_key
    from mmverify.batch.engine import FSYNC_INTERVAL_S, OutputLock, row_line
    from mmverify.pipeline.evaluate import infer_task_id, score_artifact
    from mmverify.gates import compile_gates, evaluate_gates
    from mmverify.scoring.panel import score_panel
    from mmverify.tasks import load_task
    from mmverify.tasks.load import _load_task_cached
    from mmverify.pipeline.validate import validate_artifact

    out: dict[str, dict[str, float]] = {}

    def clock(name, fn, items):
        w0, c0 = time.perf_counter(), time.process_time()
        res = [fn(x) for x in items]
        out[name] = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}
        return res

    # start: a one-file run of the command, less that file's scoring in process
    one = _listing(work, "one.txt", paths[:1])
    starts = [run_command(one, os.path.join(work, "one.jsonl")) for _ in range(3)]
    fp = anchors_fingerprint()
    _load_task_cached.cache_clear()
    root = _anchors_root(None)
    raws = clock("read + sha256", lambda p: (read_bounded(p), p), paths)
    hashed = [(raw, digest.sha256(raw).hexdigest(), p) for raw, p in raws]
    arts = clock("parse (strict, exact decimals)", lambda h: parse_bytes(h[0], source=h[2]), hashed)
    tids = clock("task inference", lambda a: infer_task_id(a, a.source, root, known=_known_ids(root)), arts)
    def task_of(tid):
        task = load_task(tid, root)
        compile_gates(task)
        return task

    tasks = clock("task loading (first use: cache, gates compiled)", task_of, tids)
    pairs = list(zip(tasks, arts))
    reps = clock("replay", lambda ta: replay.run_replay(ta[0], ta[1].data), pairs)
    gates = clock("gates", lambda x: evaluate_gates(x[0][0], x[0][1].data, x[1]), list(zip(pairs, reps)))
    clock("schema", lambda ta: violations.annotate(ta[0], validate_artifact(ta[0].artifact_schema, ta[1].data,
                                                                             limit=None)), pairs)
    clock("panel", lambda x: score_panel(x[0][0], x[0][1].data, x[1], "verified"), list(zip(pairs, gates)))
    w0, c0 = time.perf_counter(), time.process_time()
    reports = [score_artifact(t, a, records=True) for t, a in pairs]
    whole = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}
    dicts = clock("report JSON form (as_dict)", lambda r: r.as_dict(), reports)
    for d, h in zip(dicts, hashed):
        d["batch"] = _batch_block(h[2], h[1], row_key(h[2], h[1], None, None, True, fp))
    lines = clock("row line (json.dumps, sorted keys)", row_line, dicts)
    target = os.path.join(work, "stage-write.jsonl")
    w0, c0 = time.perf_counter(), time.process_time()
    with OutputLock(target):
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        last = time.monotonic()
        for line in lines:
            os.write(fd, line + b"\n")
            if time.monotonic() - last >= FSYNC_INTERVAL_S:
                os.fsync(fd)
                last = time.monotonic()
        os.fsync(fd)
        os.close(fd)
    out["write (append, fsync grouped, lock)"] = {"cpu_s": time.process_time() - c0,
                                                  "wall_s": time.perf_counter() - w0}
    w0, c0 = time.perf_counter(), time.process_time()
    fd = os.open(target + ".each", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    for line in lines:
        os.write(fd, line + b"\n")
        os.fsync(fd)
    os.close(fd)
    each = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}
    start = {"cpu_s": min(s["cpu_s"] for s in starts), "wall_s": min(s["wall_s"] for s in starts)}
    return {"artifacts": len(paths), "start_one_file": start, "stages": out, "score_artifact_whole": whole,
            "write_fsync_every_row": each}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1008, help="files against the floor (default 1,008)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the floor comparison (default 5)")
    ap.add_argument("--jobs-reps", type=int, default=2, help="repetitions of the --jobs comparison (default 2)")
    ap.add_argument("--scale", type=int, default=10, help="the --jobs and memory batch is this many times --n")
    ap.add_argument("--skip-jobs", action="store_true", help="leave out the 10x batch (--jobs and memory)")
    ap.add_argument("--json", metavar="OUT", help="write every figure as JSON")
    args = ap.parse_args(argv)
    res = run(args.n, args.reps, args.jobs_reps, args.scale, not args.skip_jobs)
    print(table(res), end="")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2, sort_keys=True)
            fh.write("\n")
    return res


def run(n: int = 1008, reps: int = 5, jobs_reps: int = 2, scale: int = 10, with_jobs: bool = True) -> dict[str, Any]:
    res: dict[str, Any] = {"machine": machine(), "load_start": load_avg()}
    tasks, bad = usable_tasks()
    res["tasks"], res["tasks_left_out"] = [t.id for t in tasks], bad
    work = tempfile.mkdtemp(prefix="mmverify-bench-batch-")
    env_cache = os.environ.get("MMVERIFY_CACHE")
    try:
        paths = corpus(os.path.join(work, "in"), tasks, n)
        listing = _listing(work, "files.txt", paths)
        log(f"[batch] {n} files of {len(tasks)} oracles; command against the floor, {reps} interleaved rounds ...")
        run_command(listing, os.path.join(work, "warm.jsonl"))        # the compiled-task cache, byte code
        cmd, floor = [], []
        for _ in range(reps):
            floor.append(run_floor(listing, os.path.join(work, "floor.jsonl")))
            cmd.append(run_command(listing, os.path.join(work, "rows.jsonl")))
        res["floor"] = {"wall": _summary(floor, "wall_s"), "cpu": _summary(floor, "cpu_s")}
        res["command"] = {"wall": _summary(cmd, "wall_s"), "cpu": _summary(cmd, "cpu_s"),
                          "rss_mib": _summary(cmd, "rss_mib")}
        res["ratio_wall_min"] = res["command"]["wall"]["min"] / res["floor"]["wall"]["min"]
        res["ratio_wall_median"] = res["command"]["wall"]["median"] / res["floor"]["wall"]["median"]
        res["ratio_cpu_min"] = res["command"]["cpu"]["min"] / res["floor"]["cpu"]["min"]
        res["ratios_per_round"] = [c["wall_s"] / f["wall_s"] for c, f in zip(cmd, floor)]
        log("[batch] stages ...")
        res["profile"] = stages(paths, work)
        if with_jobs:
            big = corpus(os.path.join(work, "big"), tasks, n * scale)
            blist = _listing(work, "big.txt", big)
            log(f"[batch] {len(big)} files: --jobs 2 against one process, {jobs_reps} interleaved rounds ...")
            one, two = [], []
            for _ in range(jobs_reps):
                one.append(run_command(blist, os.path.join(work, "big1.jsonl")))
                two.append(run_command(blist, os.path.join(work, "big2.jsonl"), "--jobs", "2"))
            with open(os.path.join(work, "big1.jsonl"), "rb") as a, open(os.path.join(work, "big2.jsonl"), "rb") as b:
                same = a.read() == b.read()
            res["jobs"] = {"artifacts": len(big), "one": {"wall": _summary(one, "wall_s"), "cpu": _summary(one, "cpu_s"),
                                                          "rss_mib": _summary(one, "rss_mib")},
                           "two": {"wall": _summary(two, "wall_s"), "cpu": _summary(two, "cpu_s"),
                                   "rss_mib": _summary(two, "rss_mib"),
                                   "workers_rss_mib": _summary(two, "workers_rss_mib")},
                           "speedup_min": min(o["wall_s"] for o in one) / min(t["wall_s"] for t in two),
                           "speedup_median": statistics.median(o["wall_s"] for o in one)
                           / statistics.median(t["wall_s"] for t in two),
                           "rows_identical": same}
            # on a machine whose cores are busy with other work, a second process of
            # the same session may get no more CPU than one (the kernel's autogroup
            # shares a session's CPU among its processes): the wall ratio then says
            # nothing of the code. The CPU-bound projection for two free cores: one
            # process's CPU over the larger of half the pool's CPU (workers and
            # driver together) and the driver's own
            proj = [o["cpu_s"] / max((t["driver_cpu_s"] + t["workers_cpu_s"]) / 2, t["driver_cpu_s"])
                    for o, t in zip(one, two)]
            res["jobs"]["projected_speedup_two_free_cores"] = min(proj)
            res["jobs"]["two"]["driver_cpu"] = _summary(two, "driver_cpu_s")
            res["jobs"]["two"]["workers_cpu"] = _summary(two, "workers_cpu_s")
            res["rss_growth"] = res["jobs"]["one"]["rss_mib"]["max"] / res["command"]["rss_mib"]["max"]
    finally:
        if env_cache is None:
            os.environ.pop("MMVERIFY_CACHE", None)
        shutil.rmtree(work, ignore_errors=True)
    res["load_end"] = load_avg()
    return res


def table(res: dict[str, Any]) -> str:
    lines = []
    add = lines.append
    m = res["machine"]
    add(f"batch scoring: {m['cpu_model']}, {m['cores_usable']} usable core(s), {m['python']}; "
        f"load average {res['load_start']} -> {res['load_end']}")
    if res["tasks_left_out"]:
        add(f"tasks left out (anchors fail to load): {', '.join(res['tasks_left_out'])}")
    f, c = res["floor"], res["command"]
    add(f"json floor        : wall min {fmt(f['wall']['min'])} s (median {fmt(f['wall']['median'])}, spread "
        f"{f['wall']['spread'] * 100:.0f} %), cpu min {fmt(f['cpu']['min'])} s")
    add(f"score --output    : wall min {fmt(c['wall']['min'])} s (median {fmt(c['wall']['median'])}, spread "
        f"{c['wall']['spread'] * 100:.0f} %), cpu min {fmt(c['cpu']['min'])} s, peak RSS {fmt(c['rss_mib']['max'])} MiB")
    add(f"ratio to the floor: {res['ratio_wall_min']:.2f}x wall (of minima; medians {res['ratio_wall_median']:.2f}x; "
        f"per round {', '.join(f'{r:.2f}' for r in res['ratios_per_round'])}), {res['ratio_cpu_min']:.2f}x cpu"
        f"   target <= 4x")
    j = res.get("jobs")
    if j:
        add(f"--jobs 2, {j['artifacts']} files: one process wall min {fmt(j['one']['wall']['min'])} s, two "
            f"{fmt(j['two']['wall']['min'])} s: {j['speedup_min']:.2f}x (medians {j['speedup_median']:.2f}x)   "
            f"target >= 1.8x; rows identical: {j['rows_identical']}")
        add(f"  cpu: one process {fmt(j['one']['cpu']['min'])} s; --jobs 2 driver {fmt(j['two']['driver_cpu']['min'])} s"
            f" + workers {fmt(j['two']['workers_cpu']['min'])} s; CPU-bound projection for two free cores: "
            f"{j['projected_speedup_two_free_cores']:.2f}x")
        add(f"peak RSS: {res['command']['rss_mib']['max']:.1f} MiB for {res['profile']['artifacts']} files, "
            f"{j['one']['rss_mib']['max']:.1f} MiB for {j['artifacts']} ({(res['rss_growth'] - 1) * 100:+.1f} %, "
            f"target within 10 %); --jobs 2: driver {j['two']['rss_mib']['max']:.1f} MiB, largest worker "
            f"{j['two']['workers_rss_mib']['max']:.1f} MiB")
    p = res["profile"]
    n = p["artifacts"]
    total = sum(s["cpu_s"] for s in p["stages"].values()) + p["start_one_file"]["cpu_s"]
    add(f"where the time goes ({n} files, in process, each stage alone; cpu ms total, us per file, share):")
    rows = [("start (one-file run of the command)", p["start_one_file"])] + list(p["stages"].items())
    for name, s in rows:
        add(f"  {name:48s} {s['cpu_s'] * 1000:8.0f} ms  {s['cpu_s'] / n * 1e6:7.0f} us  "
            f"{s['cpu_s'] / total * 100:5.1f} %   (wall {s['wall_s'] * 1000:.0f} ms)")
    add(f"  (score_artifact as a whole: {p['score_artifact_whole']['cpu_s'] * 1000:.0f} ms cpu; the write with an "
        f"fsync per row, as before: {p['write_fsync_every_row']['wall_s'] * 1000:.0f} ms wall)")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
