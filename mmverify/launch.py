"""The ``mmverify`` program's entry point, in front of :mod:`mmverify.cli`.

``mmverify verify`` is what a terminal-agent harness starts once per task run,
so its start-up is paid on every run. When its command line has one of the
plain forms (each option at most once, as ``--name value`` or ``--name=value``,
the flag alone), :func:`read_options` reads it from the options' own
declaration (:data:`mmverify.plugin.verifier.VERIFY_OPTIONS`, from which the
click command is built as well) and the command runs without loading click
and what click imports, about a fifth of a cold ``verify``. Every other
command line (help, an unknown, repeated or abbreviated option, a missing or
empty value, a value starting with ``-``, a path click's checks would refuse)
goes to :mod:`mmverify.cli` unchanged, which parses it as always and gives its
usual messages. A test holds the two readings to each other on generated
command lines.
"""
from __future__ import annotations

import os
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
    # None: plain text; "path": click.Path(); "folder": click.Path(file_okay=False)
    path: str | None = None


ANCHORS = Option(("--anchors",), "anchors_dir", "anchors folder (default: $MMVERIFY_ANCHORS or the bundled anchors)",
                 path="folder")


def main(argv: list[str] | None = None) -> None:
    """Run the command line ``argv`` (default: the process's)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["verify"]:
        from mmverify.plugin.verifier import VERIFY_OPTIONS, verify_command

        params = read_options(args[1:], VERIFY_OPTIONS)
        if params is not None:
            freeze_at_exit()
            sys.exit(verify_command(**params))
    from mmverify.cli import main as cli

    if argv is None:
        cli()
    else:
        cli(args=args)


def read_options(args: list[str], options: tuple[Option, ...]) -> dict[str, object] | None:
    """The parameters of a plain command line, as click would set them; None
    for anything else (click then reads it and says what is wrong)."""
    by_name = {name: option for option in options for name in option.names}
    params: dict[str, object] = {o.dest: False if o.flag else None for o in options}
    seen = set()
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=") if args[i].startswith("--") else (args[i], "", "")
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
            if not value or value.startswith("-") or not _path_passes(value, option.path):
                return None
            params[option.dest] = value
        i += 1
    if any(o.required and o.dest not in seen for o in options):
        return None
    return params


def _path_passes(value: str, kind: str | None) -> bool:
    """Whether click's ``Path`` check (no existence required, readable) lets
    ``value`` through: an absent path does; an existing one must be readable,
    and not a regular file where a folder is asked for."""
    if kind is None:
        return True
    try:
        st = os.stat(value)
    except OSError:
        return True
    except ValueError:      # a NUL in the name: left to click's own reading
        return False
    if kind == "folder" and stat.S_ISREG(st.st_mode):
        return False
    return os.access(value, os.R_OK)


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
