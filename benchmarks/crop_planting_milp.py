"""Audit entry: the exact Q1 optima of CUMCM 2024 C under the replay's rules (HiGHS via scipy).

    python benchmarks/crop_planting_milp.py [--time-limit S] [--write]

Prints, per surplus case, HiGHS' status, objective, MIP gap and time, and the
exact replayed profit of the optimal plan next to the published anchor.
``--write`` records the result in ``anchors/cumcm-2024-c-crop-planting/data/milp_optimum.json``
and puts the optimal plans into the oracle as its witness. Needs the ``replay`` extra.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from mmverify.reading.numbers import fraction_text
from mmverify.replay import crop_planting as cp
from mmverify.replay import crop_planting_milp as milp

HERE = os.path.dirname(os.path.abspath(__file__))
TASK_DIR = os.path.join(HERE, os.pardir, "anchors", cp.TASK_ID)
ANCHOR = {"waste": 40418877, "discount": 58718967}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    official = cp.load_official(os.path.join(TASK_DIR, "data"))
    record, plans = {}, {}
    for case in cp.CASES:
        sol = milp.solve(official, case, time_limit_s=args.time_limit)
        plan = {(p, y, s, c): a for p, y, s, c, a in sol.plan}
        profit = cp.plan_profit(plan, official, case)
        feasible = not cp.plan_violations(plan, official)
        print(f"{case:9s} status={sol.status} objective={sol.objective:.2f} gap={sol.mip_gap} "
              f"time={sol.seconds:.1f}s replayed={float(profit):.2f} feasible={feasible} anchor={ANCHOR[case]} "
              f"diff={float(profit) - ANCHOR[case]:+.0f}")
        record[case] = {"status": sol.status, "highs_objective_yuan": round(sol.objective, 2),
                        "mip_gap": sol.mip_gap, "replayed_profit_yuan": fraction_text(profit),
                        "feasible": feasible, "rows": len(sol.plan), "anchor_yuan": ANCHOR[case]}
        plans[case] = sol.plan
    if args.write:
        with open(os.path.join(TASK_DIR, "data", "milp_optimum.json"), "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=2)
            fh.write("\n")
        oracle_path = os.path.join(TASK_DIR, "oracle.json")
        with open(oracle_path, encoding="utf-8") as fh:
            oracle = json.load(fh)
        for case in cp.CASES:
            oracle["experiment_result"]["q1"][cp.PLAN_FIELD[case]] = [
                {"year": y, "season": s, "plot": p, "crop_id": c, "area_mu": float(a)} for p, y, s, c, a in plans[case]]
        with open(oracle_path, "w", encoding="utf-8") as fh:
            json.dump(oracle, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
