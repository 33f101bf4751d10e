"""The ``mmverify`` program's entry point, in front of :mod:`mmverify.cli`.

Design notes: docs/architecture.md, `mmverify/launch.py`.
"""
from __future__ import annotations

import os
import stat
import sys

from mmverify.clibase import Option, freeze_at_exit


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
