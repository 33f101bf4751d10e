"""The batch engine shared by ``score --output``, ``board`` and ``reward_batch``.

Design notes: docs/architecture.md, `mmverify/batch/engine.py`.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from array import array
from typing import Any, Callable, Container, Iterable, Iterator, Sequence

from mmverify.reading.artifact import read_bounded  # noqa: F401  (the bounded reader, under its old name here)
# the time cap lives in its own module (a replay under a cap needs no batch engine)
from mmverify.pipeline.timecap import REPEAT_S, ScoreTimeout, time_cap, time_cap_available  # noqa: F401

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
    """Replace ``path`` by these lines, atomically (:mod:`mmverify.batch.atomic`)."""
    from mmverify.batch.atomic import replace_file

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

def run_chunk(job: Any, done_keys: Container[str], items: Sequence[tuple[int, Any]],
              brief: bool = False) -> list[tuple[int, str, bytes | None, Any]]:
    """Worker side: score one chunk; ``(index, key, line, row)`` per item, with
    ``line`` and ``row`` None when the key is in ``done_keys`` (reused). The
    row's file line is rendered here, once, by the process that scored it;
    ``brief`` sends ``job.brief(row)`` back instead of the whole row (a process
    pool whose driver keeps no rows: what crosses the pipe is the line)."""
    out = []
    for i, item in items:
        key, row = job.score(item, done_keys)
        if row is None:
            out.append((i, key, None, None))
        else:
            out.append((i, key, row_line(row), job.brief(row) if brief else row))
    return out


def run_chunk_brief(job: Any, done_keys: Container[str], items: Sequence[tuple[int, Any]]) -> list:
    """:func:`run_chunk` sending brief rows back (``brief=True``)."""
    return run_chunk(job, done_keys, items, brief=True)


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


def contiguous_chunks(n: int, workers: int, max_chunk: int = 64) -> list[list[int]]:
    """Index ranges ``[lo, hi)`` of about four chunks per worker, at most
    ``max_chunk`` items each, in input order (as plain lists ``[lo, hi]``)."""
    size = max(1, min(max_chunk, -(-n // max(1, workers * 4))))
    return [[lo, min(n, lo + size)] for lo in range(0, n, size)]


def plan_chunks(items: Sequence[Any], group: Callable[[Any], Any], workers: int,
                grouped: bool = True) -> list[list[tuple[int, Any]]]:
    """The chunks of a file-backed batch: with one worker every item alone, in
    input order (rows are written one by one, as before any cluster); with
    more, chunks grouped by task, about four per worker, at most 64 items
    (``grouped=False``, a local process pool whose workers share the
    driver's loaded tasks: runs of consecutive items instead)."""
    if workers <= 1:
        return _Singles(items)
    if not grouped:
        return [[(i, items[i]) for i in range(lo, hi)] for lo, hi in contiguous_chunks(len(items), workers)]
    return chunks_by_group(items, group, workers * 4, max_chunk=64)


class _Singles(Sequence):
    """``[[(0, items[0])], [(1, items[1])], ...]`` made as read: a batch of n
    items in one process holds no n chunk lists."""

    def __init__(self, items: Sequence[Any]):
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return [(i, self._items[i])]


def map_chunks(executor: Any, fn: Callable, shared: tuple, chunks: Sequence[Any], *,
               is_fatal: Callable[[BaseException], bool] = lambda exc: False,
               stats: BatchStats | None = None) -> Iterator[tuple[Any, Any]]:
    """``(chunk, fn(*shared, chunk))`` for every chunk, as they finish. A chunk
    that raised (its worker died, the connection broke) is sent again up to
    :data:`CHUNK_RETRIES` times, then yielded as ``(chunk, exception)``; an
    exception ``is_fatal`` says is the caller's error is raised at once."""
    handles = executor.share(shared)
    pending = chunks
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
    from mmverify.tasks import TaskLoadError

    return isinstance(exc, TaskLoadError)


def run_job(job: Any, items: Sequence[Any], output: str | None, *, executor: Any = None, wait: bool = False,
            stats: BatchStats | None = None, on_row: Callable[[int, dict, bool], None] | None = None,
            keep_rows: bool = True) -> tuple[list[dict] | None, list[bool], BatchStats]:
    """Score every item into one row each, in input order: returns (rows,
    reused flags, stats). With ``output`` the run holds the file's lock, resumes
    the rows already there, appends each new row as its chunk comes back
    (flushed; fsynced when ``job.fsync``, at most every
    :data:`FSYNC_INTERVAL_S`) and finally leaves the file with exactly one line
    per item, in input order.

    ``keep_rows=False`` (with ``output``) holds no row: rows are streamed to
    the file and to ``on_row``, the memory of the run does not grow with the
    number of items, and ``rows`` is None. A job with a ``brief(row)`` method
    then gets, from a process pool, ``on_row`` calls with that brief row."""
    from mmverify.batch.executors import make_executor, owned

    stats = stats if stats is not None else BatchStats()
    stats.inputs = len(items)
    keep_rows = keep_rows or output is None
    start = time.perf_counter()
    with (OutputLock(output, wait) if output is not None else _nothing()):
        spec, executor = executor, make_executor(executor)
        try:
            rows, reused = _run(job, items, output, executor, stats, on_row, keep_rows)
        finally:
            if owned(spec):
                executor.close()
    stats.seconds = time.perf_counter() - start
    return rows, reused, stats


# A new row is flushed at once (a killed process loses at most the row being
# written, a torn last line that a resume drops); the file is fsynced at most
# this often, and always before the run ends: a machine crash loses at most the
# rows of the last interval, which a resume scores again.
FSYNC_INTERVAL_S = 1.0


class _Spool:
    """The output file during a run: the rows already there (by key, their
    place in the file) and the lines appended. A row is never held in memory:
    a place is ``(offset, length)`` of a line (without its newline)."""

    def __init__(self, path: str, key_of: Callable[[Any], str | None], stats: BatchStats, durable: bool):
        self.path = path
        self.durable = durable
        self.index, stats.dropped_lines = _clean(path, key_of, durable)
        self.fh = open(path, "a+b")     # appends; pread reads stored rows back
        self.end = os.fstat(self.fh.fileno()).st_size
        self._synced = time.monotonic()
        self._dirty = False

    def read(self, place: tuple[int, int]) -> bytes:
        return os.pread(self.fh.fileno(), place[1], place[0])

    def append(self, lines: list[bytes]) -> list[tuple[int, int]]:
        """Append whole lines (flushed): their places."""
        places = []
        for line in lines:
            places.append((self.end, len(line)))
            self.end += len(line) + 1
        self.fh.write(b"".join(line + b"\n" for line in lines))
        self.fh.flush()
        self._dirty = True
        if self.durable and time.monotonic() - self._synced >= FSYNC_INTERVAL_S:
            self.sync()
        return places

    def sync(self) -> None:
        os.fsync(self.fh.fileno())
        self._synced = time.monotonic()
        self._dirty = False

    def finish(self, offsets: Sequence[int], lengths: Sequence[int]) -> None:
        """Leave exactly the lines at these places, in this order: the file as it
        is when it already holds just them (a fresh single-process run), else
        a copy of them written atomically."""
        places = zip(offsets, lengths)
        at = 0
        for off, length in places:
            if off != at:
                break
            at += length + 1
        else:
            if at == self.end:
                if self.durable and self._dirty:
                    self.sync()
                self.close()
                if self.durable:
                    _sync_folder(self.path)
                return
        fd = self.fh.fileno()
        from mmverify.batch.atomic import replace_file

        replace_file(self.path, (os.pread(fd, length + 1, off) for off, length in zip(offsets, lengths)),
                     durable=self.durable)
        self.close()

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()


def _clean(path: str, key_of: Callable[[Any], str | None], durable: bool) -> tuple[dict[str, tuple[int, int]], int]:
    """Index the rows already in an output file (see :func:`load_done`: the
    same lines are kept), read one line at a time; when some line must go, the
    file is rewritten atomically with the kept lines only, so that appending
    starts on a clean line. Returns (key -> place, lines dropped)."""
    index: dict[str, tuple[int, int]] = {}
    dropped = 0
    unclean = False
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)   # as an atomic write makes it
        os.close(fd)
        return index, 0
    kept: list[tuple[str, int, int]] = []
    with fh:
        offset = 0
        for line in fh:
            size = len(line)
            if not line.endswith(b"\n"):        # no newline after the last line: torn by a crash
                dropped += 1
                unclean = True
                break
            body = line[:-1]
            key, retried = _key_of_line(body, key_of)
            if key is None:
                dropped += 1
                unclean = True
            elif retried or key in index:
                unclean = True
            else:
                index[key] = (offset, len(body))
                kept.append((key, offset, len(body)))
            offset += size
        if not unclean:
            return index, dropped
        fd = fh.fileno()
        from mmverify.batch.atomic import replace_file

        index = {}
        new: list[tuple[int, int]] = []
        at = 0
        for key, off, length in kept:
            index[key] = (at, length)
            new.append((off, length))
            at += length + 1
        replace_file(path, (os.pread(fd, length + 1, off) for off, length in new), durable=durable)
    return index, dropped


def _key_of_line(body: bytes, key_of: Callable[[Any], str | None]) -> tuple[str | None, bool]:
    """The key of one stored line (None: unreadable or foreign) and whether its
    error code is one scored again (:data:`RETRIED`)."""
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, False
    key = key_of(obj) if isinstance(obj, dict) else None
    if not isinstance(key, str):
        return None, False
    error = obj.get("error")
    return key, isinstance(error, dict) and error.get("code") in RETRIED


def _sync_folder(path: str) -> None:
    from mmverify.batch.atomic import sync_folder

    sync_folder(os.path.dirname(os.path.abspath(path)))


def _run(job, items, output, executor, stats, on_row, keep_rows=True):
    """The run itself, under the lock: every chunk answered, rows in input order.

    Per item only its place in the file is kept (two machine integers) and
    whether it was reused; a job whose keys never repeat within a batch
    (``unique_keys``) also keeps no key of a new row."""
    spool = _Spool(output, job.key_of, stats, getattr(job, "fsync", True)) if output is not None else None
    done = spool.index if spool is not None else {}
    initial = frozenset(done)
    unique = getattr(job, "unique_keys", False)
    n = len(items)
    rows: list[dict | None] | None = [None] * n if keep_rows else None
    offsets, lengths = array("q", [-1]) * n, array("q", [0]) * n      # -1: no row yet
    reused = bytearray(n)
    used: set[str] = set()                     # stored keys a row of this run takes
    brief = not keep_rows and executor.workers > 1 and hasattr(job, "brief")
    try:
        chunks = plan_chunks(items, job.group, executor.workers, grouped=getattr(executor, "grouped", True))
        stats.chunks = len(chunks)
        for chunk, result in map_chunks(executor, run_chunk_brief if brief else run_chunk, (job, initial), chunks,
                                        is_fatal=is_task_error, stats=stats):
            if isinstance(result, BaseException):
                message = f"the worker scoring this input was lost ({type(result).__name__}: {result})"[:2000]
                result = []
                for i, item in chunk:
                    key, row = job.lost(item, message)
                    result.append((i, key, row_line(row), row))
                stats.lost += len(result)
            new: list[bytes] = []
            waiting: list[tuple[int, str | None]] = []
            for i, key, line, row in result:
                if line is None:
                    # reused: the stored row, as this run names the input
                    stored = spool.read(done[key]) if spool is not None else b""
                    row = job.reuse(items[i], json.loads(stored.decode("utf-8")))
                    reused[i] = 1
                    used.add(key)
                    stats.reused += 1
                    line = row_line(row)
                    if line == stored:
                        offsets[i], lengths[i] = done[key]
                    else:
                        new.append(line)
                        waiting.append((i, None))
                else:
                    stats.scored += 1
                    if key in initial:
                        used.add(key)
                    # a key met before (a job whose keys may repeat): the line
                    # already written serves when it is the same row
                    place = None if unique else done.get(key)
                    if place is not None and spool is not None and spool.read(place) == line:
                        offsets[i], lengths[i] = place
                    else:
                        new.append(line)
                        waiting.append((i, None if unique or key in done else key))
                if rows is not None:
                    rows[i] = row
                if on_row is not None:
                    on_row(i, row, bool(reused[i]))
            if new:
                placed = spool.append(new) if spool is not None else [(0, 0)] * len(new)
                for (i, key), (off, length) in zip(waiting, placed):
                    offsets[i], lengths[i] = off, length
                    if key is not None and key not in done:
                        done[key] = (off, length)
        missing = [i for i in range(n) if offsets[i] < 0]
        assert not missing, f"no row for input(s) {missing[:5]}"   # every chunk is answered or lost
        stats.stale_rows = len(initial - used)
        if spool is not None:
            spool.finish(offsets, lengths)
    finally:
        if spool is not None:
            spool.close()
    return rows, [bool(b) for b in reused]


@contextmanager
def _nothing() -> Iterator[None]:
    yield
