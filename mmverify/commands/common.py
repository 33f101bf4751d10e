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



def executor_options(func):
    """``--executor`` and ``--wait``, for the commands that write a batch file."""
    func = click.option("--wait", is_flag=True,
                        help="when another run is writing the same --output file, wait for it instead of "
                             "refusing")(func)
    return click.option(
        "--executor", default="local", show_default=True, metavar="local|ray|ray://HOST:PORT|dask|dask://HOST:PORT",
        help="where the artifacts are scored: this process, a new local Ray or Dask cluster (ray: also the one "
             "RAY_ADDRESS names), or a running cluster (needs mmverify[ray] or mmverify[dask])")(func)


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
