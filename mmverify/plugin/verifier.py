"""Harness verifier: score one artifact and write the reward files.

Design notes: docs/architecture.md, `mmverify/plugin/verifier.py`.
"""
from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from mmverify.clibase import ANCHORS, Option, echo
from mmverify.pipeline.report import SCHEMA_VERSION, STATUSES, dumps
from mmverify.render.tables import printable

REWARD_FILE = "reward.json"
DETAILS_FILE = "reward-details.json"

EXIT_SCORED = 0
EXIT_FAILED = 1
EXIT_CANNOT_WRITE = 2
EXIT_TASK = 3
EXIT_NO_TASK = 4

_TASK_MEANING = "the task is unknown or its anchors are broken: reward 0"
_INTERNAL_MEANING = "the engine failed on this input (a bug, not a verdict): reward 0"
_NO_TASK_MEANING = "the task cannot be told from the artifact and none was given: reward 0"


class VerifyResult(NamedTuple):
    """What :func:`run_verifier` did: the reward, the details written, the exit
    code, and the two files (None when they could not be written). Immutable
    as a frozen dataclass, and a named tuple because every start of ``mmverify
    verify`` defines it: a dataclass generates its methods at that point."""

    reward: float
    details: dict
    exit_code: int
    reward_path: str | None
    details_path: str | None


def default_artifact_name(task_id: str) -> str:
    """The artifact file a harness task asks the agent for: ``<task-id>_result.json``."""
    return f"{task_id}_result.json"


def write_atomic(path: str, text: str, *, durable: bool = True) -> None:
    """Write ``text`` to ``path`` atomically (:mod:`mmverify.batch.atomic`)."""
    from mmverify.batch.atomic import replace_file

    replace_file(path, [text.encode("utf-8")], durable=durable)


def _error_details(task_id: str | None, artifact_path: str | None, code: str, message: str,
                   meaning: str | None = None) -> dict[str, Any]:
    """A details document for a run that produced no Report (same top-level keys)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "task": {"id": task_id},
        "artifact": {"source": artifact_path, "sha256": None},
        "status": "error",
        "status_meaning": meaning or STATUSES["error"],
        "oeval": 0.0,
        "oeval_exact": "0",
        "error": {"code": code, "message": message},
        "schema_errors": [],
        "gates": None,
    }


def evaluate(task_id: str | None, artifact_path: str, anchors_dir: str | None = None) -> tuple[float, dict, int]:
    """Score ``artifact_path`` on ``task_id`` (None: inferred from the
    artifact): (reward, details, exit code). Never raises."""
    try:
        from mmverify.reading.artifact import Artifact, ArtifactError, parse_file
        from mmverify.pipeline.evaluate import TaskMismatch, bind_task, score_artifact
        from mmverify.tasks import TaskLoadError, load_task, task_ids

        task = None
        if task_id is not None:
            try:
                task = load_task(task_id, anchors_dir)
            except TaskLoadError as exc:
                return (0.0, _task_error(task_id, artifact_path, exc, anchors_dir), EXIT_TASK)

        try:
            # the agent wrote this path: a link is not followed (it could point at
            # reference files a harness puts in place after the agent has finished)
            artifact = parse_file(artifact_path, follow_symlinks=False)
        except ArtifactError as exc:
            artifact = exc
        try:
            bound = bind_task(artifact if isinstance(artifact, Artifact) else None, artifact_path, task_id,
                              anchors_dir)
        except TaskMismatch as exc:
            details = _error_details(task_id, artifact_path, "task_mismatch", str(exc), STATUSES["task_mismatch"])
            details["status"] = "task_mismatch"
            if isinstance(artifact, Artifact):
                details["artifact"]["sha256"] = artifact.sha256
            return 0.0, details, EXIT_FAILED
        except TaskLoadError as exc:      # the anchors' index cannot be read
            return 0.0, _task_error(task_id or "", artifact_path, exc, anchors_dir), EXIT_TASK
        if bound is None:
            try:
                known = ", ".join(task_ids(anchors_dir)) or "none"
            except TaskLoadError:
                known = "none"
            return 0.0, _error_details(None, artifact_path, "task_not_inferred",
                                       f"cannot tell which task {artifact_path} answers: pass --task ID "
                                       f"(known: {known})", _NO_TASK_MEANING), EXIT_NO_TASK
        if task is None:
            try:
                task = load_task(bound, anchors_dir)
            except TaskLoadError as exc:
                return 0.0, _task_error(bound, artifact_path, exc, anchors_dir), EXIT_TASK
        report = score_artifact(task, artifact, records=True)
        details = report.as_dict()
        if isinstance(artifact, ArtifactError):
            details["artifact"]["source"] = artifact_path
        code = EXIT_SCORED if report.status in ("scored", "not_scored") else EXIT_FAILED
        return report.reward, details, code
    except Exception as exc:  # never crash the harness: an engine bug is reward 0 with its trace
        details = _error_details(task_id, artifact_path, "internal_error",
                                 f"{type(exc).__name__}: {exc}", _INTERNAL_MEANING)
        import traceback

        details["traceback"] = traceback.format_exc(limit=20)
        return 0.0, details, EXIT_FAILED


def _task_error(task_id: str, artifact_path: str, exc: Exception, anchors_dir: str | None) -> dict[str, Any]:
    """The details of a task that cannot be loaded: unknown, or broken anchors."""
    from mmverify.tasks import TaskLoadError, task_ids

    try:
        known = task_ids(anchors_dir)
    except TaskLoadError:
        known = None
    if known is not None and task_id not in known and not _has_folder(task_id, anchors_dir):
        return _error_details(task_id, artifact_path, "unknown_task",
                              f"unknown task {task_id!r}: not in the anchors folder "
                              f"(known: {', '.join(known) or 'none'})", _TASK_MEANING)
    return _error_details(task_id, artifact_path, "task_error", str(exc), _TASK_MEANING)


def _has_folder(task_id: str, anchors_dir: str | None) -> bool:
    from mmverify.tasks import default_anchors_dir

    base = anchors_dir or default_anchors_dir()
    return os.path.isfile(os.path.join(base, task_id, "task.json"))


def remove_stale(path: str) -> None:
    """Remove whatever stands at ``path`` (a file, a link, a folder); nothing
    when nothing does. A link is removed, never followed."""
    import shutil

    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        shutil.rmtree(path)
    except PermissionError:
        if not os.path.isdir(path) or os.path.islink(path):
            raise
        shutil.rmtree(path)     # a folder (unlink of a folder is EPERM on some systems)


def run_verifier(task_id: str | None, artifact_path: str | None, reward_dir: str,
                 anchors_dir: str | None = None) -> VerifyResult:
    """Score and write ``reward.json`` and ``reward-details.json`` into ``reward_dir``.

    What stood at those two paths is removed first. ``artifact_path``
    defaults to ``<task-id>_result.json`` in the current folder; ``task_id``
    None infers the task from the artifact (one of the two must be given).
    """
    if task_id is None and artifact_path is None:
        raise ValueError("give the task id or the artifact path")
    details_path = os.path.join(reward_dir, DETAILS_FILE)
    reward_path = os.path.join(reward_dir, REWARD_FILE)
    step = "write into"
    try:
        os.makedirs(reward_dir, exist_ok=True)
        step = "remove what stands at the reward files in"
        remove_stale(reward_path)       # a reward left by the agent never stands
        remove_stale(details_path)
    except OSError as exc:
        details = _error_details(task_id, artifact_path, "cannot_write", str(exc))
        return VerifyResult(0.0, dict(details, write_error=f"cannot {step} {reward_dir}: {exc.strerror or exc}"),
                            EXIT_CANNOT_WRITE, None, None)
    artifact_path = artifact_path or default_artifact_name(task_id)
    reward, details, code = evaluate(task_id, artifact_path, anchors_dir)
    reward = float(reward)
    if not (0.0 <= reward <= 1.0):  # the pipeline guarantees it; a reward file must too
        details = dict(details, reward_out_of_range=reward)
        reward, code = 0.0, EXIT_FAILED
    try:
        write_atomic(details_path, dumps(details), durable=False)
    except OSError as exc:
        details = dict(details, write_error=f"cannot write into {reward_dir}: {exc.strerror or exc}")
        try:   # no details, no reward: 0.0 stands in for it
            write_atomic(reward_path, json.dumps({"reward": 0.0}) + "\n", durable=False)
        except OSError:
            pass
        return VerifyResult(0.0, details, EXIT_CANNOT_WRITE, None, None)
    try:
        write_atomic(reward_path, json.dumps({"reward": reward}) + "\n", durable=False)
    except OSError as exc:
        details = dict(details, write_error=f"cannot write into {reward_dir}: {exc.strerror or exc}")
        return VerifyResult(reward, details, EXIT_CANNOT_WRITE, None, None)
    return VerifyResult(reward, details, code, reward_path, details_path)


# ``mmverify verify``'s options: the click command is built from them
# (mmverify.commands.verify), and mmverify.launch reads a plain command line
# with them without click.
VERIFY_OPTIONS: tuple[Option, ...] = (
    Option(("--task",), "task_id", "task id, bound by the harness (an artifact naming another task scores 0); "
           "without it, inferred from the artifact's file name or task_id"),
    Option(("--artifact",), "artifact_path", "the agent's artifact (default: ./<task-id>_result.json; "
           "needed without --task)", path="path"),
    Option(("--reward-dir",), "reward_dir", "folder for reward.json and reward-details.json (created if absent), "
           "e.g. /logs/verifier", required=True, path="path"),
    ANCHORS,
    Option(("--quiet", "-q"), "quiet", "print nothing on success", flag=True),
)


def verify_command(task_id: str | None, artifact_path: str | None, reward_dir: str, anchors_dir: str | None,
                   quiet: bool) -> int:
    """``mmverify verify``: run the verifier, say in one line what it did (on
    stderr when it failed; nothing on success with ``quiet``) and return the
    exit code."""
    if task_id is None and artifact_path is None:
        _say("error: give --task ID or --artifact PATH (the task is then inferred from the artifact)", err=True)
        return EXIT_CANNOT_WRITE
    result = run_verifier(task_id, artifact_path, reward_dir, anchors_dir)
    err = result.details.get("error") or {}
    if result.reward_path is None:
        _say(f"error: {result.details.get('write_error')}", err=True)
    elif not quiet or result.exit_code:
        line = f"reward {result.reward:.6f} ({result.details.get('status')})"
        if err:
            line += f": {err.get('code')}: {err.get('message')}"
        _say(line + f" -> {result.reward_path}", err=bool(result.exit_code))
    return result.exit_code


def _say(line: str, err: bool = False) -> None:
    """Write one line (:func:`mmverify.clibase.echo`); a character that is not
    printable (an escape sequence in a message quoting the artifact) is
    written as its escape (:func:`mmverify.render.tables.printable`)."""
    echo(printable(line), err=err)
