"""The score as a reward: ``mmverify.reward(task_id, artifact)`` and a batch form.

Design notes: docs/architecture.md, `mmverify/plugin/reward.py`.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from mmverify.reading.artifact import Artifact, ArtifactError, from_python, parse_bytes, parse_file

ArtifactLike = Any  # str | os.PathLike | bytes | bytearray | dict | Artifact | ArtifactError | None


def coerce_artifact(artifact: ArtifactLike, *, source: str | None = None) -> Artifact | ArtifactError | None:
    """Turn a path, bytes, a parsed-JSON dict or an :class:`Artifact` into what
    the pipeline takes, without raising on bad *content*.

    * ``str`` / ``os.PathLike``: a file path (read with the strict parser; a
      missing file is ``missing_artifact``). A ``str`` is never JSON text: pass
      ``text.encode()`` for that.
    * ``bytes`` / ``bytearray``: JSON text, parsed strictly.
    * ``dict``: a Python object, converted by :func:`mmverify.reading.artifact.from_python`
      (floats become the decimal of their shortest repr, NaN is rejected).
    * ``None``: no artifact (``missing``).
    """
    try:
        if artifact is None or isinstance(artifact, (Artifact, ArtifactError)):
            return artifact
        if isinstance(artifact, (bytes, bytearray, memoryview)):
            return parse_bytes(bytes(artifact), source=source or "<bytes>")
        if isinstance(artifact, (str, os.PathLike)):
            return parse_file(artifact)
        if isinstance(artifact, dict):
            return from_python(artifact, source=source or "<object>")
    except ArtifactError as exc:
        return exc
    raise TypeError(f"an artifact is a path, bytes or a dict, not {type(artifact).__name__}")


def score(task_id: Any, artifact: ArtifactLike, anchors_dir: str | None = None):
    """The full :class:`mmverify.pipeline.report.Report` of one artifact (``task_id`` may
    also be a loaded :class:`mmverify.tasks.TaskSpec`)."""
    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.tasks import TaskSpec, load_task

    task = task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)
    return score_artifact(task, coerce_artifact(artifact))


def reward(task_id: Any, artifact: ArtifactLike, anchors_dir: str | None = None, *,
           verified_only: bool = False) -> float:
    """O-EVAL of ``artifact`` on ``task_id`` as a float in [0, 1] (gate-zeroed).

    ``artifact`` is a path, bytes, or a Python dict (see :func:`coerce_artifact`).
    ``verified_only``: pay only the credit of metrics a replay verified (the
    report's verified credit, :mod:`mmverify.scoring.verified`); closeness to
    a paper's numbers alone earns nothing.
    """
    from mmverify.pipeline.evaluate import reward_of, verified_reward_of
    from mmverify.tasks import TaskSpec, load_task

    task = task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)
    return (verified_reward_of if verified_only else reward_of)(task, coerce_artifact(artifact))




# --------------------------------------------------------------------- batch

def _score_chunk(anchors_dir: str | None, chunk: list[tuple[int, tuple[str, ArtifactLike]]],
                 verified_only: bool = False) -> list[tuple[int, float]]:
    """Worker: one chunk of one task's artifacts. Each task is loaded once per
    worker process (the task cache)."""
    from mmverify.pipeline.evaluate import reward_of, verified_reward_of
    from mmverify.tasks import load_task

    score = verified_reward_of if verified_only else reward_of
    tasks: dict[str, Any] = {}
    out = []
    for i, (task_id, a) in chunk:
        task = tasks.get(task_id) or tasks.setdefault(task_id, load_task(task_id, anchors_dir))
        out.append((i, score(task, coerce_artifact(a))))
    return out


def _score_verified_chunk(anchors_dir: str | None,
                          chunk: list[tuple[int, tuple[str, ArtifactLike]]]) -> list[tuple[int, float]]:
    return _score_chunk(anchors_dir, chunk, verified_only=True)


def _checked(pairs: Sequence[Any]) -> list[tuple[str, ArtifactLike]]:
    out = []
    for i, pair in enumerate(pairs):
        try:
            task_id, artifact = pair
        except (TypeError, ValueError):
            raise TypeError(f"pair {i} is not a (task_id, artifact) pair") from None
        if not isinstance(task_id, str):
            raise TypeError(f"pair {i}: task id must be a string, not {type(task_id).__name__}")
        out.append((task_id, artifact))
    return out


def reward_batch(pairs: Iterable[tuple[str, ArtifactLike]], anchors_dir: str | None = None,
                 processes: int | None = None, start_method: str | None = None, executor: Any = None, *,
                 verified_only: bool = False) -> list[float]:
    """Rewards of many ``(task_id, artifact)`` pairs, in input order.

    Each distinct task is loaded once per worker (and its schema validator and
    gates compiled once) and every artifact of that task is scored against it.
    The gate multiplier is the pipeline's: an artifact failing a hard gate gets
    0.0. The work runs on the shared batch engine (:mod:`mmverify.batch.engine`), in
    chunks that each hold one task.

    ``processes``: ``None``, 0 or 1 scores in this process; ``N > 1`` uses a
    fresh pool of ``N`` worker processes and closes it before returning.
    ``start_method``: ``None`` is the platform's default (``fork`` on Linux:
    fast, no ``if __name__ == "__main__"`` guard needed); pass ``"spawn"`` when
    the calling process runs threads (a fork then copies their locks) - spawn
    and forkserver need the main-module guard. ``executor``: instead of a pool,
    a Ray or Dask cluster (``"ray"``, ``"ray://HOST:PORT"``, ``"dask://HOST:PORT"``,
    an executor object from :mod:`mmverify.batch.executors`, a ``distributed.Client``
    or the ``ray`` module once ``ray.init`` ran); an executor object is left
    open, one made from a string is closed before returning. A chunk whose
    worker died is sent again; if it keeps failing, RuntimeError is raised
    (a reward is never made up). Artifacts sent to workers must be picklable
    (paths, bytes and dicts are; a path must be readable where the worker
    runs). A task error (unknown id, broken anchors) is raised.
    ``verified_only``: as in :func:`reward`.
    """
    from mmverify.batch.engine import is_task_error, chunks_by_group, map_chunks
    from mmverify.batch.executors import LocalExecutor, PoolExecutor, make_executor, owned

    pairs = _checked(list(pairs))
    if anchors_dir is not None:
        anchors_dir = os.path.abspath(anchors_dir)
    out: list[float | None] = [None] * len(pairs)
    if executor is not None:
        ex = make_executor(executor)
    elif processes and processes > 1 and len(pairs) > 1:
        ex = PoolExecutor(min(processes, len(pairs)), start_method)
    else:
        ex = LocalExecutor()
    try:
        chunks = chunks_by_group(pairs, lambda pair: pair[0], ex.workers)  # local: one chunk per task
        job = _score_chunk if not verified_only else _score_verified_chunk
        for chunk, result in map_chunks(ex, job, (anchors_dir,), chunks, is_fatal=is_task_error):
            if isinstance(result, BaseException):
                raise RuntimeError(f"the workers scoring {len(chunk)} artifact(s) of task {chunk[0][1][0]!r} "
                                   f"kept failing: {type(result).__name__}: {result}") from result
            for i, r in result:
                out[i] = r
    finally:
        if executor is None or owned(executor):
            ex.close()
    return [float(r) for r in out]  # type: ignore[arg-type]  (every index is in exactly one chunk)
