"""Helpers shared by the sub-commands: anchor options and task-error handling."""
from __future__ import annotations

import functools
import sys

import click

from mmverify.cli import EXIT_NO_TASK, EXIT_TASK

anchors_option = click.option(
    "--anchors", "anchors_dir", type=click.Path(file_okay=False), default=None,
    help="anchors folder (default: $MMVERIFY_ANCHORS or the bundled anchors)")
format_option = click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "md"]), default="table", show_default=True,
    help="output format")


def task_errors(func):
    """Turn anchor/task definition errors into a clear message and exit code 3/4."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from mmverify.evaluate import TaskNotInferred
        from mmverify.tasks import TaskLoadError

        try:
            return func(*args, **kwargs)
        except TaskNotInferred as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_NO_TASK)
        except TaskLoadError as exc:
            click.echo(f"task error: {exc}", err=True)
            sys.exit(EXIT_TASK)

    return wrapper
