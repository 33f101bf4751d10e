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

from .common import (anchors_option, executor_options, format_option, progress, progress_counter,
                     strict_schema_option, task_errors)

if TYPE_CHECKING:
    from mmverify.scoring.rules import Ruleset


@click.command()
@click.argument("artifacts", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--task", "task_id", default=None, help="task id (inferred from the artifact or file name if omitted)")
@anchors_option
@format_option
@click.option("--json", "as_json", is_flag=True, help="same as --format json")
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None,
              help="exit 1 when an O-EVAL is below this value")
@click.option("--no-gates", is_flag=True, help="closeness only: skip the feasibility gates (diagnostic)")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="write one JSON line per artifact to this file, fsynced per line; an existing file "
                   "is resumed (artifacts already scored, same path and bytes, are skipped)")
@click.option("--timeout-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="time cap per artifact in seconds; an artifact over it is an error row (code timeout)")
@click.option("--rules", "ruleset", type=click.Choice(["verified", "paper"]), default="verified", show_default=True,
              help="named ruleset: 'verified' credits a one-sided value beyond the panel's best plus the band only "
                   "when a replay verifies it (unverified_improvement); 'paper' is the TB-MathModel paper's pure "
                   "one-sided scoring, to reproduce published tables")
@strict_schema_option
@executor_options
@task_errors
def score(artifacts, task_id, anchors_dir, fmt, as_json, fail_under, no_gates, output, timeout_s, ruleset,
          strict_schema, executor, wait):
    """Score each ARTIFACT against its task's panel (O-EVAL), after schema and gates.

    With several artifacts and --format json, the output is one JSON report per
    line (JSON Lines), in the order given. With --output FILE.jsonl the reports
    go to FILE (one line per artifact, resumable; see mmverify.batch) and a
    summary to stderr.
    """
    from mmverify.batch import score_one
    from mmverify.evaluate import TaskNotInferred
    from mmverify.report import dumps, dumps_line, render

    if timeout_s is not None:
        from mmverify.batch import time_cap_available

        if not time_cap_available():  # pragma: no cover - POSIX main thread in practice
            click.echo("warning: --timeout-s needs POSIX signals on the main thread; running without a time cap",
                       err=True)
    if output is not None:
        sys.exit(_score_batch(artifacts, output, task_id, anchors_dir, not no_gates, timeout_s, fail_under,
                              executor, wait, ruleset, strict_schema))
    if executor != "local":
        click.echo("error: --executor needs --output (a batch file)", err=True)
        sys.exit(EXIT_USAGE)
    fmt = "json" if as_json else fmt
    many = len(artifacts) > 1
    worst = EXIT_OK
    for path in progress(artifacts, many):
        try:
            # score_one never raises for what the artifact holds: an engine
            # error or the time cap becomes an error row for this artifact.
            # A table or Markdown needs no JSON form of the report, unless a
            # time cap is set: then it is built under the cap, as it bounds the
            # rendering of a huge report too
            outcome = score_one(path, task_id=task_id, anchors_dir=anchors_dir, run_gates=not no_gates,
                                timeout_s=timeout_s, fingerprint="", ruleset=ruleset,
                                strict_schema=strict_schema, as_row=fmt == "json" or timeout_s is not None)
            if outcome.report is None and outcome.row["error"]["code"] == "task_not_inferred":
                raise TaskNotInferred(path)
            if outcome.report is None:
                row = {k: v for k, v in outcome.row.items() if k != "batch"}
                click.echo(dumps_line(row) if fmt == "json" else
                           f"{path}: error: {row['error']['code']}: {row['error']['message']}\n")
                worst = max(worst, EXIT_VERDICT)
                continue
            report = outcome.report
        except TaskNotInferred as exc:
            if not many:
                raise
            row = {"artifact": {"source": path}, "status": "error",
                   "error": {"code": "task_not_inferred", "message": str(exc)}, "oeval": None}
            click.echo(dumps_line(row) if fmt == "json" else f"{path}: error: {exc}\n")
            worst = max(worst, EXIT_NO_TASK)
            continue
        if fmt == "json":
            # the row is the report's JSON form, already built (under the time cap)
            row = {k: v for k, v in outcome.row.items() if k != "batch"}
            click.echo(dumps_line(row) if many else dumps(row), nl=many)
        else:
            click.echo(render(report, fmt), nl=False)
            if many and fmt != "json":
                click.echo("")
        if report.status not in ("scored", "not_scored"):
            worst = max(worst, EXIT_VERDICT)
        elif fail_under is not None and (report.oeval is None or float(report.oeval) < fail_under):
            click.echo(f"{path}: O-EVAL below --fail-under {fail_under}", err=True)
            worst = max(worst, EXIT_VERDICT)
    sys.exit(worst)


def _score_batch(artifacts, output, task_id, anchors_dir, run_gates, timeout_s, fail_under, executor="local",
                 wait=False, ruleset: Ruleset = "verified", strict_schema: bool = False) -> int:
    """``--output``: every artifact into one JSON Lines file; returns the exit code."""
    from mmverify.batch import run_batch
    from mmverify.engine import OutputBusy
    from mmverify.executors import ExecutorUnavailable

    worst = EXIT_OK
    below = 0
    bar = progress_counter(len(artifacts))
    try:
        outcomes, stats = run_batch(artifacts, output, task_id=task_id, anchors_dir=anchors_dir,
                                    run_gates=run_gates, timeout_s=timeout_s, executor=executor, wait=wait,
                                    ruleset=ruleset, strict_schema=strict_schema,
                                    on_outcome=bar.step if bar else None)
    except (OutputBusy, ExecutorUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except OSError as exc:   # the output file, not an artifact: those are rows
        click.echo(f"error: cannot write the output file {output}: {exc.strerror or exc}", err=True)
        return EXIT_USAGE
    finally:
        if bar:
            bar.close()
    counts: dict[str, int] = {}
    for o in outcomes:
        status = o.row.get("status")
        code = (o.row.get("error") or {}).get("code")
        counts[status] = counts.get(status, 0) + 1
        if code == "task_not_inferred":
            worst = max(worst, EXIT_NO_TASK)
        elif status not in ("scored", "not_scored"):
            worst = max(worst, EXIT_VERDICT)
        elif fail_under is not None and (o.row.get("oeval") is None or o.row["oeval"] < fail_under):
            below += 1
            worst = max(worst, EXIT_VERDICT)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    click.echo(f"{len(outcomes)} row(s) in {output} ({stats.scored} scored now, {stats.reused} reused"
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
