"""What a policy trained on mmverify's reward could climb to: a score-feedback
search (:mod:`mmverify.adversary.feedback`) on every bundled task, from the
best artifact the blind attacker builds, with a fixed budget of scores.

    python benchmarks/feedback_attack.py [--task ID ...] [--budget 2000] [--attempts 8] [--json OUT]

Prints per task the blind start and the score reached under ``verified`` (and
the final artifact's score under ``paper``), the scores used and how many
leaves moved, then the means. The search reads only scores and the public
schema; a task's replay runs on every score, so the replay tasks take longest
(multibeam's line plan about a quarter of a second per score).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from bench_common import log


def run(task_ids: list[str] | None, budget: int, attempts: int) -> dict:
    from mmverify.adversary import STRATEGIES, attack_task
    from mmverify.adversary.feedback import climb
    from mmverify.reading.artifact import from_python
    from mmverify.pipeline.evaluate import reward_of
    from mmverify.tasks import load_all, load_task

    tasks = [load_task(t) for t in task_ids] if task_ids else load_all()
    rows = {}
    for task in tasks:
        c0 = time.process_time()
        blind = attack_task(task, strategies=STRATEGIES, attempts=attempts).best
        found = climb(task, blind.artifact, budget)
        rows[task.id] = {"start": found.start, "start_strategy": blind.strategy, "verified": found.final,
                         "paper": reward_of(task, from_python(found.artifact), ruleset="paper"),
                         "calls": found.calls, "moved": len(found.moved),
                         "cpu_s": round(time.process_time() - c0, 1)}
        log(f"  {task.id}: {found.start:.3f} -> {found.final:.3f} in {found.calls} scores")
    n = len(rows)
    return {"budget": budget, "attempts_per_family": attempts, "tasks": rows,
            "mean_start": sum(r["start"] for r in rows.values()) / n,
            "mean_verified": sum(r["verified"] for r in rows.values()) / n,
            "mean_paper": sum(r["paper"] for r in rows.values()) / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", action="append", default=None, metavar="ID")
    ap.add_argument("--budget", type=int, default=2000, help="scores per task (default 2000)")
    ap.add_argument("--attempts", type=int, default=8, help="blind attempts per family for the start (default 8)")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    res = run(args.task, args.budget, args.attempts)
    print(f"{'task':36s} {'start':>6s} {'final':>6s} {'paper':>6s} {'scores':>7s} {'moved':>6s}  start from")
    for tid, r in res["tasks"].items():
        print(f"{tid:36s} {r['start']:6.3f} {r['verified']:6.3f} {r['paper']:6.3f} {r['calls']:7d} {r['moved']:6d}"
              f"  {r['start_strategy']} ({r['cpu_s']} s)")
    print(f"{'mean over ' + str(len(res['tasks'])) + ' task(s)':36s} {res['mean_start']:6.3f} "
          f"{res['mean_verified']:6.3f} {res['mean_paper']:6.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
