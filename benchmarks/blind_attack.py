"""Blind-attack benchmark: per-task best and mean O-EVAL of artifacts built from
the statement, the schema and ``gate`` verdicts only, under both rulesets.

    python benchmarks/blind_attack.py [--task ID ...] [--json OUT]

Targets: mean <= 0.05 and no task above 0.15 under the default (verified)
ruleset, with every oracle at 1.0.
"""
from __future__ import annotations

import argparse
import json
import time

from mmverify.adversary import STRATEGIES, attack_task, to_json
from mmverify.artifact import parse_bytes
from mmverify.evaluate import score_artifact
from mmverify.tasks import load_all, load_task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", action="append", default=[])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    tasks = [load_task(t) for t in args.task] if args.task else load_all()
    rows = []
    for task in tasks:
        t0 = time.process_time()
        res = attack_task(task, strategies=STRATEGIES)
        best = res.best
        paper = max(float(score_artifact(task, parse_bytes(to_json(a.artifact).encode()), ruleset="paper").oeval or 0)
                    for a in res.attempts)
        oracle = score_artifact(task, parse_bytes(open(task.oracle_path, "rb").read())).oeval
        rows.append({"task": task.id, "verified": float(best.score), "paper_ruleset": paper,
                     "strategy": best.strategy, "attempts": len(res.attempts),
                     "scored_attempts": sum(a.status == "scored" for a in res.attempts),
                     "oracle": float(oracle), "cpu_s": round(time.process_time() - t0, 2)})
        print(f"{task.id:<36} verified {float(best.score):.3f}  paper {paper:.3f}  "
              f"({best.strategy}; {rows[-1]['scored_attempts']}/{len(res.attempts)} scored; "
              f"oracle {float(oracle):.1f}; {rows[-1]['cpu_s']} s)", flush=True)
    mean = sum(r["verified"] for r in rows) / len(rows)
    pmean = sum(r["paper_ruleset"] for r in rows) / len(rows)
    summary = {"mean_verified": mean, "max_verified": max(r["verified"] for r in rows),
               "mean_paper_ruleset": pmean, "max_paper_ruleset": max(r["paper_ruleset"] for r in rows),
               "tasks": rows}
    print(f"mean verified {mean:.3f} (max {summary['max_verified']:.3f}); "
          f"paper ruleset {pmean:.3f} (max {summary['max_paper_ruleset']:.3f})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2)


if __name__ == "__main__":
    main()
