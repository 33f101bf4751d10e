"""Run manifests: many artifacts (entries x tasks x seeds) read, scored and
recorded row by row.

Design notes: docs/architecture.md, `mmverify/batch/manifest.py`.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Container, Mapping

from mmverify.reading.artifact import DEFAULT_MAX_BYTES, Artifact, ArtifactError, parse_bytes
from mmverify.batch.engine import (  # noqa: F401  (the engine's parts, under the names this module always had)
    RETRIED, BatchStats, ScoreTimeout, read_bounded, row_line, run_job, time_cap, time_cap_available)
from mmverify.batch.manifest_rows import (  # noqa: F401  (the row format, under the names this module always had)
    FIELDS, REQUIRED, Manifest, ManifestError, ManifestRow, parse_row, read_manifest, seed_sort_key)
from mmverify.reading.numbers import fraction_text

ROW_SCHEMA = "mmverify.board-row/1"


# ------------------------------------------------------------------- scoring

ArtifactTimeout = ScoreTimeout   # the engine's time cap exception, by its former name here


def task_fingerprint(task) -> str:
    """sha256 over the files that define a task, so that a resumed batch never
    reuses a result scored against different anchors."""
    h = hashlib.sha256()
    for name in ("task.json", "artifact.schema.json"):
        h.update(name.encode())
        try:
            with open(os.path.join(task.directory, name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"(absent)")
    return h.hexdigest()


def _meta(row: ManifestRow) -> dict[str, Any]:
    return {
        "schema_version": ROW_SCHEMA,
        "line": row.line,
        "entry": row.entry,
        "task": row.task,
        "seed": row.seed,
        "artifact": row.artifact,
        "cost_usd": fraction_text(row.cost_usd) if row.cost_usd is not None else None,
        "wall_s": fraction_text(row.wall_s) if row.wall_s is not None else None,
        "harness": row.harness,
        "model": row.model,
        "attributed": row.cell is not None,
    }


# the scoring part of a result row: reused as is when a batch resumes
SCORED_FIELDS = ("key", "sha256", "task_fingerprint", "gates_run", "status", "oeval", "oeval_exact",
                 "closeness_exact", "verified_share_exact", "error", "hard_gates_failed", "suite", "headline")


def _key(*parts: Any) -> str:
    return json.dumps(list(parts), separators=(",", ":"), ensure_ascii=True)


def engine_version() -> str:
    try:
        from importlib.metadata import version

        return version("mmverify")
    except Exception:  # not installed (source tree on sys.path)
        return "unknown"


_ENGINE = engine_version()


def row_key(row: ManifestRow, sha256: str | None, fingerprint: str | None, run_gates: bool) -> str:
    """Identity of a result: (entry, task, seed, artifact sha256) plus the task's
    fingerprint, whether gates ran and the mmverify version; error rows are keyed
    by line and text."""
    if row.duplicate_of is not None:
        return _key("duplicate", row.line, row.text_sha256)
    if row.problems:
        return _key("malformed", row.line, row.text_sha256)
    return _key("cell", row.entry, row.task, row.seed, sha256, fingerprint, run_gates, _ENGINE)


def _error_result(row: ManifestRow, code: str, message: str, *, sha256=None, fingerprint=None,
                  run_gates=True, task=None) -> dict[str, Any]:
    out = _meta(row)
    out.update({
        "key": row_key(row, sha256, fingerprint, run_gates), "sha256": sha256, "task_fingerprint": fingerprint,
        "gates_run": run_gates, "status": "error", "oeval": 0.0, "oeval_exact": "0", "closeness_exact": None,
        "verified_share_exact": None, "error": {"code": code, "message": message}, "hard_gates_failed": [],
        "suite": task.suite if task is not None else None,
        "headline": task.headline if task is not None else None,
    })
    return out


def result_from_report(row: ManifestRow, report, fingerprint: str, run_gates: bool,
                       sha256: str | None) -> dict[str, Any]:
    from mmverify.reading.numbers import report_float

    out = _meta(row)
    failed = []
    if report.gates is not None:
        failed = sorted({getattr(i, "name", None) or str(i) for i in report.gates.hard_failures})
    out.update({
        "key": row_key(row, sha256, fingerprint, run_gates),
        "sha256": sha256,
        "task_fingerprint": fingerprint,
        "gates_run": run_gates,
        "status": report.status,
        "oeval": report_float(report.oeval),
        "oeval_exact": fraction_text(report.oeval) if report.oeval is not None else None,
        "closeness_exact": fraction_text(report.closeness) if report.closeness is not None else None,
        # which part of the task's metric weight a replay verified (scored artifacts only)
        "verified_share_exact": _verified_share(report),
        "error": dict(report.error) if report.error else None,
        "hard_gates_failed": failed,
        "suite": report.task_info.get("suite"),
        "headline": report.task_info.get("headline"),
    })
    return out


def _verified_share(report) -> str | None:
    share = report.verified_share() if report.status == "scored" else None
    return fraction_text(share.share) if share is not None and share.total_weight else None


def _problem_message(row: ManifestRow) -> tuple[str, str]:
    if row.duplicate_of is not None:
        return "duplicate_row", (f"a second row for entry {row.entry!r}, task {row.task!r}, "
                                 f"seed {row.seed!r} (first on line {row.duplicate_of}); not counted")
    return "manifest_row_invalid", "; ".join(row.problems)


def score_row(row: ManifestRow, tasks: Mapping[str, Any], fingerprints: Mapping[str, str], *,
              run_gates: bool = True, timeout_s: float | None = None,
              done: Container[str] | None = None,
              max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[dict[str, Any], bool]:
    """Score one manifest row. Returns (result row, reused) where ``reused`` says
    the result's key is in ``done`` (a previous run): the result then holds the
    stored scoring part when ``done`` is a mapping, else only its key (the
    caller holds the stored row)."""
    from mmverify.pipeline.evaluate import TaskMismatch, bind_task, score_artifact

    done = done or {}
    task = tasks.get(row.task) if row.task is not None else None
    fingerprint = fingerprints.get(row.task) if row.task is not None else None
    if not row.ok:
        code, message = _problem_message(row)
        return _error_result(row, code, message, fingerprint=fingerprint, run_gates=run_gates, task=task), False
    assert task is not None
    sha256 = None
    try:
        with time_cap(timeout_s):
            artifact: Artifact | ArtifactError | None
            if row.artifact_path is None:
                artifact = ArtifactError("missing_artifact", "the manifest row names no artifact (null)")
            else:
                try:
                    raw = read_bounded(row.artifact_path, max_bytes)
                except ArtifactError as exc:
                    artifact = exc
                else:
                    sha256 = hashlib.sha256(raw).hexdigest()
                    key = row_key(row, sha256, fingerprint, run_gates)
                    if key in done:
                        return _reuse_from(row, done, key), True
                    try:
                        artifact = parse_bytes(raw, source=row.artifact_path, max_bytes=max_bytes)
                    except ArtifactError as exc:
                        artifact = exc
            if isinstance(artifact, ArtifactError):
                key = row_key(row, sha256, fingerprint, run_gates)
                if key in done:
                    return _reuse_from(row, done, key), True
            else:
                # the row binds the task: an artifact naming another one is not scored
                try:
                    bind_task(artifact, row.artifact_path, row.task, os.path.dirname(os.path.abspath(task.directory)))
                except TaskMismatch as exc:
                    out = _error_result(row, "task_mismatch", str(exc), sha256=sha256, fingerprint=fingerprint,
                                        run_gates=run_gates, task=task)
                    out["status"] = "task_mismatch"
                    return out, False
            report = score_artifact(task, artifact, run_gates=run_gates)
            return result_from_report(row, report, fingerprint, run_gates, sha256), False
    except ArtifactTimeout:
        return _error_result(row, "timeout", f"scoring took longer than the cap of {timeout_s:g} s",
                             sha256=sha256, fingerprint=fingerprint, run_gates=run_gates, task=task), False
    except RecursionError:
        return _error_result(row, "internal_error", "recursion limit reached while scoring",
                             sha256=sha256, fingerprint=fingerprint, run_gates=run_gates, task=task), False
    except Exception as exc:  # a bug in the engine: one bad row must not sink a batch
        return _error_result(row, "internal_error", f"{type(exc).__name__}: {exc}",
                             sha256=sha256, fingerprint=fingerprint, run_gates=run_gates, task=task), False


def _reuse_from(row: ManifestRow, done: Container[str], key: str) -> dict[str, Any]:
    """The reused result; from a plain set of keys, only its key."""
    return _reuse(row, done[key]) if isinstance(done, Mapping) else {"key": key}


def _reuse(row: ManifestRow, stored: Mapping[str, Any]) -> dict[str, Any]:
    out = _meta(row)
    out.update({k: stored.get(k) for k in SCORED_FIELDS})
    return out


# ---------------------------------------------------------- the batch

@dataclass(frozen=True)
class BoardJob:
    """A manifest's rows for the engine: chunks grouped by task; each worker
    loads a task once (from the folder it was loaded from here)."""
    task_dirs: Mapping[str, str]          # task id -> anchors folder
    fingerprints: Mapping[str, str]
    run_gates: bool
    timeout_s: float | None
    max_bytes: int
    # no fsync per row: after a machine crash lost rows are scored again
    fsync: ClassVar[bool] = False

    def group(self, row: ManifestRow) -> str:
        return row.task or ""

    def score(self, row: ManifestRow, done_keys: Container[str]) -> tuple[str, dict | None]:
        from mmverify.tasks import load_task

        tasks = {row.task: load_task(row.task, self.task_dirs[row.task])} if row.task in self.task_dirs else {}
        result, reused = score_row(row, tasks, self.fingerprints, run_gates=self.run_gates, timeout_s=self.timeout_s,
                                   done=done_keys, max_bytes=self.max_bytes)
        return result["key"], (None if reused else result)

    def reuse(self, row: ManifestRow, stored: dict) -> dict:
        return _reuse(row, stored)

    def lost(self, row: ManifestRow, message: str) -> tuple[str, dict]:
        result = _error_result(row, "worker_lost", message,
                               fingerprint=self.fingerprints.get(row.task) if row.task else None,
                               run_gates=self.run_gates)
        return result["key"], result

    @staticmethod
    def key_of(obj: dict) -> str | None:
        if obj.get("schema_version") == ROW_SCHEMA and isinstance(obj.get("key"), str):
            return obj["key"]
        return None


def score_manifest(manifest: Manifest, tasks: Mapping[str, Any], *, run_gates: bool = True,
                   timeout_s: float | None = None, output: str | None = None,
                   on_row: Callable[[int, dict, bool], None] | None = None,
                   max_bytes: int = DEFAULT_MAX_BYTES, executor: Any = None,
                   wait: bool = False) -> tuple[list[dict[str, Any]], BatchStats]:
    """Score every row of a manifest (one result per row, in manifest order).

    With ``output``, results already present there (same key) are reused, each
    new result is appended and flushed to disk as soon as it is known, and the
    file is finally rewritten atomically with exactly one line per manifest row
    in manifest order; the file is locked for the run (``wait``: wait for
    another run's lock instead of raising :class:`mmverify.batch.engine.OutputBusy`).
    ``executor``: where the scoring runs (:mod:`mmverify.batch.executors`)."""
    job = BoardJob({tid: os.path.dirname(os.path.abspath(t.directory)) for tid, t in tasks.items()},
                   {tid: task_fingerprint(t) for tid, t in tasks.items()}, run_gates, timeout_s, max_bytes)
    try:
        results, _, stats = run_job(job, manifest.rows, output, executor=executor, wait=wait, on_row=on_row)
    except OSError as exc:
        if getattr(exc, "filename", None) is None:   # not the output file (a lost connection)
            raise
        raise ManifestError(f"cannot read or write output file {output}: {exc.strerror or exc}") from None
    return results, stats


def load_tasks_for(manifest: Manifest, anchors_dir: str | None) -> dict[str, Any]:
    """Load (once) every task a manifest names. A task that fails to load is
    an anchor defect: :class:`mmverify.tasks.TaskLoadError` propagates."""
    from mmverify.tasks import load_task

    return {tid: load_task(tid, anchors_dir) for tid in sorted({r.task for r in manifest.rows if r.task})}
