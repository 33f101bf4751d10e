"""``mmverify new-task DIR --id ID``: start a task in the anchors folder DIR.

Writes ``DIR/ID/`` (task.json, artifact.schema.json, oracle.json, README.md,
problem.md) as a task that loads and passes its own contracts at once, every
decision left to the author marked ``TODO(author)``; adds the task to
``DIR/index.json`` when that file exists. Exit 2 when the folder exists and
is not empty or the id is not a task id.
"""
from __future__ import annotations

import json
import os
import re
import sys

import click

from mmverify.cli import EXIT_OK, EXIT_USAGE

from .common import task_errors

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@click.command("new-task")
@click.argument("anchors_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--id", "task_id", required=True, help="task id: lower-case letters, digits and dashes")
@task_errors
def new_task(anchors_dir, task_id):
    """Write a new task folder DIR/ID with every placeholder marked TODO(author)."""
    from mmverify.tasks.scaffold import index_entry, task_files
    from mmverify.tasks import load_task

    if not _ID.match(task_id):
        click.echo(f"error: {task_id!r} is not a task id (lower-case letters, digits and dashes)", err=True)
        sys.exit(EXIT_USAGE)
    folder = os.path.join(anchors_dir, task_id)
    if os.path.isdir(folder) and os.listdir(folder):
        click.echo(f"error: {folder} exists and is not empty", err=True)
        sys.exit(EXIT_USAGE)
    os.makedirs(folder, exist_ok=True)
    for name, text in task_files(task_id).items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    index = os.path.join(anchors_dir, "index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as fh:
            data = json.load(fh)
        if task_id not in [t.get("id") for t in data.get("tasks", [])]:
            data.setdefault("tasks", []).append(index_entry(task_id))
            with open(index, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    load_task(task_id, anchors_dir)  # the draft must load as written
    click.echo(f"wrote {folder}/ (task.json, artifact.schema.json, oracle.json, README.md, problem.md)")
    click.echo(f"next: mmverify audit --anchors {anchors_dir}   (lists every TODO(author), in the order to fix it)")
    sys.exit(EXIT_OK)
