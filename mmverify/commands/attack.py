"""``mmverify attack``: how much a blind attacker scores on each task.

The attacker builds artifacts from the statement, the artifact schema and
``gate`` verdicts only (see :mod:`mmverify.adversary`), scores each once, and
this command prints the per-task best and the mean. A benchmark maintainer runs
it on new anchors: a high blind score means the task pays for fabrication.
Exit 1 when ``--max-task`` or ``--max-mean`` is exceeded.
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT

from .common import anchors_option, task_errors


@click.command()
@click.option("--task", "task_ids", multiple=True, help="task id (repeatable; default: every task)")
@anchors_option
@click.option("--strategy", "strategies", multiple=True,
              type=click.Choice(["mid", "statement", "extreme", "extreme_statement"]),
              help="attack strategy (repeatable; default: all four)")
@click.option("--json", "as_json", is_flag=True, help="JSON output")
@click.option("--save", type=click.Path(file_okay=False), default=None,
              help="write each task's best artifact to this folder as <task-id>_attack.json")
@click.option("--max-task", type=click.FloatRange(0, 1), default=None, help="exit 1 if a task's best exceeds this")
@click.option("--max-mean", type=click.FloatRange(0, 1), default=None, help="exit 1 if the mean exceeds this")
@task_errors
def attack(task_ids, anchors_dir, strategies, as_json, save, max_task, max_mean):
    """Blind attack on each task: per-task best O-EVAL and the mean."""
    import json
    import os

    from mmverify.adversary import STRATEGIES, attack_task, to_json
    from mmverify.tasks import load_task, task_ids as all_ids

    ids = list(task_ids) or all_ids(anchors_dir)
    rows = []
    for tid in ids:
        result = attack_task(load_task(tid, anchors_dir), strategies=tuple(strategies) or STRATEGIES)
        best = result.best
        rows.append({"task": tid, "best_oeval": float(best.score), "strategy": best.strategy,
                     "label_variant": best.variant, "status": best.status, "artifacts": len(result.attempts)})
        if save:
            os.makedirs(save, exist_ok=True)
            with open(os.path.join(save, f"{tid}_attack.json"), "w", encoding="utf-8") as fh:
                fh.write(to_json(best.artifact) + "\n")
    mean = sum(r["best_oeval"] for r in rows) / len(rows) if rows else 0.0
    top = max((r["best_oeval"] for r in rows), default=0.0)
    if as_json:
        click.echo(json.dumps({"tasks": rows, "mean": mean, "max": top}, indent=2, sort_keys=True))
    else:
        for r in rows:
            click.echo(f"{r['task']:<36} {r['best_oeval']:.3f}  {r['strategy']:<18} {r['status']}")
        click.echo(f"{'mean':<36} {mean:.3f}   (max {top:.3f}, {len(rows)} task(s))")
    failed = (max_task is not None and top > max_task) or (max_mean is not None and mean > max_mean)
    sys.exit(EXIT_VERDICT if failed else EXIT_OK)
