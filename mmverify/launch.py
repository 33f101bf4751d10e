"""The ``mmverify`` program's entry point, in front of :mod:`mmverify.cli`.

``mmverify verify`` is what a terminal-agent harness starts once per task run,
and ``mmverify score FILE`` what a user or a script starts on one artifact:
their start-up is paid on every run. When such a command line has one of the
plain forms (one artifact for ``score``; each option at most once, as
``--name value`` or ``--name=value``, the flag alone, a choice among its
choices), :func:`read_options` reads it from the options' own declaration
(:data:`mmverify.plugin.verifier.VERIFY_OPTIONS`,
:data:`mmverify.commands.score_plain.SCORE_OPTIONS`, from which the click
commands are built as well) and the command runs without loading click and
what click imports, about a fifth of a cold start. Every other command line
(help, an unknown, repeated or abbreviated option, a missing or empty value,
a value starting with ``-``, a path click's checks would refuse, several
artifacts) goes to :mod:`mmverify.cli` unchanged, which parses it as always
and gives its usual messages. A test holds the two readings to each other on
generated command lines.
"""
from __future__ import annotations

import os
import re
import stat
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


# command -> (module, its options, the name of its one positional artifact or
# None, the function running it on what read_options gives)
PLAIN_COMMANDS = {
    "verify": ("mmverify.plugin.verifier", "VERIFY_OPTIONS", None, "verify_command"),
    "score": ("mmverify.commands.score_plain", "SCORE_OPTIONS", "artifacts", "score_plain"),
}


def main(argv: list[str] | None = None) -> None:
    """Run the command line ``argv`` (default: the process's)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in PLAIN_COMMANDS:
        import importlib

        module_name, options, positional, run = PLAIN_COMMANDS[args[0]]
        module = importlib.import_module(module_name)
        params = read_options(args[1:], getattr(module, options), positional)
        if params is not None:
            freeze_at_exit()
            sys.exit(getattr(module, run)(**params))
    from mmverify.cli import main as cli

    if argv is None:
        cli()
    else:
        cli(args=args)


def read_options(args: list[str], options: tuple[Option, ...],
                 positional: str | None = None) -> dict[str, object] | None:
    """The parameters of a plain command line, as click would set them; None
    for anything else (click then reads it and says what is wrong). With
    ``positional``, the line names exactly one file, set as a 1-tuple."""
    by_name = {name: option for option in options for name in option.names}
    params: dict[str, object] = {o.dest: False if o.flag else o.default for o in options}
    seen = set()
    files = []
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=") if args[i].startswith("--") else (args[i], "", "")
        if positional is not None and not name.startswith("-"):
            if not name or not _path_passes(name, "file"):
                return None
            files.append(name)
            i += 1
            continue
        option = by_name.get(name)
        if option is None or option.dest in seen:
            return None
        seen.add(option.dest)
        if option.flag:
            if eq:
                return None
            params[option.dest] = True
        else:
            if not eq:
                i += 1
                if i == len(args):
                    return None
                value = args[i]
            if not value or value.startswith("-") or not _path_passes(value, option.path) or (
                    option.choices is not None and value not in option.choices):
                return None
            params[option.dest] = value
        i += 1
    if any(o.required and o.dest not in seen for o in options):
        return None
    if positional is not None:
        if len(files) != 1:
            return None
        params[positional] = tuple(files)
    return params


def _path_passes(value: str, kind: str | None) -> bool:
    """Whether click's ``Path`` check (no existence required, readable) lets
    ``value`` through: an absent path does; an existing one must be readable,
    not a regular file where a folder is asked for, nor a folder where a file is."""
    if kind is None:
        return True
    try:
        st = os.stat(value)
    except OSError:
        return True
    except ValueError:      # a NUL in the name: left to click's own reading
        return False
    if kind == "folder" and stat.S_ISREG(st.st_mode) or kind == "file" and stat.S_ISDIR(st.st_mode):
        return False
    return os.access(value, os.R_OK)


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
    from mmverify.evaluate import TaskMismatch, TaskNotInferred

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
