"""``mmverify export harbor OUT_DIR [--task ID ...]``: Harbor task folders."""
from __future__ import annotations

import click

from .common import anchors_option, task_errors


@click.group()
def export() -> None:
    """Write the tasks in the formats of other tools."""


@export.command()
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--task", "task_ids", multiple=True, help="task id (repeatable; default: every task)")
@anchors_option
@task_errors
def harbor(out_dir, task_ids, anchors_dir):
    """Write one Harbor task folder per task into OUT_DIR.

    Each folder holds instruction.md (statement, artifact schema, output path
    /app/<task-id>_result.json), task.toml, environment/Dockerfile,
    solution/solve.sh (the oracle) and tests/test.sh, which runs
    `mmverify verify` with the shipped engine and anchors and writes
    /logs/verifier/reward.json. Run them with `harbor run -p OUT_DIR -a AGENT -m MODEL`.
    """
    from mmverify.integrations.harbor import export_harbor

    for t in export_harbor(out_dir, task_ids, anchors_dir):
        click.echo(f"{t.task_id} -> {t.path}")
