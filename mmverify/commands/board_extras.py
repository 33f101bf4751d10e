"""The I/O of ``mmverify board --judge FILE`` and ``--html OUT``: reading the
judge file (bounded, decoded, never executed), loading the notes of the
board's tasks, writing the page. The pure parts are in
:mod:`mmverify.scoring.judge` and :mod:`mmverify.scoring.board_html`.
"""
from __future__ import annotations

import os
from typing import Any

JUDGE_MAX_BYTES = 16 * 1024 * 1024


class JudgeFileError(Exception):
    """The judge file as a whole cannot be read (its rows are never an error)."""


def read_judge(path: str, board: Any) -> Any:
    """The judge file's scores set beside ``board``
    (:class:`~mmverify.scoring.judge.JudgeComparison`). Raises
    :class:`JudgeFileError` when the file cannot be opened or is not UTF-8 text."""
    from mmverify.scoring.judge import compare, parse_judge

    try:
        with open(path, "rb") as fh:
            data = fh.read(JUDGE_MAX_BYTES + 1)
    except OSError as exc:
        raise JudgeFileError(f"cannot read the judge file {path}: {exc.strerror or exc}") from None
    if len(data) > JUDGE_MAX_BYTES:
        raise JudgeFileError(f"the judge file {path} is over {JUDGE_MAX_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JudgeFileError(f"the judge file {path} is not UTF-8 text (byte {exc.start})") from None
    return compare(board, parse_judge(text, os.path.basename(path)))


def board_notes(board: Any, anchors_dir: str | None) -> tuple[Any, ...]:
    """The exclusions, corrections and findings of the board's tasks (a task
    that no longer loads has none here: its rows are listed as problems)."""
    from mmverify.scoring.board_html import task_notes
    from mmverify.tasks import TaskLoadError, load_task

    tasks = []
    for t in board.tasks:
        try:
            tasks.append(load_task(t.id, anchors_dir))
        except TaskLoadError:
            continue
    return task_notes(tasks)


def write_html(board: Any, path: str, judge: Any, anchors_dir: str | None) -> None:
    from mmverify.scoring.board_html import render_html

    text = render_html(board, judge=judge, notes=board_notes(board, anchors_dir))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def rendered(board: Any, fmt: str, judge: Any) -> str:
    """The board in ``fmt``, with the judge section when there are judge
    scores (JSON: a ``judge`` key; the board's own data is unchanged)."""
    from mmverify.scoring.board_render import board_dict, render

    if judge is None:
        return render(board, fmt)
    from mmverify.scoring.judge import judge_dict, judge_lines

    if fmt == "json":
        from mmverify.pipeline.report import dumps

        return dumps(dict(board_dict(board), judge=judge_dict(judge)))
    text = render(board, fmt)
    lines = judge_lines(judge)
    if fmt == "md":
        return text + "\n## Judge scores\n\n" + "\n".join(f"- {x.strip()}" for x in lines) + "\n"
    return text + "\n" + "\n".join(lines) + "\n"
