"""Batch scoring for ``mmverify score ARTIFACT... --output FILE.jsonl``.

Design notes: docs/architecture.md, `mmverify/batch/score_files.py`.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Container

from mmverify.reading import digest
from mmverify.reading.artifact import DEFAULT_MAX_BYTES, Artifact, ArtifactError, parse_bytes, read_bounded
from mmverify.pipeline.timecap import ScoreTimeout, time_cap, time_cap_available  # noqa: F401

if TYPE_CHECKING:
    from mmverify.batch.engine import BatchStats
    from mmverify.scoring.rules import Ruleset

# the rest of the batch engine's parts, under the names this module always had,
# loaded on first use (scoring one artifact needs none of them)
_ENGINE = frozenset({"RETRIED", "BatchStats", "atomic_write", "load_done", "row_line", "run_job"})


def __getattr__(name: str) -> Any:
    if name in _ENGINE:
        from mmverify.batch import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

ROW_SCHEMA = "mmverify.score-row/1"


def anchors_fingerprint(anchors_dir: str | None = None) -> str:
    """sha256 over the anchors' index and every indexed task's ``task.json`` and
    ``artifact.schema.json``: a resumed batch never reuses a row scored against
    other anchors."""
    from mmverify.tasks import default_anchors_dir

    root = os.path.abspath(anchors_dir or default_anchors_dir())
    h = digest.sha256()
    names = ["index.json"]
    try:
        from mmverify.tasks import task_ids

        names += [os.path.join(t, f) for t in task_ids(root) for f in ("task.json", "artifact.schema.json")]
    except Exception:  # a broken index is reported when a task is loaded
        pass
    for name in names:
        h.update(name.encode() + b"\0")
        try:
            with open(os.path.join(root, name), "rb") as fh:
                h.update(digest.sha256(fh.read()).digest())
        except OSError:
            h.update(b"(absent)")
    return h.hexdigest()


# ------------------------------------------------------------------ once per process

_ROOTS: dict[str | None, str] = {}
_KNOWN: dict[str, tuple[tuple, list[str]]] = {}


def _anchors_root(anchors_dir: str | None) -> str:
    """The anchors folder a batch reads: the one given, else the default
    (``$MMVERIFY_ANCHORS`` or the bundled anchors), worked out once per value
    of the variable, not once per input."""
    if anchors_dir:
        return anchors_dir
    env = os.environ.get("MMVERIFY_ANCHORS")
    root = _ROOTS.get(env)
    if root is None:
        from mmverify.tasks import default_anchors_dir

        root = _ROOTS[env] = default_anchors_dir()
    return root


def _known_ids(root: str) -> list[str] | None:
    """The task ids of ``root``'s index, read again only when the index file
    changes (one ``stat`` per input instead of a read and a parse); None when
    there is no readable index (the caller then takes the usual path, which
    reports it)."""
    from mmverify.tasks import load_index

    file = os.path.join(root, "index.json")
    try:
        st = os.stat(file)
    except OSError:
        return None
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _KNOWN.get(root)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        known = [t["id"] for t in load_index(root)]
    except Exception:
        return None
    if len(_KNOWN) >= 64:
        _KNOWN.clear()
    _KNOWN[root] = (stamp, known)
    return known


# ------------------------------------------------------------------ one input

@dataclass(frozen=True)
class Outcome:
    input: str                    # the path as given
    key: str
    row: dict                     # the JSON line
    report: Any = None            # mmverify.pipeline.report.Report when one was made
    reused: bool = False


def row_key(path: str, sha256: str | None, read_error: str | None, task_id: str | None, run_gates: bool,
            fingerprint: str, ruleset: Ruleset = "verified", strict_schema: bool = False) -> str:
    # the schema mode is part of the key: rows scored all-or-nothing (and rows
    # of engines before schema violations were local) are not reused
    ident = [ROW_SCHEMA, os.path.abspath(path), sha256, read_error, task_id, run_gates, fingerprint,
             "strict-schema" if strict_schema else "local-schema"]
    if ruleset != "verified":
        ident.append(ruleset)
    return digest.sha256(json.dumps(ident, ensure_ascii=True).encode()).hexdigest()


def _batch_block(path: str, sha256: str | None, key: str, full: str | None = None) -> dict:
    return {"schema": ROW_SCHEMA, "input": path, "path": full or os.path.abspath(path), "input_sha256": sha256,
            "key": key}


def error_row(path: str, code: str, message: str, *, task=None, sha256: str | None = None,
              key: str = "", full: str | None = None) -> dict:
    """A row with the shape of a report for an input no report could be made for."""
    from mmverify.pipeline.report import SCHEMA_VERSION, STATUSES

    info: dict[str, Any] = {"id": None}
    if task is not None:
        from mmverify.pipeline.evaluate import task_info

        info = dict(task_info(task), id=task.id)
    return {
        "schema_version": SCHEMA_VERSION, "task": info, "artifact": {"source": path, "sha256": sha256},
        "status": "error", "status_meaning": STATUSES["error"], "oeval": 0.0, "oeval_exact": "0",
        "error": {"code": code, "message": message}, "schema_errors": [], "gates": None,
        "batch": _batch_block(path, sha256, key, full),
    }


def mismatch_row(path: str, message: str, task_id: str | None, anchors_dir: str | None, **kw: Any) -> dict:
    """The row of an artifact that names another task than the one it was
    given for (:class:`mmverify.pipeline.evaluate.TaskMismatch`): status ``task_mismatch``,
    O-EVAL 0, under the bound task when there is one."""
    from mmverify.pipeline.report import STATUSES
    from mmverify.tasks import load_task

    task = load_task(task_id, anchors_dir) if task_id is not None else None
    row = error_row(path, "task_mismatch", message, task=task, **kw)
    row.update(status="task_mismatch", status_meaning=STATUSES["task_mismatch"])
    return row


def score_one(path: str, *, task_id: str | None = None, anchors_dir: str | None = None, run_gates: bool = True,
              timeout_s: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES, fingerprint: str | None = None,
              done: Container[str] | None = None, full: str | None = None, ruleset: Ruleset = "verified",
              strict_schema: bool = False, as_row: bool = True, regular_only: bool = False) -> Outcome:
    """Score one input into one row (never raises for anything the input holds;
    an anchor defect, :class:`mmverify.tasks.TaskLoadError`, does propagate).

    ``regular_only`` reads the input only if it is a regular file (a FIFO is
    refused at once): for a caller whose read no time cap bounds.

    ``as_row=False`` is for a caller that renders the report itself (``score``
    with a table or Markdown): an outcome with a report then carries no JSON
    form of it (its row holds only the ``batch`` block), and building that
    form is not paid for. Error rows are whole either way.

    ``full`` is the input's absolute path (default: ``path`` taken from the
    current folder; a worker elsewhere is given the driver's). When the row's
    key is in ``done`` the outcome is ``reused`` and carries the stored row if
    ``done`` is a mapping, else no row (the caller holds it)."""
    from mmverify.pipeline.evaluate import TaskMismatch, bind_task, score_artifact
    from mmverify.tasks import TaskLoadError, load_task

    fingerprint = fingerprint if fingerprint is not None else anchors_fingerprint(anchors_dir)
    full = full or os.path.abspath(path)
    sha256 = read_error = None
    key = ""
    task = None
    deadline = time.monotonic() + timeout_s if timeout_s else None

    def remaining() -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise ScoreTimeout()
        return left

    try:
        # phase 1, capped: read, hash, parse, infer the task
        with time_cap(remaining()):
            artifact: Artifact | ArtifactError
            try:
                raw = read_bounded(full, max_bytes, regular_only=regular_only)
            except ArtifactError as exc:
                # name the file as the user gave it (the absolute path is for workers)
                exc = ArtifactError(exc.code, exc.message.replace(full, path)) if full != path else exc
                artifact, read_error = exc, exc.code
            else:
                sha256 = digest.sha256(raw).hexdigest()
            key = row_key(full, sha256, read_error, task_id, run_gates, fingerprint, ruleset, strict_schema)
            if done is not None and key in done:
                stored = _as_given(done[key], path) if isinstance(done, dict) else None
                return Outcome(path, key, stored, reused=True)  # type: ignore[arg-type]
            if read_error is None:
                try:
                    artifact = parse_bytes(raw, source=path, max_bytes=max_bytes)
                except ArtifactError as exc:
                    artifact = exc
                del raw
            root = _anchors_root(anchors_dir)
            try:
                tid = bind_task(artifact if isinstance(artifact, Artifact) else None, full, task_id, root,
                                known=_known_ids(root))
            except TaskMismatch as exc:
                message = str(exc).replace(full, path) if full != path else str(exc)
                return Outcome(path, key, mismatch_row(path, message, task_id, anchors_dir, sha256=sha256,
                                                       key=key, full=full))
        if tid is None and isinstance(artifact, ArtifactError):
            # the file itself is the problem (absent, unreadable, malformed):
            # say that, not "cannot tell the task"
            row = error_row(path, artifact.code, artifact.message, sha256=sha256, key=key, full=full)
            if artifact.code == "missing_artifact":
                from mmverify.pipeline.report import STATUSES

                row.update(status="missing", status_meaning=STATUSES["missing"])
            return Outcome(path, key, row)
        if tid is None:
            from mmverify.pipeline.evaluate import TaskNotInferred

            return Outcome(path, key, error_row(path, "task_not_inferred", str(TaskNotInferred(path)),
                                                sha256=sha256, key=key, full=full))
        # not capped: loading the (trusted, cached) task and compiling its gates
        # is the engine's cost, not the artifact's
        task = load_task(tid, _anchors_root(anchors_dir))
        if run_gates:
            from mmverify.gates import compile_gates

            compile_gates(task)
        from mmverify.scoring import panel as _panel  # noqa: F401  (import cost outside the cap)

        # phase 2, capped: schema, gates, scoring and the report's JSON form
        # (tens of thousands of gate instances take seconds to render too)
        with time_cap(remaining()):
            report = score_artifact(task, artifact, run_gates=run_gates, ruleset=ruleset,
                                    strict_schema=strict_schema, records=as_row)
            if isinstance(artifact, ArtifactError):
                report = replace(report, source=path)
            row = report.as_dict() if as_row else {}
        row["batch"] = _batch_block(path, sha256, key, full)
        return Outcome(path, key, row, report)
    except ScoreTimeout:
        key = key or row_key(full, sha256, read_error, task_id, run_gates, fingerprint, ruleset, strict_schema)
        return Outcome(path, key, error_row(path, "timeout", f"scoring took longer than the cap of {timeout_s:g} s",
                                            task=task or _task_by_name(task_id, full, anchors_dir),
                                            sha256=sha256, key=key, full=full))
    except TaskLoadError:
        raise
    except RecursionError:
        key = key or row_key(full, sha256, read_error, task_id, run_gates, fingerprint, ruleset, strict_schema)
        return Outcome(path, key, error_row(path, "internal_error", "recursion limit reached while scoring",
                                            task=task, sha256=sha256, key=key, full=full))
    except Exception as exc:  # a bug in the engine: one input must not sink a batch
        key = key or row_key(full, sha256, read_error, task_id, run_gates, fingerprint, ruleset, strict_schema)
        return Outcome(path, key, error_row(path, "internal_error", f"{type(exc).__name__}: {exc}"[:2000],
                                            task=task, sha256=sha256, key=key, full=full))


def _as_given(row: dict, path: str) -> dict:
    """A stored row, naming the input as this run spells it."""
    row = dict(row)
    row["batch"] = dict(row["batch"], input=path)
    if isinstance(row.get("artifact"), dict):
        row["artifact"] = dict(row["artifact"], source=path)
    return row


def _task_by_name(task_id: str | None, path: str, anchors_dir: str | None):
    """The task of an input that timed out before its task was loaded: the
    --task option, else what its file name or folder says (never its content)."""
    from mmverify.pipeline.evaluate import infer_task_id
    from mmverify.tasks import load_task

    try:
        tid = task_id or infer_task_id(None, path, anchors_dir)
        return load_task(tid, anchors_dir) if tid else None
    except Exception:
        return None


# ------------------------------------------------------------------ the batch

class _Items(Sequence):
    """The batch's items, ``(path as given, absolute path)``, made as read
    (the folder taken once, as ``os.path.abspath`` would take it for each):
    a batch holds no second copy of its paths."""

    def __init__(self, inputs: Sequence[str]):
        self._inputs = inputs
        self._cwd = os.getcwd()

    def __len__(self) -> int:
        return len(self._inputs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        p = self._inputs[i]
        return p, os.path.normpath(os.path.join(self._cwd, p)) if not os.path.isabs(p) else os.path.normpath(p)


def unique_inputs(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Inputs in order, the same absolute path once; and the repeats."""
    seen: set[str] = set()
    out, repeats = [], []
    for p in paths:
        a = os.path.abspath(p)
        if a in seen:
            repeats.append(p)
            continue
        seen.add(a)
        out.append(p)
    return out, repeats


@dataclass(frozen=True)
class ScoreJob:
    """One ``score --output`` batch for the engine: an item is ``(path as
    given, absolute path)``; chunks are grouped by ``--task``, else by the task
    the file's name or folder names (never its content, not read here)."""
    task_id: str | None
    anchors_dir: str | None
    run_gates: bool
    timeout_s: float | None
    max_bytes: int
    fingerprint: str
    ruleset: Ruleset = "verified"
    strict_schema: bool = False
    fsync: ClassVar[bool] = True      # new rows are fsynced (grouped: see mmverify.batch.engine.FSYNC_INTERVAL_S)
    unique_keys: ClassVar[bool] = True   # a key holds the input's absolute path: no two inputs share one

    def group(self, item: tuple[str, str]) -> str:
        from mmverify.pipeline.evaluate import infer_task_id

        try:
            root = _anchors_root(self.anchors_dir)
            return self.task_id or infer_task_id(None, item[1], root, known=_known_ids(root)) or ""
        except Exception:   # a broken index is reported by the worker that loads the task
            return ""

    @staticmethod
    def brief(row: dict) -> dict:
        """What the command's summary reads of a row (a process pool sends this
        back with the row's line, not the whole row)."""
        error = row.get("error")
        return {"status": row.get("status"), "oeval": row.get("oeval"),
                "error": {"code": error.get("code")} if isinstance(error, dict) else None,
                "batch": row.get("batch")}

    def score(self, item: tuple[str, str], done_keys: Container[str]) -> tuple[str, dict | None]:
        o = score_one(item[0], task_id=self.task_id, anchors_dir=self.anchors_dir, run_gates=self.run_gates,
                      timeout_s=self.timeout_s, max_bytes=self.max_bytes, fingerprint=self.fingerprint,
                      done=done_keys, full=item[1], ruleset=self.ruleset, strict_schema=self.strict_schema)
        return o.key, (None if o.reused else o.row)

    def reuse(self, item: tuple[str, str], stored: dict) -> dict:
        return _as_given(stored, item[0])

    def lost(self, item: tuple[str, str], message: str) -> tuple[str, dict]:
        path, full = item
        key = row_key(full, None, "worker_lost", self.task_id, self.run_gates, self.fingerprint, self.ruleset,
                      self.strict_schema)
        return key, error_row(path, "worker_lost", message, key=key, full=full,
                              task=_task_by_name(self.task_id, full, self.anchors_dir))

    @staticmethod
    def key_of(obj: dict) -> str | None:
        batch = obj.get("batch")
        if isinstance(batch, dict) and batch.get("schema") == ROW_SCHEMA and isinstance(batch.get("key"), str):
            return batch["key"]
        return None


def run_batch(paths: Sequence[str], output: str, *, task_id: str | None = None, anchors_dir: str | None = None,
              run_gates: bool = True, timeout_s: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
              on_outcome: Callable[[Outcome], None] | None = None, executor: Any = None,
              wait: bool = False, ruleset: Ruleset = "verified", strict_schema: bool = False,
              jobs: int = 1, keep_rows: bool = True) -> tuple[list[Outcome], BatchStats]:
    """Score every input into ``output`` (JSON Lines), resuming what is there.

    ``executor``: where the scoring runs (see :mod:`mmverify.batch.executors`; None
    is this process). ``jobs``: with no executor given, score in this many
    local processes (:class:`mmverify.batch.executors.ProcessExecutor`), or in this
    process when the batch is too small for the workers' start to pay
    (:func:`local_executor`); the rows are the same either way. ``wait``: when
    another run holds the output file's lock, wait for it instead of raising
    :class:`mmverify.batch.engine.OutputBusy`.

    ``keep_rows=False`` streams: no row is held (the run's memory does not
    grow with the number of inputs), the outcomes returned are empty, and
    ``on_outcome`` is the way to see each row (from worker processes, its
    :meth:`ScoreJob.brief`: status, O-EVAL, error code, batch block)."""
    from mmverify.batch.engine import BatchStats, run_job
    from mmverify.batch.executors import ProcessExecutor

    inputs, repeats = unique_inputs(paths)
    anchors_dir = os.path.abspath(anchors_dir) if anchors_dir else None
    job = ScoreJob(task_id, anchors_dir, run_gates, timeout_s, max_bytes, anchors_fingerprint(anchors_dir), ruleset,
                    strict_schema)
    items = _Items(inputs)
    stats = BatchStats(duplicates=repeats)
    ours = None          # a process pool this run starts is closed by it
    if executor is None and jobs > 1:
        executor = local_executor(jobs, len(items))
        ours = executor if isinstance(executor, ProcessExecutor) else None
    on_row = None
    if on_outcome is not None:
        def on_row(i: int, row: dict, reused: bool) -> None:
            on_outcome(Outcome(inputs[i], job.key_of(row) or "", row, reused=reused))
    try:
        rows, reused, stats = run_job(job, items, output, executor=executor, wait=wait, stats=stats, on_row=on_row,
                                      keep_rows=keep_rows)
    finally:
        if ours is not None:
            ours.close()
    if rows is None:
        return [], stats
    outcomes = [Outcome(p, job.key_of(r) or "", r, reused=u) for p, r, u in zip(inputs, rows, reused)]
    return outcomes, stats


# below this many inputs per worker process, one process is faster: a worker's
# start (a fork, its first task loads) and the pipe cost more than they save
MIN_ITEMS_PER_JOB = 48


def local_executor(jobs: int, items: int) -> Any:
    """``jobs`` local worker processes for a batch of ``items`` inputs, fewer
    when the batch is small (at least :data:`MIN_ITEMS_PER_JOB` inputs each),
    and this process alone (``"local"``) when one worker would do."""
    from mmverify.batch.executors import ProcessExecutor

    n = max(1, min(int(jobs), items // MIN_ITEMS_PER_JOB, os.cpu_count() or 1))
    if n <= 1:
        return "local"
    # the pipeline's modules, imported once here: forked workers start with them
    from mmverify.pipeline import evaluate, report  # noqa: F401
    from mmverify.scoring import panel  # noqa: F401

    return ProcessExecutor(n)
