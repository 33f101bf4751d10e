"""``mmverify score ARTIFACT...``: the full report for each artifact.

Every artifact given yields exactly one report: an unreadable, invalid or
infeasible artifact is a report with its status and error, and an artifact
whose task cannot be told is an error report too (exit code 4 when it is the
only one).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from mmverify.cli import EXIT_NO_TASK, EXIT_OK, EXIT_USAGE, EXIT_VERDICT

from .common import (anchors_option, click_option, executor_options, progress, progress_counter,
                     strict_schema_option, task_errors)
from .score_plain import JSON, NO_GATES, RULES, SCORE_FORMAT, TASK, report_one

if TYPE_CHECKING:
    from mmverify.scoring.rules import Ruleset


@click.command()
@click.argument("artifacts", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click_option(TASK)
@anchors_option
@click_option(SCORE_FORMAT)
@click_option(JSON)
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None,
              help="exit 1 when an O-EVAL is below this value")
@click_option(NO_GATES)
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="write one JSON line per artifact to this file, flushed per line (fsynced at least once a "
                   "second); an existing file "
                   "is resumed (artifacts already scored, same path and bytes, are skipped)")
@click.option("--timeout-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="time cap per artifact in seconds; an artifact over it is an error row (code timeout)")
@click_option(RULES)
@strict_schema_option
@executor_options
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="with --output: score in N local processes (one process for a batch too small to gain); "
                   "the rows are the same")
@task_errors
def score(artifacts, task_id, anchors_dir, fmt, as_json, fail_under, no_gates, output, timeout_s, ruleset,
          strict_schema, executor, wait, jobs):
    """Score each ARTIFACT against its task's panel (O-EVAL), after schema and gates.

    With several artifacts and --format json, the output is one JSON report per
    line (JSON Lines), in the order given, and a summary line (the count of
    each status) goes to stderr. With --output FILE.jsonl the reports
    go to FILE (one line per artifact, resumable; see mmverify.batch.score_files) and a
    summary to stderr.
    """
    if timeout_s is not None:
        from mmverify.batch.score_files import time_cap_available

        if not time_cap_available():  # pragma: no cover - POSIX main thread in practice
            click.echo("warning: --timeout-s needs POSIX signals on the main thread; running without a time cap",
                       err=True)
    if jobs > 1 and executor != "local":
        click.echo("error: --jobs is for local processes; a cluster (--executor) sizes itself", err=True)
        sys.exit(EXIT_USAGE)
    if output is not None:
        sys.exit(_score_batch(artifacts, output, task_id, anchors_dir, not no_gates, timeout_s, fail_under,
                              executor, wait, ruleset, strict_schema, jobs))
    if executor != "local" or jobs > 1:
        click.echo(f"error: {'--executor' if executor != 'local' else '--jobs'} needs --output (a batch file)",
                   err=True)
        sys.exit(EXIT_USAGE)
    fmt = "json" if as_json else fmt
    many = len(artifacts) > 1
    if fmt == "html" and many:
        click.echo("error: --format html writes one page for one artifact; give one artifact per call",
                   err=True)
        sys.exit(EXIT_USAGE)
    worst = EXIT_OK
    statuses: list[str] = []
    for path in progress(artifacts, many):
        worst = max(worst, report_one(path, task_id=task_id, anchors_dir=anchors_dir, fmt=fmt, many=many,
                                      run_gates=not no_gates, timeout_s=timeout_s, ruleset=ruleset,
                                      strict_schema=strict_schema, fail_under=fail_under, statuses=statuses))
    if many:    # one summary line, on stderr (standard output holds only the reports)
        counts: dict[str, int] = {}
        for st in statuses:
            counts[st] = counts.get(st, 0) + 1
        click.echo(f"{len(artifacts)} artifacts: " + ", ".join(f"{n} {st}" for st, n in sorted(counts.items())),
                   err=True)
    sys.exit(worst)


def _score_batch(artifacts, output, task_id, anchors_dir, run_gates, timeout_s, fail_under, executor="local",
                 wait=False, ruleset: Ruleset = "verified", strict_schema: bool = False, jobs: int = 1) -> int:
    """``--output``: every artifact into one JSON Lines file; returns the exit code.
    Rows are streamed to the file, never held: the summary is tallied as they come."""
    from mmverify.batch.score_files import run_batch
    from mmverify.batch.engine import OutputBusy
    from mmverify.batch.executors import ExecutorUnavailable

    bar = progress_counter(len(artifacts))
    tally = _Tally(fail_under)

    def seen(outcome) -> None:
        tally.add(outcome.row)
        if bar:
            bar.step()

    try:
        _, stats = run_batch(artifacts, output, task_id=task_id, anchors_dir=anchors_dir,
                             run_gates=run_gates, timeout_s=timeout_s,
                             executor=None if executor == "local" else executor, wait=wait,
                             ruleset=ruleset, strict_schema=strict_schema, on_outcome=seen, jobs=jobs,
                             keep_rows=False)
    except (OutputBusy, ExecutorUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except OSError as exc:   # the output file, not an artifact: those are rows
        click.echo(f"error: cannot write the output file {output}: {exc.strerror or exc}", err=True)
        return EXIT_USAGE
    finally:
        if bar:
            bar.close()
    counts, worst, below = tally.counts, tally.worst, tally.below
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    click.echo(f"{tally.rows} row(s) in {output} ({stats.scored} scored now, {stats.reused} reused"
               + (f", {stats.dropped_lines} torn/unreadable line(s) dropped and redone" if stats.dropped_lines else "")
               + (f", {stats.stale_rows} earlier row(s) of other inputs or older bytes not kept"
                  if stats.stale_rows else "")
               + (f", {stats.lost} lost with their worker (error rows, retried on resume)" if stats.lost else "")
               + f"): {summary or 'nothing'}", err=True)
    if stats.duplicates:
        click.echo(f"note: {len(stats.duplicates)} artifact(s) given more than once, scored once: "
                   + ", ".join(stats.duplicates[:5]), err=True)
    if below:
        click.echo(f"{below} artifact(s) with O-EVAL below --fail-under {fail_under}", err=True)
    return worst


class _Tally:
    """The batch summary and exit code, row by row (no row is kept)."""

    def __init__(self, fail_under: float | None):
        self.fail_under = fail_under
        self.counts: dict[str, int] = {}
        self.rows = self.below = 0
        self.worst = EXIT_OK

    def add(self, row: dict) -> None:
        self.rows += 1
        status = row.get("status")
        code = (row.get("error") or {}).get("code")
        self.counts[status] = self.counts.get(status, 0) + 1
        if code in ("task_not_inferred", "task_mismatch"):
            self.worst = max(self.worst, EXIT_NO_TASK)
        elif status not in ("scored", "not_scored"):
            self.worst = max(self.worst, EXIT_VERDICT)
        elif self.fail_under is not None and (row.get("oeval") is None or row["oeval"] < self.fail_under):
            self.below += 1
            self.worst = max(self.worst, EXIT_VERDICT)
