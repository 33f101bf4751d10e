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

from mmverify.artifact import parse_file
from mmverify.evaluate import score_artifact
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


if __name__ == "__main__":
    main()
