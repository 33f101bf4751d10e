"""Batch scoring for ``mmverify score ARTIFACT... --output FILE.jsonl``.

Promises
--------
* **One row per input.** Every input path given yields exactly one JSON line:
  the full score report (as ``mmverify score --json`` prints it) plus a
  ``batch`` block, or, when no report can be made, an error row of the same
  shape (``status: "error"``, O-EVAL 0) with ``error.code`` one of
  ``task_not_inferred``, ``timeout``, ``internal_error``. An input is never
  dropped silently; the same path given twice is one input (and said so).
* **Durable as it goes.** Each row is appended as one line and flushed and
  fsynced before the next input is read, so a crash loses at most the input
  being scored. When the batch ends the file is rewritten atomically
  (temporary file, fsync, rename) to hold exactly one line per input, in the
  order given: an interrupted and resumed batch ends byte-identical to an
  uninterrupted one.
* **Resumable.** An existing output file is resumed: rows are keyed by the
  input's absolute path, the sha256 of its bytes, the task option, whether
  gates ran and a fingerprint of the anchors; an input whose key is already
  there is not scored again. A torn last line (a crash mid-write) or any
  unreadable line is detected, dropped and redone. Rows that timed out or hit
  an internal error say nothing about the artifact and are retried.
* **Bounded.** The file is read at most ``max_bytes + 1`` bytes (the size is
  checked first, so a 100 MB file is rejected without being read), the parser
  caps depth and value count, and ``timeout_s`` caps the wall time of one
  artifact (POSIX ``setitimer`` on the main thread; elsewhere no cap, and
  :func:`time_cap_available` says so). A cap interrupts Python code between
  bytecodes: one long C call (a regular expression, ``json.loads``) finishes
  first, and is itself bounded by the size caps.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Sequence

from .artifact import DEFAULT_MAX_BYTES, Artifact, ArtifactError, parse_bytes

ROW_SCHEMA = "mmverify.score-row/1"
# error codes that say nothing about the artifact itself: scored again on resume
RETRIED = frozenset({"timeout", "internal_error"})


# ------------------------------------------------------------------ time cap

class ScoreTimeout(BaseException):
    """Raised by the time cap. A BaseException, so that no ``except Exception``
    in the scoring code can swallow it."""


def time_cap_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


# After the deadline the alarm repeats at this interval until the block is
# left: an exception raised where Python cannot propagate it (a garbage
# collector callback, a ``__del__``, a weakref callback) is printed and
# dropped, and a single alarm lost there would let the block run uncapped.
REPEAT_S = 0.1


@contextmanager
def time_cap(seconds: float | None, exc: type[BaseException] = ScoreTimeout) -> Iterator[None]:
    """Raise ``exc`` (:class:`ScoreTimeout`) in the block after ``seconds`` of
    wall time, and again every :data:`REPEAT_S` until the block is left (POSIX,
    main thread; a no-op elsewhere or when ``seconds`` is None).

    Caps nest: inside an outer cap that ends sooner, an inner one sets no timer
    (the outer fires first); otherwise the outer timer and handler are restored,
    less the time spent, when the block is left."""
    if not seconds or not time_cap_available():
        yield
        return
    outer_left, outer_repeat = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise exc()

    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            left = max(outer_left - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, outer_repeat)


# ------------------------------------------------------------------ reading

def read_bounded(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """An artifact's bytes, never more than ``max_bytes + 1`` read; the error
    codes are those of :func:`mmverify.artifact.parse_file`."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ArtifactError("missing_artifact", f"artifact file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise ArtifactError("unreadable", f"cannot stat artifact {path}: {getattr(exc, 'strerror', None) or exc}") \
            from None
    if size > max_bytes:
        raise ArtifactError("too_large", f"artifact is {size} bytes, above the cap of {max_bytes}")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)   # a device or a growing file: still bounded
    except IsADirectoryError:
        raise ArtifactError("unreadable", f"artifact path is a directory: {path}") from None
    except OSError as exc:
        raise ArtifactError("unreadable", f"cannot read artifact {path}: {exc.strerror}") from None
    if len(raw) > max_bytes:
        raise ArtifactError("too_large", f"artifact is more than {max_bytes} bytes, above the cap")
    return raw


def anchors_fingerprint(anchors_dir: str | None = None) -> str:
    """sha256 over the anchors' index and every indexed task's ``task.json`` and
    ``artifact.schema.json``: a resumed batch never reuses a row scored against
    other anchors."""
    from .tasks import default_anchors_dir

    root = os.path.abspath(anchors_dir or default_anchors_dir())
    h = hashlib.sha256()
    names = ["index.json"]
    try:
        from .tasks import task_ids

        names += [os.path.join(t, f) for t in task_ids(root) for f in ("task.json", "artifact.schema.json")]
    except Exception:  # a broken index is reported when a task is loaded
        pass
    for name in names:
        h.update(name.encode() + b"\0")
        try:
            with open(os.path.join(root, name), "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
        except OSError:
            h.update(b"(absent)")
    return h.hexdigest()


# ------------------------------------------------------------------ one input

@dataclass(frozen=True)
class Outcome:
    input: str                    # the path as given
    key: str
    row: dict                     # the JSON line
    report: Any = None            # mmverify.report.Report when one was made
    reused: bool = False


def row_key(path: str, sha256: str | None, read_error: str | None, task_id: str | None, run_gates: bool,
            fingerprint: str, ruleset: str = "verified") -> str:
    ident = [ROW_SCHEMA, os.path.abspath(path), sha256, read_error, task_id, run_gates, fingerprint]
    if ruleset != "verified":
        ident.append(ruleset)
    return hashlib.sha256(json.dumps(ident, ensure_ascii=True).encode()).hexdigest()


def _batch_block(path: str, sha256: str | None, key: str) -> dict:
    return {"schema": ROW_SCHEMA, "input": path, "path": os.path.abspath(path), "input_sha256": sha256,
            "key": key}


def error_row(path: str, code: str, message: str, *, task=None, sha256: str | None = None,
              key: str = "") -> dict:
    """A row with the shape of a report for an input no report could be made for."""
    from .report import SCHEMA_VERSION, STATUSES

    info: dict[str, Any] = {"id": None}
    if task is not None:
        from .evaluate import task_info

        info = dict(task_info(task), id=task.id)
    return {
        "schema_version": SCHEMA_VERSION, "task": info, "artifact": {"source": path, "sha256": sha256},
        "status": "error", "status_meaning": STATUSES["error"], "oeval": 0.0, "oeval_exact": "0",
        "error": {"code": code, "message": message}, "schema_errors": [], "gates": None,
        "batch": _batch_block(path, sha256, key),
    }


def score_one(path: str, *, task_id: str | None = None, anchors_dir: str | None = None, run_gates: bool = True,
              timeout_s: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES, fingerprint: str | None = None,
              done: dict[str, dict] | None = None, ruleset: str = "verified") -> Outcome:
    """Score one input into one row (never raises for anything the input holds;
    an anchor defect, :class:`mmverify.tasks.TaskLoadError`, does propagate)."""
    from .evaluate import infer_task_id, score_artifact
    from .tasks import TaskLoadError, load_task

    fingerprint = fingerprint if fingerprint is not None else anchors_fingerprint(anchors_dir)
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
                raw = read_bounded(path, max_bytes)
            except ArtifactError as exc:
                artifact, read_error = exc, exc.code
            else:
                sha256 = hashlib.sha256(raw).hexdigest()
            key = row_key(path, sha256, read_error, task_id, run_gates, fingerprint, ruleset)
            if done is not None and key in done:
                return Outcome(path, key, _as_given(done[key], path), reused=True)
            if read_error is None:
                try:
                    artifact = parse_bytes(raw, source=path, max_bytes=max_bytes)
                except ArtifactError as exc:
                    artifact = exc
                del raw
            tid = task_id or infer_task_id(artifact if isinstance(artifact, Artifact) else None, path, anchors_dir)
        if tid is None:
            from .evaluate import TaskNotInferred

            return Outcome(path, key, error_row(path, "task_not_inferred", str(TaskNotInferred(path)),
                                                sha256=sha256, key=key))
        # not capped: loading the (trusted, cached) task and compiling its gates
        # is the engine's cost, not the artifact's
        task = load_task(tid, anchors_dir)
        if run_gates:
            from mmverify.gates import compile_gates

            compile_gates(task)
        from mmverify.scoring import panel as _panel  # noqa: F401  (import cost outside the cap)

        # phase 2, capped: schema, gates, scoring and the report's JSON form
        # (tens of thousands of gate instances take seconds to render too)
        with time_cap(remaining()):
            report = score_artifact(task, artifact, run_gates=run_gates, ruleset=ruleset)
            if isinstance(artifact, ArtifactError):
                report = replace(report, source=path)
            row = report.as_dict()
        row["batch"] = _batch_block(path, sha256, key)
        return Outcome(path, key, row, report)
    except ScoreTimeout:
        key = key or row_key(path, sha256, read_error, task_id, run_gates, fingerprint, ruleset)
        return Outcome(path, key, error_row(path, "timeout", f"scoring took longer than the cap of {timeout_s:g} s",
                                            task=task or _task_by_name(task_id, path, anchors_dir),
                                            sha256=sha256, key=key))
    except TaskLoadError:
        raise
    except RecursionError:
        key = key or row_key(path, sha256, read_error, task_id, run_gates, fingerprint, ruleset)
        return Outcome(path, key, error_row(path, "internal_error", "recursion limit reached while scoring",
                                            task=task, sha256=sha256, key=key))
    except Exception as exc:  # a bug in the engine: one input must not sink a batch
        key = key or row_key(path, sha256, read_error, task_id, run_gates, fingerprint, ruleset)
        return Outcome(path, key, error_row(path, "internal_error", f"{type(exc).__name__}: {exc}"[:2000],
                                            task=task, sha256=sha256, key=key))


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
    from .evaluate import infer_task_id
    from .tasks import load_task

    try:
        tid = task_id or infer_task_id(None, path, anchors_dir)
        return load_task(tid, anchors_dir) if tid else None
    except Exception:
        return None


# ------------------------------------------------------------------ the file

def row_line(row: dict) -> bytes:
    """One deterministic JSON line (UTF-8, no newline). A string that cannot be
    UTF-8 (a path of undecodable bytes) is written as a JSON escape instead."""
    try:
        return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False).encode("ascii")


def load_done(path: str) -> tuple[dict[str, dict], int]:
    """Rows already in an output file, by key, and the number of lines dropped
    (a torn last line without its newline, unreadable lines, foreign rows).
    Rows that timed out or hit an internal error are left out: retried."""
    done: dict[str, dict] = {}
    dropped = 0
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return done, 0
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    else:
        lines.pop()        # no newline after the last line: torn by a crash
        dropped += 1
    for line in lines:
        try:
            obj = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            dropped += 1
            continue
        batch = obj.get("batch") if isinstance(obj, dict) else None
        if not isinstance(batch, dict) or batch.get("schema") != ROW_SCHEMA or not isinstance(batch.get("key"), str):
            dropped += 1
            continue
        if ((obj.get("error") or {}).get("code")) in RETRIED:
            continue
        done.setdefault(batch["key"], obj)
    return done, dropped


def atomic_write(path: str, lines: Sequence[bytes]) -> None:
    """Replace ``path`` by these lines: temporary file in the same folder,
    fsync, rename, fsync of the folder."""
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # only when a batch file is rewritten (keeps the CLI's start cheap)

    fd, tmp = tempfile.mkstemp(prefix=".mmverify-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            for line in lines:
                fh.write(line + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass
class BatchStats:
    inputs: int = 0
    scored: int = 0              # computed in this run
    reused: int = 0              # taken from the output file of an earlier run
    dropped_lines: int = 0       # torn or unreadable lines dropped from the output file
    stale_rows: int = 0          # earlier rows not kept: other inputs, or an input's older bytes
    duplicates: list[str] = field(default_factory=list)   # inputs given more than once


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


def run_batch(paths: Sequence[str], output: str, *, task_id: str | None = None, anchors_dir: str | None = None,
              run_gates: bool = True, timeout_s: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
              on_outcome: Callable[[Outcome], None] | None = None,
              ruleset: str = "verified") -> tuple[list[Outcome], BatchStats]:
    """Score every input into ``output`` (JSON Lines), resuming what is there."""
    inputs, repeats = unique_inputs(paths)
    stats = BatchStats(inputs=len(inputs), duplicates=repeats)
    fingerprint = anchors_fingerprint(anchors_dir)
    done, stats.dropped_lines = load_done(output)
    if os.path.exists(output) or done:
        # drop torn and retried lines now, so that appending starts on a clean line
        atomic_write(output, [row_line(r) for r in done.values()])
    outcomes: list[Outcome] = []
    with open(output, "ab") as fh:
        for path in inputs:
            outcome = score_one(path, task_id=task_id, anchors_dir=anchors_dir, run_gates=run_gates,
                                timeout_s=timeout_s, max_bytes=max_bytes, fingerprint=fingerprint, done=done,
                                ruleset=ruleset)
            if outcome.reused:
                stats.reused += 1
            else:
                stats.scored += 1
                fh.write(row_line(outcome.row) + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
                done.setdefault(outcome.key, outcome.row)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    keys = {o.key for o in outcomes}
    stats.stale_rows = sum(1 for k in done if k not in keys)
    atomic_write(output, [row_line(o.row) for o in outcomes])
    return outcomes, stats
