"""Replay benchmark: per task with a replay, the time to replay an artifact and
the share of directional credit that is now verified.

    python benchmarks/replay.py [--repeat N] [--json OUT]

* replay time: CPU seconds of ``run_replay`` on the task's oracle (median of N);
* verified share: of the weight of the task's metrics (all, and one-sided
  only), the part whose claim on the oracle a replay verifies (a passing
  claim gate, :mod:`mmverify.scoring.verified`); the rest is paid for
  closeness to the panel alone. The totals over all tasks close the table.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from fractions import Fraction

from mmverify.reading.artifact import parse_file
from mmverify.pipeline.evaluate import score_artifact
from mmverify.replay import run_replay
from mmverify.scoring.verified import VERIFIED
from mmverify.tasks import DIRECTIONAL, load_all


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    sums = {"weight": Fraction(0), "verified": Fraction(0), "one_sided": Fraction(0), "one_sided_verified": Fraction(0)}
    for task in load_all():
        artifact = parse_file(task.oracle_path)
        times = []
        if task.replay:
            run_replay(task, artifact.data)  # official data loaded once, outside the timing
            for _ in range(args.repeat):
                t0 = time.process_time()
                run_replay(task, artifact.data)
                times.append(time.process_time() - t0)
        share = score_artifact(task, artifact, records=True).verified_share()
        weights = {m.id: m.weight for m in task.metrics}
        one_sided = {m.id for m in task.metrics if m.direction in DIRECTIONAL}
        judged = share.judgements
        row = {"task": task.id, "replay": task.replay,
               "replay_cpu_s": round(statistics.median(times), 4) if times else None,
               "weight": share.total_weight, "verified": share.verified_weight,
               "one_sided": sum((weights[k] for k in judged if k in one_sided), Fraction(0)),
               "one_sided_verified": sum((weights[k] for k, j in judged.items() if k in one_sided and j == VERIFIED),
                                         Fraction(0))}
        for k in sums:
            sums[k] += row[k]
        rows.append({k: float(v) if isinstance(v, Fraction) else v for k, v in row.items()})
        r = rows[-1]
        print(f"{task.id:<36} replay {'%.3f s' % r['replay_cpu_s'] if times else '-':>9}  "
              f"verified {r['verified']:g} of {r['weight']:g} weight, "
              f"{r['one_sided_verified']:g} of {r['one_sided']:g} one-sided", flush=True)
    replayed = sum(1 for r in rows if r["replay"])
    print(f"tasks with a replay: {replayed} of {len(rows)}; weight verified by a replay: "
          f"{float(sums['verified'] / sums['weight']):.1%} of all, "
          f"{float(sums['one_sided_verified'] / sums['one_sided']):.1%} of one-sided")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"tasks": rows, "totals": {k: float(v) for k, v in sums.items()}}, fh, indent=2)



def heliostat_costs(repeat: int = 3) -> dict:
    """The heliostat replay's two costs (CPU seconds, median of ``repeat``):
    Q1, which depends on no artifact and is computed once per process (the
    oracle's replay after that costs only the witness checks), and one Q2
    witness of 3,000 mirrors (5 m x 5 m on staggered rings about a tower at
    (0, -200))."""
    import math
    import os
    from decimal import Decimal

    from mmverify.replay import heliostat as hs
    from mmverify.tasks import load_task

    data_dir = os.path.join(load_task(hs.TASK_ID).directory, "data")
    q1 = []
    for _ in range(repeat):
        official = hs.load_official(data_dir)
        official.sun()
        t0 = time.process_time()
        official.q1()
        q1.append(time.process_time() - t0)
    rows, r = [], 105.0
    while len(rows) < 3000:
        k = int(2 * math.pi * r / 10.2)
        for j in range(k):
            a = 2 * math.pi * (j + 0.5 * (len(rows) % 2)) / k
            x, y = r * math.cos(a), -200 + r * math.sin(a)
            if math.hypot(x, y) <= 349 and len(rows) < 3000:
                rows.append([Decimal(f"{x:.3f}"), Decimal(f"{y:.3f}")])
        r += 10.2
    design = {"question": "q2", "tower_xy": [Decimal(0), Decimal(-200)], "mirror_width_m": Decimal(5),
              "mirror_height_m": Decimal(5), "installation_height_m": Decimal(4), "heliostats": rows}
    data = {"reproduced": {"design_summary": [{"question": "q1"}, design, {"question": "q3"}]}}
    w = []
    for _ in range(repeat):
        t0 = time.process_time()
        hs.replay(data, official)
        w.append(time.process_time() - t0)
    out = {"q1_cpu_s": round(statistics.median(q1), 3), "witness_3000_cpu_s": round(statistics.median(w), 3)}
    print(f"{'heliostat: Q1 once per process':<36} {out['q1_cpu_s']:.3f} s; a 3,000-mirror Q2 witness "
          f"{out['witness_3000_cpu_s']:.3f} s", flush=True)
    return out


if __name__ == "__main__":
    main()
    heliostat_costs()
