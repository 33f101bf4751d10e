"""Batch work on a cluster: throughput of the shared batch engine at 1, 2 and
4 workers (Ray and Dask, local clusters), its overhead per artifact against
the single-process run, and the acceptance scenario of a board of about 2,000
manifest rows on a local Ray cluster, killed halfway and resumed.

    pip install -e '.[ray,dask]'
    python benchmarks/scaleout.py                    # about 2,000 rows
    python benchmarks/scaleout.py --rows 400 --engines ray --acceptance-rows 2000 --json out.json

Every distributed run's output file is compared byte for byte with the
single-process run's; the script stops with an error if one differs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def make_board(folder: str, rows_wanted: int) -> tuple[str, int]:
    """A manifest over the bundled anchors: entries x tasks x seeds, each row
    its own copy of the task's oracle artifact."""
    from mmverify.tasks import load_all

    tasks = load_all()
    seeds = max(1, rows_wanted // (2 * len(tasks)))
    lines = []
    for entry in ("base", "other"):
        for t in tasks:
            with open(os.path.join(t.directory, "oracle.json"), "rb") as fh:
                data = fh.read()
            for s in range(seeds):
                rel = f"runs/{entry}/{s}/{t.id}_result.json"
                os.makedirs(os.path.join(folder, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(folder, rel), "wb") as fh:
                    fh.write(data)
                lines.append(json.dumps({"entry": entry, "task": t.id, "seed": s, "artifact": rel, "cost_usd": 1}))
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return manifest, len(lines)


def timed_board(manifest: str, out: str, executor=None) -> float:
    from mmverify.batch.manifest import load_tasks_for, read_manifest, score_manifest
    from mmverify.tasks import task_ids

    man = read_manifest(manifest, task_ids())
    tasks = load_tasks_for(man, None)
    if os.path.exists(out):
        os.remove(out)
    t0 = time.perf_counter()
    score_manifest(man, tasks, output=out, executor=executor)
    return time.perf_counter() - t0


def same(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def throughput(manifest: str, n: int, folder: str, workers: list[int], engines: list[str]) -> dict:
    local_out = os.path.join(folder, "local.jsonl")
    timed_board(manifest, local_out)                   # first run: imports, task loading, gate compilation
    local = timed_board(manifest, local_out)
    res = {"rows": n, "local_s": local, "local_rows_per_s": n / local, "runs": []}
    print(f"local, one process: {local:.1f} s, {n / local:.0f} rows/s", flush=True)
    for engine in engines:
        for w in workers:
            t0 = time.perf_counter()
            if engine == "ray":
                import ray

                from mmverify.batch.executors import RayExecutor
                ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False)
                ex = RayExecutor()
            else:
                from distributed import Client, LocalCluster

                from mmverify.batch.executors import DaskExecutor
                cluster = LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None)
                client = Client(cluster)
                ex = DaskExecutor(client=client)
            start = time.perf_counter() - t0
            out = os.path.join(folder, f"{engine}-{w}.jsonl")
            try:
                warm = timed_board(manifest, out, ex)          # first run: workers import and load tasks
                wall = timed_board(manifest, out, ex)
            finally:
                if engine == "ray":
                    ray.shutdown()
                else:
                    client.close()
                    cluster.close()
            if not same(out, local_out):
                raise SystemExit(f"{engine} at {w} worker(s): rows differ from the local run")
            row = {"engine": engine, "workers": w, "cluster_start_s": start, "first_run_s": warm, "wall_s": wall,
                   "rows_per_s": n / wall, "overhead_ms_per_artifact": (wall * w - local) / n * 1000}
            res["runs"].append(row)
            print(f"{engine} x{w}: start {start:.1f} s, first run {warm:.1f} s, warm run {wall:.1f} s, "
                  f"{n / wall:.0f} rows/s, overhead {row['overhead_ms_per_artifact']:.2f} ms/artifact "
                  "(worker-seconds over the local run, per row)", flush=True)
    return res


def acceptance(manifest: str, n: int, folder: str, cpus: int) -> dict:
    """`mmverify board --executor ray` killed halfway, resumed; rows and board
    against the single-process run."""
    import ray

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    env = dict(os.environ, RAY_ADDRESS=ray.get_runtime_context().gcs_address)
    base = [sys.executable, "-m", "mmverify", "board", manifest, "--baseline", "base", "--format", "json",
            "--bootstrap", "200"]
    try:
        local_out = os.path.join(folder, "acc-local.jsonl")
        t0 = time.perf_counter()
        local = subprocess.run(base + ["--output", local_out], capture_output=True, text=True, env=env)
        local_s = time.perf_counter() - t0
        out = os.path.join(folder, "acc-ray.jsonl")
        args = base + ["--output", out, "--executor", "ray"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        while (not os.path.exists(out) or open(out, "rb").read().count(b"\n") < n // 2) and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        first_s = time.perf_counter() - t0
        with open(out, "rb") as fh:
            kept = fh.read().count(b"\n")
        t0 = time.perf_counter()
        second = subprocess.run(args, capture_output=True, text=True, env=env)
        second_s = time.perf_counter() - t0
    finally:
        ray.shutdown()
    identical = same(out, local_out) and second.stdout == local.stdout
    summary = second.stderr.strip().splitlines()[-1] if second.stderr.strip() else ""
    res = {"rows": n, "cpus": cpus, "local_s": local_s, "killed_after_s": first_s, "rows_at_kill": kept,
           "resume_s": second_s, "resume_summary": summary, "identical_rows_and_board": identical,
           "distributed_total_s": first_s + second_s}
    print(f"acceptance: {n} rows; local run {local_s:.1f} s; ray run killed after {first_s:.1f} s with {kept} rows "
          f"written; resumed in {second_s:.1f} s ({summary}); identical rows and board: {identical}", flush=True)
    if not identical:
        raise SystemExit("the resumed Ray run differs from the local run")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--engines", default="ray,dask")
    ap.add_argument("--acceptance-rows", type=int, default=None, help="rows of the acceptance board (default --rows)")
    ap.add_argument("--skip-acceptance", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="mmverify-scaleout-")
    try:
        manifest, n = make_board(folder, a.rows)
        out = {"cores": os.cpu_count(), "load_before": os.getloadavg()}
        out["throughput"] = throughput(manifest, n, folder, [int(w) for w in a.workers.split(",")],
                                       [e for e in a.engines.split(",") if e])
        if not a.skip_acceptance:
            if a.acceptance_rows and a.acceptance_rows != a.rows:
                sub = os.path.join(folder, "acceptance")
                os.makedirs(sub)
                manifest, n = make_board(sub, a.acceptance_rows)
            out["acceptance"] = acceptance(manifest, n, folder, 2)
        out["load_after"] = os.getloadavg()
        if a.json:
            with open(a.json, "w", encoding="utf-8") as fh:
                json.dump(out, fh, indent=2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
