"""Helpers shared by the sub-commands: anchor options and task-error handling."""
from __future__ import annotations

import functools
import sys

import click

from mmverify.clibase import ANCHORS, FORMAT, STRICT_SCHEMA, Option, task_error_exit

_PATH_TYPES = {None: None, "path": click.Path(), "folder": click.Path(file_okay=False),
               "file": click.Path(dir_okay=False)}


def click_option(option: Option):
    """The click decorator of an option declared as a :class:`mmverify.clibase.Option`."""
    if option.flag:
        return click.option(*option.names, option.dest, is_flag=True, help=option.help)
    kind = click.Choice(list(option.choices)) if option.choices is not None else _PATH_TYPES[option.path]
    extra = {"default": option.default, "show_default": True} if option.show_default else \
        {"default": option.default} if option.default is not None else {}
    return click.option(*option.names, option.dest, required=option.required, type=kind, help=option.help, **extra)


def options_of(options: tuple[Option, ...]):
    """Decorator: every option of ``options``, in their order (as separate
    ``@click.option`` lines above the function would give)."""
    def deco(func):
        for option in reversed(options):
            func = click_option(option)(func)
        return func

    return deco


anchors_option = click_option(ANCHORS)


def deprecated_alias(old: str, new: str, dest: str, **kw):
    """Decorator: a hidden option ``old`` that sets ``dest`` as ``new`` does,
    with a note on stderr (``new`` wins when both are given). Kept so that
    scripts written against an older spelling go on working; help shows only
    ``new``."""
    alias = "deprecated_" + dest
    option = click.option(old, alias, hidden=True, default=None, **kw)

    def deco(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            value = kwargs.pop(alias, None)
            if value is not None:
                click.echo(f"note: {old} is deprecated; use {new}", err=True)
                if kwargs.get(dest) is None:
                    kwargs[dest] = value
            return func(*args, **kwargs)

        return option(wrapper)

    return deco


strict_schema_option = click_option(STRICT_SCHEMA)


def progress(items, enabled: bool = True):
    """``items``, with a progress bar on stderr when stderr is a terminal (and
    ``enabled``); silent otherwise, so pipes and logs stay clean."""
    if not enabled or not sys.stderr.isatty():
        yield from items
        return
    with click.progressbar(items, label="scoring", file=sys.stderr, show_pos=True) as bar:
        yield from bar


class _Counter:
    def __init__(self, total: int):
        self._bar = click.progressbar(length=total, label="scoring", file=sys.stderr, show_pos=True)
        self._bar.__enter__()

    def step(self, *_):
        self._bar.update(1)

    def close(self):
        self._bar.__exit__(None, None, None)


def progress_counter(total: int) -> _Counter | None:
    """A progress bar advanced by ``.step()``, on a terminal's stderr only (else None)."""
    return _Counter(total) if total > 1 and sys.stderr.isatty() else None


format_option = click_option(FORMAT)



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
    """Turn anchor/task definition errors into a clear message and exit code 3,
    and an artifact whose task cannot be told or disagrees with ``--task`` into
    exit code 4."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from mmverify.pipeline.evaluate import TaskMismatch, TaskNotInferred
        from mmverify.tasks import TaskLoadError

        try:
            return func(*args, **kwargs)
        except (TaskNotInferred, TaskMismatch, TaskLoadError) as exc:
            sys.exit(task_error_exit(exc))

    return wrapper
