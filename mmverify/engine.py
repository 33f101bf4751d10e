"""The batch engine shared by ``score --output``, ``board`` and ``reward_batch``.

A batch is a list of *items* (artifact paths, manifest rows, reward pairs) and a
*job*: a small picklable object that scores one item into one row. The engine
owns everything around that:

* **the time cap** (:func:`time_cap`, from :mod:`mmverify.timecap`): per artifact, repeating until the block is
  left, on the main thread by ``SIGALRM`` and on any other thread (a Dask
  worker's task threads) by an asynchronous exception;
* **the bounded reader** (:func:`read_bounded`, from :mod:`mmverify.artifact`);
* **the output file**: rows already there are loaded (:func:`load_done`), new
  rows are appended as they come back, and the file is finally rewritten
  atomically (:func:`atomic_write`) with one line per item in input order;
* **the lock** on the output file (:class:`OutputLock`): a second run on the
  same file refuses, or waits;
* **chunks and executors**: items go out in chunks grouped by task to an
  executor (:mod:`mmverify.executors`: in this process by default, or a Ray or
  Dask cluster). A chunk whose worker died is sent again, and after
  :data:`CHUNK_RETRIES` more failures each of its items gets an error row
  (code ``worker_lost``, retried on resume): no item is ever dropped.

A job provides ``group(item)`` (the task an item belongs to, for chunking),
``score(item, done_keys)`` returning ``(key, row)`` with ``row`` None when the
key is in ``done_keys`` (the driver then takes the stored row),
``reuse(item, stored)``, ``lost(item, message)`` (the error row of an item
whose worker was lost), ``key_of(stored_row)`` (the key of a row read back from
the file, None for a foreign line) and ``fsync`` (fsync per appended chunk).
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Container, Iterable, Iterator, Sequence

from .artifact import read_bounded  # noqa: F401  (the bounded reader, under its old name here)
# the time cap lives in its own module (a replay under a cap needs no batch engine)
from .timecap import REPEAT_S, ScoreTimeout, time_cap, time_cap_available  # noqa: F401

# error codes that say nothing about the artifact itself: scored again on resume
RETRIED = frozenset({"timeout", "internal_error", "worker_lost"})
# how many more times a chunk is sent after its worker failed
CHUNK_RETRIES = 2


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


def load_done(path: str, key_of: Callable[[Any], str | None]) -> tuple[dict[str, dict], int]:
    """Rows already in an output file, by key, and the number of lines dropped
    (a torn last line without its newline, unreadable lines, foreign rows:
    those ``key_of`` gives no key for). Rows whose error code is in
    :data:`RETRIED` are left out: scored again. Raises OSError when the file
    exists but cannot be read."""
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
        key = key_of(obj) if isinstance(obj, dict) else None
        if not isinstance(key, str):
            dropped += 1
            continue
        if ((obj.get("error") or {}).get("code")) in RETRIED:
            continue
        done.setdefault(key, obj)
    return done, dropped


def atomic_write(path: str, lines: Iterable[bytes]) -> None:
    """Replace ``path`` by these lines, atomically (:mod:`mmverify.atomic`)."""
    from .atomic import replace_file

    replace_file(path, (line + b"\n" for line in lines))


class OutputBusy(RuntimeError):
    """Another run holds the lock on this output file."""


class OutputLock:
    """An exclusive ``flock`` on ``OUTPUT.lock`` for the whole run. The lock
    file is left in place (removing it would let two runs lock two different
    files); the lock itself goes with the process, also when it is killed."""

    def __init__(self, output: str, wait: bool = False):
        self.path = output + ".lock"
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> "OutputLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise OutputBusy(f"another run is writing to {self.path[:-5]} (process {holder or 'unknown'} holds "
                             f"{self.path}); wait for it to finish, or pass --wait to queue behind it") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@dataclass
class BatchStats:
    inputs: int = 0
    scored: int = 0              # computed in this run
    reused: int = 0              # taken from the output file of an earlier run
    dropped_lines: int = 0       # torn or unreadable lines dropped from the output file
    stale_rows: int = 0          # earlier rows not kept: other inputs, or an input's older bytes
    duplicates: list[str] = field(default_factory=list)   # inputs given more than once
    seconds: float = 0.0
    chunks: int = 0              # chunks sent out
    chunk_failures: int = 0      # chunks whose worker failed (each sent again)
    lost: int = 0                # items given a worker_lost row after every retry failed


# ------------------------------------------------------------------ chunks

def run_chunk(job: Any, done_keys: Container[str], items: Sequence[tuple[int, Any]]) -> list[tuple[int, str, Any]]:
    """Worker side: score one chunk; ``(index, key, row or None if reused)``."""
    return [(i, *job.score(item, done_keys)) for i, item in items]


def chunks_by_group(items: Sequence[Any], group: Callable[[Any], Any], pieces: int,
                    max_chunk: int | None = None) -> list[list[tuple[int, Any]]]:
    """``(index, item)`` chunks that each hold items of one group (task), in
    order of first appearance: each group split into at most ``pieces``
    chunks of at most ``max_chunk`` items."""
    groups: dict[Any, list[tuple[int, Any]]] = {}
    for i, item in enumerate(items):
        groups.setdefault(group(item), []).append((i, item))
    out = []
    for members in groups.values():
        size = max(1, -(-len(members) // max(1, pieces)))
        size = min(size, max_chunk) if max_chunk else size
        out += [members[k:k + size] for k in range(0, len(members), size)]
    return out


def plan_chunks(items: Sequence[Any], group: Callable[[Any], Any], workers: int) -> list[list[tuple[int, Any]]]:
    """The chunks of a file-backed batch: with one worker every item alone, in
    input order (rows are written one by one, as before any cluster); with
    more, chunks grouped by task, about four per worker, at most 64 items."""
    if workers <= 1:
        return [[(i, item)] for i, item in enumerate(items)]
    return chunks_by_group(items, group, workers * 4, max_chunk=64)


def map_chunks(executor: Any, fn: Callable, shared: tuple, chunks: Sequence[Any], *,
               is_fatal: Callable[[BaseException], bool] = lambda exc: False,
               stats: BatchStats | None = None) -> Iterator[tuple[Any, Any]]:
    """``(chunk, fn(*shared, chunk))`` for every chunk, as they finish. A chunk
    that raised (its worker died, the connection broke) is sent again up to
    :data:`CHUNK_RETRIES` times, then yielded as ``(chunk, exception)``; an
    exception ``is_fatal`` says is the caller's error is raised at once."""
    handles = executor.share(shared)
    pending = list(chunks)
    attempt = 0
    while pending:
        failed = []
        for chunk, ok, value in executor.map_unordered(fn, handles, pending):
            if ok:
                yield chunk, value
                continue
            if is_fatal(value):
                raise value
            if stats is not None:
                stats.chunk_failures += 1
            if attempt >= CHUNK_RETRIES:
                yield chunk, value
            else:
                failed.append(chunk)
        pending, attempt = failed, attempt + 1


def is_task_error(exc: BaseException) -> bool:
    """An anchor defect: the caller's error, raised at once, never retried."""
    from .tasks import TaskLoadError

    return isinstance(exc, TaskLoadError)


def run_job(job: Any, items: Sequence[Any], output: str | None, *, executor: Any = None, wait: bool = False,
            stats: BatchStats | None = None,
            on_row: Callable[[int, dict, bool], None] | None = None) -> tuple[list[dict], list[bool], BatchStats]:
    """Score every item into one row each, in input order: returns (rows,
    reused flags, stats). With ``output`` the run holds the file's lock, resumes
    the rows already there, appends each new row as its chunk comes back
    (flushed; fsynced when ``job.fsync``) and finally rewrites the file with
    exactly one line per item, in input order."""
    from .executors import make_executor, owned

    stats = stats if stats is not None else BatchStats()
    stats.inputs = len(items)
    start = time.perf_counter()
    with (OutputLock(output, wait) if output is not None else _nothing()):
        spec, executor = executor, make_executor(executor)
        try:
            rows, reused = _run(job, items, output, executor, stats, on_row)
        finally:
            if owned(spec):
                executor.close()
    stats.seconds = time.perf_counter() - start
    return rows, reused, stats


def _run(job, items, output, executor, stats, on_row):
    """The run itself, under the lock: every chunk answered, rows in input order."""
    done: dict[str, dict] = {}
    fh = None
    if output is not None:
        done, stats.dropped_lines = load_done(output, job.key_of)
        # drop torn and retried lines now, so that appending starts on a clean line
        atomic_write(output, [row_line(r) for r in done.values()])
        fh = open(output, "ab")
    rows: list[dict | None] = [None] * len(items)
    keys: list[str | None] = [None] * len(items)
    reused = [False] * len(items)
    try:
        chunks = plan_chunks(items, job.group, executor.workers)
        stats.chunks = len(chunks)
        for chunk, result in map_chunks(executor, run_chunk, (job, frozenset(done)), chunks,
                                        is_fatal=is_task_error, stats=stats):
            if isinstance(result, BaseException):
                message = f"the worker scoring this input was lost ({type(result).__name__}: {result})"[:2000]
                result = [(i, *job.lost(item, message)) for i, item in chunk]
                stats.lost += len(result)
            new = []
            for i, key, row in result:
                if row is None:
                    row, reused[i] = job.reuse(items[i], done[key]), True
                    stats.reused += 1
                else:
                    stats.scored += 1
                    if key not in done:
                        new.append(row_line(row))
                        done[key] = row
                rows[i], keys[i] = row, key
                if on_row is not None:
                    on_row(i, row, reused[i])
            if fh is not None and new:
                # whole lines, flushed: a killed run leaves whole lines or one
                # torn last line (dropped on resume)
                fh.write(b"".join(line + b"\n" for line in new))
                fh.flush()
                if job.fsync:
                    os.fsync(fh.fileno())
    finally:
        if fh is not None:
            fh.close()
    missing = [i for i, r in enumerate(rows) if r is None]
    assert not missing, f"no row for input(s) {missing[:5]}"   # every chunk is answered or lost
    kept = set(keys)
    stats.stale_rows = sum(1 for k in done if k not in kept)
    if output is not None:
        atomic_write(output, [row_line(r) for r in rows])
    return rows, reused


@contextmanager
def _nothing() -> Iterator[None]:
    yield
