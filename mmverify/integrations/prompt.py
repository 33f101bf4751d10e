"""The task as a prompt: the statement (``problem.md``) and the artifact schema.

Only public material goes into a prompt: the statement and the artifact
schema. Nothing from the panel, the metrics' bands or the oracle is read.
"""
from __future__ import annotations

import os
from typing import Any

STATEMENT_FILE = "problem.md"


def statement(task: Any) -> str:
    """The task's statement (``problem.md`` of its anchor folder)."""
    path = os.path.join(task.directory, STATEMENT_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except FileNotFoundError:
        from mmverify.tasks import TaskLoadError

        raise TaskLoadError(path, "(file)", "the task has no statement file, so no prompt can be built") from None


def schema_text(task: Any) -> str:
    """The artifact schema as indented JSON, in the schema file's key order.
    The task loader keeps every number of the schema exact (a
    :class:`decimal.Decimal`, e.g. ``"maximum": 1.366``); each is written from
    its own text."""
    from mmverify.plugin.exactjson import dumps_exact

    return dumps_exact(task.artifact_schema, indent=2, sort_keys=False).rstrip("\n")


def _body(task: Any) -> str:
    return (f"# {task.title}\n\n"
            f"Task id: `{task.id}` ({task.suite} {task.year} problem {task.problem}).\n\n"
            "## Problem statement\n\n"
            f"{statement(task)}\n\n"
            "## Answer format\n\n"
            "Your answer is one JSON object (the *artifact*) that validates against this "
            "JSON Schema. Give numbers as JSON numbers (not strings), in the units the schema "
            "states. Fields you leave out score 0; values that break the statement's "
            "constraints make the whole answer score 0.\n\n"
            f"```json\n{schema_text(task)}\n```\n")


def chat_prompt(task: Any) -> str:
    """A prompt for a model that answers in text: the artifact comes last, in a
    fenced ``json`` block (see :mod:`mmverify.integrations.extract`)."""
    return (_body(task) + "\nWork the problem, then end your reply with the artifact in one "
            "fenced block: ```json ... ```. If you give several JSON blocks, the last one is scored.\n")


def file_prompt(task: Any, output_path: str) -> str:
    """A prompt for an agent that writes files: the artifact goes to ``output_path``."""
    return (_body(task) + f"\nWrite the artifact, as UTF-8 JSON, to `{output_path}`. "
            "Only that file is scored.\n")
