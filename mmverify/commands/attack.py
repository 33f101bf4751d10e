"""``mmverify attack``: how much a blind attacker scores on each task.

The attacker builds artifacts from the statement, the artifact schema and
``gate`` verdicts only (see :mod:`mmverify.adversary`), scores each once, and
this command prints per task the best attempt, the mean score per attempt, the
expected best of 5 and of 20 attempts drawn at random, and the strategy of the
best; then the means over tasks. A benchmark maintainer runs it on new anchors:
a high blind score means the task pays for fabrication.
Exit 1 when ``--max-task`` or ``--max-mean`` is exceeded.
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT

from .common import anchors_option, task_errors

# the strategies of mmverify.adversary.attack.STRATEGIES, spelled out so that
# the command line is built without importing the attacker
STRATEGY_NAMES = ("mid", "statement", "extreme", "extreme_statement", "uniform", "loguniform", "statement_derived",
                  "description", "gate_constants", "boundary", "omit_optional", "label_enum")


@click.command()
@click.option("--task", "task_ids", multiple=True, help="task id (repeatable; default: every task)")
@anchors_option
@click.option("--strategy", "strategies", multiple=True, type=click.Choice(list(STRATEGY_NAMES)),
              help="attack strategy (repeatable; default: all)")
@click.option("--attempts", type=click.IntRange(1, 1000), default=None,
              help="seeded attempts per generic family and task (default: the attacker's own)")
@click.option("--json", "as_json", is_flag=True, help="JSON output")
@click.option("--save", type=click.Path(file_okay=False), default=None,
              help="write each task's best artifact to this folder as <task-id>_attack.json")
@click.option("--max-task", type=click.FloatRange(0, 1), default=None, help="exit 1 if a task's best exceeds this")
@click.option("--max-mean", type=click.FloatRange(0, 1), default=None, help="exit 1 if the mean exceeds this")
@task_errors
def attack(task_ids, anchors_dir, strategies, attempts, as_json, save, max_task, max_mean):
    """Blind attack on each task: per-task best O-EVAL, per-attempt mean, expected best of 5 and 20."""
    import json
    import os

    from mmverify.adversary import ATTEMPTS, STRATEGIES, attack_task, to_json
    from mmverify.tasks import load_task, task_ids as all_ids

    ids = list(task_ids) or all_ids(anchors_dir)
    rows = []
    for tid in ids:
        result = attack_task(load_task(tid, anchors_dir), strategies=tuple(strategies) or STRATEGIES,
                             attempts=attempts or ATTEMPTS)
        if not result.attempts:     # e.g. label_enum alone on a task without enum labels
            rows.append({"task": tid, "best_oeval": 0.0, "mean_per_attempt": 0.0, "best_of_5": 0.0,
                         "best_of_20": 0.0, "strategy": None, "label_variant": None, "status": None,
                         "artifacts": 0})
            continue
        best = result.best
        rows.append({"task": tid, "best_oeval": float(best.score), "mean_per_attempt": float(result.mean),
                     "best_of_5": float(result.expected_best(5)), "best_of_20": float(result.expected_best(20)),
                     "strategy": best.strategy, "label_variant": best.variant, "status": best.status,
                     "artifacts": len(result.attempts)})
        if save:
            os.makedirs(save, exist_ok=True)
            with open(os.path.join(save, f"{tid}_attack.json"), "w", encoding="utf-8") as fh:
                fh.write(to_json(best.artifact) + "\n")
    columns = ("best_oeval", "mean_per_attempt", "best_of_5", "best_of_20")
    means = {c: sum(r[c] for r in rows) / len(rows) if rows else 0.0 for c in columns}
    mean = means["best_oeval"]
    top = max((r["best_oeval"] for r in rows), default=0.0)
    if as_json:
        click.echo(json.dumps({"tasks": rows, "mean": mean, "max": top, "mean_per_attempt": means["mean_per_attempt"],
                               "mean_best_of_5": means["best_of_5"], "mean_best_of_20": means["best_of_20"]},
                              indent=2, sort_keys=True))
    else:
        click.echo(f"{'task':<36} {'best':>6} {'mean':>6} {'E[5]':>6} {'E[20]':>6}  {'strategy':<18} status")
        for r in rows:
            click.echo(f"{r['task']:<36} " + " ".join(f"{r[c]:6.3f}" for c in columns)
                       + f"  {r['strategy'] or '-':<18} {r['status'] or 'no attempt'}")
        click.echo(f"{'mean':<36} " + " ".join(f"{means[c]:6.3f}" for c in columns)
                   + f"  (max best {top:.3f}, {len(rows)} task(s))")
    failed = (max_task is not None and top > max_task) or (max_mean is not None and mean > max_mean)
    sys.exit(EXIT_VERDICT if failed else EXIT_OK)
