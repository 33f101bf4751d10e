"""Command line. Sub-commands are imported lazily so that start-up stays cheap
(sympy and numpy are loaded only by the commands that need them). The
program's entry point is :mod:`mmverify.launch`, which runs the plain command
lines of ``verify`` and ``score`` without loading click and hands every other
one to :func:`main`.

Exit codes (stable, documented in the README):
  0  success
  1  a verdict: the artifact failed (hard gate, invalid, unreadable, missing),
     a score is under --fail-under, or an audit found an unaudited problem
  2  usage error (bad option, unknown file)
  3  task or anchor definition error
  4  cannot tell which task an artifact belongs to
  5  no Lean toolchain found (Lean commands only)
"""
from __future__ import annotations

import importlib
import importlib.util

import click

from mmverify.clibase import (EXIT_NO_LEAN, EXIT_NO_TASK, EXIT_OK, EXIT_TASK, EXIT_USAGE,  # noqa: F401
                              EXIT_VERDICT, freeze_at_exit)

# command name -> (module, attribute). A command whose module is absent from
# this installation is simply not offered.
COMMANDS = {
    "score": ("mmverify.commands.score", "score"),
    "tasks": ("mmverify.commands.tasks", "tasks"),
    "gate": ("mmverify.commands.gate", "gate"),
    "audit": ("mmverify.commands.audit", "audit"),
    "lean": ("mmverify.commands.lean", "lean"),
    "board": ("mmverify.commands.board", "board"),
    "verify": ("mmverify.commands.verify", "verify"),
    "adapt": ("mmverify.commands.adapt", "adapt"),
    "attack": ("mmverify.commands.attack", "attack"),
    "export": ("mmverify.commands.export", "export"),
    "new-task": ("mmverify.commands.new_task", "new_task"),
    "schema-from": ("mmverify.commands.schema_from", "schema_from"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(n for n, (mod, _) in COMMANDS.items() if importlib.util.find_spec(mod) is not None)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        mod, attr = COMMANDS[name]
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:     # a module it imports is missing: a real error
                raise
            return None
        return getattr(module, attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mmverify")
def main() -> None:
    """mmverify: verification-centric scoring of mathematical-modelling answers."""
    freeze_at_exit()


if __name__ == "__main__":  # pragma: no cover
    main()
