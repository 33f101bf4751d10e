"""The pipeline: parse -> schema -> replay -> gates -> scoring -> report.

Each stage is a pure function of its inputs; this module only wires them
together and turns every expected failure into a report (never a traceback).
"""
from __future__ import annotations

import os
from fractions import Fraction
from functools import lru_cache
from typing import Any

from mmverify import replay
from mmverify.errors import MmverifyError
from mmverify.gates import evaluate_gates, score_gates
from mmverify.gates.quick import hard_gates_pass
from mmverify.scoring.panel import deferred_panel, panel_oeval, score_panel
from mmverify.scoring.rules import DEFAULT_RULESET

from mmverify.pipeline import violations
from mmverify.reading.artifact import Artifact, ArtifactError, parse_file
from mmverify.pipeline.report import Report
from mmverify.tasks import TaskSpec, load_index, load_task
from mmverify.pipeline.validate import is_valid, validate_artifact


ZERO = Fraction(0)


def task_info(task: TaskSpec) -> dict[str, Any]:
    return {"suite": task.suite, "year": task.year, "problem": task.problem, "headline": task.headline,
            "title": task.title}


SHOWN_SCHEMA_ERRORS = 20


def score_artifact(task: TaskSpec, artifact: Artifact | ArtifactError | None, *,
                   run_gates: bool = True, ruleset: str = DEFAULT_RULESET, strict_schema: bool = False,
                   records: bool = False) -> Report:
    """Score one artifact (or the error met reading it) against one task, under
    a named ruleset (``verified``, the default, or ``paper``).

    Schema violations are local (:mod:`mmverify.pipeline.violations`) unless
    ``strict_schema`` or the task's ``strict_schema`` asks for all-or-nothing.
    The gate instances and panel records are made when first read, unless
    ``records`` asks for them now (a caller that renders the report at once:
    the same report, without first working out what a score reads)."""
    report = _score(task, artifact, run_gates, ruleset, strict_schema, records)
    if ruleset != report.ruleset:
        from dataclasses import replace

        report = replace(report, ruleset=ruleset)
    return report


def _score(task: TaskSpec, artifact: Artifact | ArtifactError | None, run_gates: bool, ruleset: str,
           strict_schema: bool = False, records: bool = False) -> Report:
    info = task_info(task)
    if artifact is None or (isinstance(artifact, ArtifactError) and artifact.code == "missing_artifact"):
        err = artifact.as_dict() if isinstance(artifact, ArtifactError) else {
            "code": "missing_artifact", "message": "no artifact was supplied"}
        return Report(task.id, info, None, None, "missing", ZERO, error=err)
    if isinstance(artifact, ArtifactError):
        return Report(task.id, info, None, None, "error", ZERO, error=artifact.as_dict())

    gates = None
    if run_gates:
        # gates are pure and robust to malformed data, so they run before the
        # schema verdict: an invalid artifact's report still names the gate
        replayed = replay.run_replay(task, artifact.data)   # level C: witness -> derived values
        # (records made when the report is rendered, unless asked for now)
        gates = (evaluate_gates if records else score_gates)(task, artifact.data, replayed)
    schema_errors = validate_artifact(task.artifact_schema, artifact.data, limit=None)
    schema_errors = violations.annotate(task, schema_errors, strict_schema=strict_schema)
    shown = schema_errors[:SHOWN_SCHEMA_ERRORS]
    decided = violations.verdict(task, schema_errors, gates, strict_schema=strict_schema)
    if decided is not None and decided[0] == "invalid":
        return Report(task.id, info, artifact.source, artifact.sha256, "invalid", ZERO, error=decided[1],
                      schema_errors=shown, gates=gates)

    # a value that breaks the schema is scored as absent; the gates above read it as written
    panel = (score_panel if records else deferred_panel)(task, violations.masked(artifact.data, schema_errors),
                                                          gates, ruleset)
    if decided is not None:
        return Report(task.id, info, artifact.source, artifact.sha256, decided[0], ZERO, error=decided[1],
                      schema_errors=shown, gates=gates, panel=panel)
    status = "scored" if panel.oeval is not None else "not_scored"
    return Report(task.id, info, artifact.source, artifact.sha256, status, panel.oeval, schema_errors=shown,
                  gates=gates, panel=panel, findings=_oracle_findings(task, artifact, gates))


_FINDINGS: dict[int, tuple[TaskSpec, str, dict[str, str] | None]] = {}


def _oracle_findings(task: TaskSpec, artifact: Artifact, gates) -> dict[str, str] | None:
    """When the artifact is the task's own oracle, its failing (soft) gates are
    the documented findings of ``mmverify audit``: say so in the report. The
    oracle's bytes fix its gate instances, so they are worked out once per
    task (keyed on the task object and the bytes' digest)."""
    if gates is None or artifact.sha256 != _file_sha256(task.oracle_path):
        return None
    hit = _FINDINGS.get(id(task))
    if hit is None or hit[0] is not task or hit[1] != artifact.sha256:
        found = None
        if gates.any_failure():
            from mmverify.gates.audit import oracle_findings

            found = oracle_findings(task, gates) or None
        if len(_FINDINGS) >= 256:        # (a process loading more tasks starts over)
            _FINDINGS.clear()
        hit = _FINDINGS[id(task)] = (task, artifact.sha256, found)
    return dict(hit[2]) if hit[2] is not None else None


@lru_cache(maxsize=64)
def _file_sha256(path: str) -> str | None:
    from mmverify.reading.digest import sha256

    try:
        with open(path, "rb") as fh:
            return sha256(fh.read()).hexdigest()
    except OSError:
        return None


def verified_reward_of(task: TaskSpec, artifact: Artifact | ArtifactError | None, ruleset: str = DEFAULT_RULESET,
                       strict_schema: bool = False) -> float:
    """The verified credit of an artifact (:mod:`mmverify.scoring.verified`):
    O-EVAL counting only the metrics a replay verified, 0.0 for an artifact
    that is not scored (missing, unreadable, invalid, infeasible). A reward
    that pays for claims a replay confirmed and for nothing a paper's numbers
    alone decide."""
    if artifact is None or isinstance(artifact, ArtifactError):
        return 0.0
    report = score_artifact(task, artifact, ruleset=ruleset, strict_schema=strict_schema, records=True)
    share = report.verified_share() if report.status == "scored" else None
    return float(share.verified_credit) if share is not None and share.verified_credit is not None else 0.0


def reward_of(task: TaskSpec, artifact: Artifact | ArtifactError | None, ruleset: str = DEFAULT_RULESET,
              strict_schema: bool = False) -> float:
    """``score_artifact(task, artifact, ruleset=ruleset).reward`` without the
    report: the same stages and verdicts (replay, gates, schema, panel; 0.0 for
    a missing, unreadable, invalid or infeasible artifact, or one no paper
    votes on), but only what decides the number: the hard gates (checked all
    at once when they all pass, :func:`mmverify.gates.quick.hard_gates_pass`,
    else instance by instance up to the first failure; soft gates never change
    a score), the schema's verdict (its
    errors only when some are local and must be masked) and the panel's O-EVAL
    without its records (:func:`mmverify.scoring.panel.panel_oeval`, the same
    code as the report's panel). The verdict-only path of ``mmverify.reward``
    and ``reward_batch``; keep it in step with :func:`_score`."""
    if artifact is None or isinstance(artifact, ArtifactError):
        return 0.0
    replayed = replay.run_replay(task, artifact.data)
    # the common case (every hard gate passes) without one verdict per instance
    gates = hard_gates_pass(task, replay.gate_view(artifact.data, replayed), replayed) or \
        evaluate_gates(task, artifact.data, replayed, hard_only=True)
    if gates.hard_failures:
        return 0.0
    data = artifact.data
    if not is_valid(task.artifact_schema, data):
        # as in _score: violations are local unless the task or the schema mode says otherwise
        errors = violations.annotate(task, validate_artifact(task.artifact_schema, data, limit=None),
                                     strict_schema=strict_schema)
        if violations.verdict(task, errors, gates, strict_schema=strict_schema) is not None:
            return 0.0
        data = violations.masked(data, errors)
    oeval = panel_oeval(task, data, gates, ruleset)
    return float(oeval) if oeval is not None else 0.0


def _named_by_file(filename: str | None, known: list[str]) -> str | None:
    """The task id a file name starts with (``<task-id>_result.json``), the
    longest when several do."""
    if not filename:
        return None
    base = os.path.basename(filename)
    hits = [tid for tid in known if base.startswith(tid)]
    return max(hits, key=len) if hits else None


def _field_task_id(artifact: Artifact | None) -> str | None:
    data = artifact.data if artifact is not None else None
    value = data.get("task_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def infer_task_id(artifact: Artifact | None, filename: str | None, anchors_dir: str | None = None,
                  known: list[str] | None = None) -> str | None:
    """The task an artifact belongs to when nothing binds it: its ``task_id``
    field, else a task id that starts its file name (``<task-id>_result.json``),
    else the name of the folder holding it (``anchors/<task-id>/oracle.json``).
    None when it cannot be told: a contest ``problem_id`` such as ``2024-A``
    names a CUMCM and an MCM problem alike, so it is not used. See
    :func:`bind_task` for the task a harness binds, and for a ``task_id`` that
    disagrees with the file name. ``known``: the task ids of the anchors'
    index, when the caller has read it already (a batch reads it once)."""
    if known is None:
        known = [t["id"] for t in load_index(anchors_dir)]
    field = _field_task_id(artifact)
    if field is not None and field in known:
        return field
    named = _named_by_file(filename, known)
    if named is not None:
        return named
    if filename:
        parent = os.path.basename(os.path.dirname(os.path.abspath(filename)))
        if parent in known:
            return parent
    return None


def bind_task(artifact: Artifact | None, filename: str | None, bound: str | None,
              anchors_dir: str | None = None, known: list[str] | None = None) -> str | None:
    """The task an artifact is scored on.

    The harness binds the task: ``bound`` is ``--task``, a board manifest
    row's task or Harbor's task, and decides it. An artifact whose ``task_id``
    field says another task, or whose file name starts with another task id,
    raises :class:`TaskMismatch` (an artifact never chooses its own task).
    With nothing bound (``bound`` None) the task is inferred
    (:func:`infer_task_id`), except that a ``task_id`` naming one task in a
    file named for another raises :class:`TaskMismatch` too: neither is
    taken over the other. None when the task cannot be told. ``known``: as
    in :func:`infer_task_id`."""
    if known is None:
        known = [t["id"] for t in load_index(anchors_dir)]
    field = _field_task_id(artifact)
    named = _named_by_file(filename, known)
    if bound is not None:
        if field is not None and field != bound:
            raise TaskMismatch(filename, bound, field, "task_id field")
        if named is not None and named != bound:
            raise TaskMismatch(filename, bound, named, "file name")
        return bound
    if field is not None and field in known and named is not None and named != field:
        raise TaskMismatch(filename, None, field, "task_id field", named)
    return infer_task_id(artifact, filename, anchors_dir, known)


def score_path(path: str, task_id: str | None = None, anchors_dir: str | None = None,
               *, run_gates: bool = True, max_bytes: int | None = None,
               ruleset: str = DEFAULT_RULESET, strict_schema: bool = False) -> Report:
    """Read, bind the task (``task_id``, else inferred: :func:`bind_task`) and
    score one artifact file. Raises :class:`TaskMismatch` when the artifact
    disagrees with the task, :class:`TaskNotInferred` when none can be told."""
    kwargs = {"max_bytes": max_bytes} if max_bytes else {}
    try:
        artifact: Artifact | ArtifactError = parse_file(path, **kwargs)
    except ArtifactError as exc:
        artifact = exc
    task_id = bind_task(artifact if isinstance(artifact, Artifact) else None, path, task_id, anchors_dir)
    if task_id is None:
        raise TaskNotInferred(path)
    task = load_task(task_id, anchors_dir)
    report = score_artifact(task, artifact, run_gates=run_gates, ruleset=ruleset, strict_schema=strict_schema)
    if isinstance(artifact, ArtifactError):
        # keep where the bad input came from
        from dataclasses import replace

        report = replace(report, source=path)
    return report


class TaskNotInferred(MmverifyError, ValueError):
    """The task of an artifact cannot be told from its ``task_id``, file name or folder."""

    def __init__(self, path: str):
        super().__init__(f"cannot tell which task {path} belongs to: pass --task ID "
                         "(or name the file <task-id>_result.json, or set task_id in the artifact)")
        self.path = path


class TaskMismatch(MmverifyError, ValueError):
    """The artifact disagrees with the task it is scored on: its ``task_id``
    field or its file name names another task than the one the harness bound
    (``--task``, a manifest row, Harbor's task), or, with nothing bound, its
    ``task_id`` and its file name name two tasks. Status ``task_mismatch``."""

    code = "task_mismatch"

    def __init__(self, path: str | None, bound: str | None, other: str, where: str, named: str | None = None):
        if bound is not None:
            message = (f"the task is {bound!r} but the artifact's {where} says {other!r}: an artifact "
                       "is scored on the task it was given for, never on one it names")
        else:
            message = (f"the artifact's {where} says {other!r} but its file name says {named!r}: "
                       "pass --task ID to say which task it answers, and fix the other")
        super().__init__(message)
        self.path, self.bound, self.other = path, bound, other
