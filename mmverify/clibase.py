"""What every command line of ``mmverify`` shares, without click: the exit
codes, the :class:`Option` declarations (from which both :mod:`mmverify.launch`
and the click commands read an option), and click-like plain output.
"""
from __future__ import annotations

import re
import sys
from typing import NamedTuple


class Option(NamedTuple):
    """One option of a command: its spellings, the parameter it sets, and how
    click declares it (a required value, a flag, a path with click's checks).
    Immutable as a frozen dataclass, and a named tuple because every start
    defines it: a dataclass generates its methods at that point."""

    names: tuple[str, ...]
    dest: str
    help: str
    required: bool = False
    flag: bool = False
    # None: plain text; "path": click.Path(); "folder": click.Path(file_okay=False);
    # "file": click.Path(dir_okay=False)
    path: str | None = None
    choices: tuple[str, ...] | None = None     # click.Choice; None: any text
    default: str | None = None
    show_default: bool = False


# exit codes (the list is in mmverify.cli's notes and the README)
EXIT_OK = 0
EXIT_VERDICT = 1
EXIT_USAGE = 2
EXIT_TASK = 3
EXIT_NO_TASK = 4
EXIT_NO_LEAN = 5

# options several commands share (mmverify.commands.common makes their click decorators)
ANCHORS = Option(("--anchors",), "anchors_dir", "anchors folder (default: $MMVERIFY_ANCHORS or the bundled anchors)",
                 path="folder")
FORMAT = Option(("--format",), "fmt", "output format", choices=("table", "json", "md"), default="table",
                show_default=True)
STRICT_SCHEMA = Option(("--strict-schema",), "strict_schema",
                       "any schema violation makes the artifact invalid (O-EVAL 0); by default a violation zeroes "
                       "only the scored fields it touches and is otherwise a warning", flag=True)


# What the commands run without click say (as click's echo says it)

_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")      # the sequences click's echo removes


def echo(text: str, nl: bool = True, err: bool = False) -> None:
    """Write ``text`` (and a newline) as ``click.echo`` does."""
    stream = sys.stderr if err else sys.stdout
    out = text + "\n" if nl else text
    if not stream.isatty():
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def task_error_exit(exc: Exception) -> int:
    """Say a task-level error (the task cannot be told, or is broken) and return its exit code."""
    from mmverify.pipeline.evaluate import TaskMismatch, TaskNotInferred

    if isinstance(exc, (TaskNotInferred, TaskMismatch)):
        echo(f"error: {exc}", err=True)
        return EXIT_NO_TASK
    echo(f"task error: {exc}", err=True)
    return EXIT_TASK


# The interpreter's last garbage collection, at exit, walks every object still
# alive: for a short run such as ``mmverify score`` about a tenth of the run.
# Frozen (gc.freeze, registered once per process by the first command) they are
# left out of it. Nothing else changes: the collector runs as usual while the
# command runs, and what is still alive at exit goes with the process.
_EXIT_FREEZE: list[bool] = []


def freeze_at_exit() -> None:
    """Register ``gc.freeze`` to run at exit, once per process."""
    if not _EXIT_FREEZE:
        import atexit
        import gc

        _EXIT_FREEZE.append(True)
        atexit.register(gc.freeze)
