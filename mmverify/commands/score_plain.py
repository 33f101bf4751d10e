"""What ``mmverify score`` does for each artifact, without click.

:mod:`mmverify.commands.score` (the click command) runs :func:`report_one` for
each artifact it is given; :mod:`mmverify.launch` runs :func:`score_plain`
for a plain command line naming one artifact (see there), which is the same
call with the options that line cannot name at their defaults. The options
that line may name are declared once, in :data:`SCORE_OPTIONS`, and the
click command is built from the same declarations.

Output is written as click's ``echo`` writes it (:func:`mmverify.clibase.echo`).
"""
from __future__ import annotations

from typing import Any

from mmverify.clibase import (ANCHORS, EXIT_NO_TASK, EXIT_OK, EXIT_VERDICT, FORMAT, STRICT_SCHEMA, Option, echo,
                              task_error_exit)

TASK = Option(("--task",), "task_id", "task id (inferred from the artifact or file name if omitted)")
JSON = Option(("--json",), "as_json", "same as --format json", flag=True)
NO_GATES = Option(("--no-gates",), "no_gates", "closeness only: skip the feasibility gates (diagnostic)", flag=True)
RULES = Option(("--rules",), "ruleset", "named ruleset: 'verified' credits a one-sided value beyond the panel's best "
               "plus the band only when a replay verifies it (unverified_improvement); 'paper' is the TB-MathModel "
               "paper's pure one-sided scoring, to reproduce published tables", choices=("verified", "paper"),
               default="verified", show_default=True)
# the report formats of ``score``: the shared ones and one run's report as an HTML page
SCORE_FORMAT = Option(FORMAT.names, FORMAT.dest, "output format (html: the report as one self-contained page; "
                      "one artifact)", choices=FORMAT.choices + ("html",), default=FORMAT.default,
                      show_default=FORMAT.show_default)
# what a plain command line may name; the other options of ``score`` (several
# artifacts, --fail-under, --output, --timeout-s, --executor, --wait) go to click
SCORE_OPTIONS: tuple[Option, ...] = (TASK, ANCHORS, SCORE_FORMAT, JSON, NO_GATES, RULES, STRICT_SCHEMA)

def report_one(path: str, *, task_id: str | None, anchors_dir: str | None, fmt: str, many: bool,
               run_gates: bool, timeout_s: float | None, ruleset: Any, strict_schema: bool,
               fail_under: float | None, statuses: list | None = None) -> int:
    """Score one artifact, print its report in ``fmt`` and return the exit code
    it calls for. Raises TaskNotInferred when the task cannot be told and the
    artifact is the only one (``many`` False); with several it is a row.
    ``statuses``, when given, receives the artifact's status."""
    seen = statuses if statuses is not None else []
    from mmverify.batch.score_files import score_one
    from mmverify.pipeline.evaluate import TaskNotInferred
    from mmverify.pipeline.report import dumps, dumps_line, render

    try:
        # score_one never raises for what the artifact holds: an engine
        # error or the time cap becomes an error row for this artifact.
        # A table or Markdown needs no JSON form of the report, unless a
        # time cap is set: then it is built under the cap, as it bounds the
        # rendering of a huge report too
        # (without a time cap only a regular file is read: a FIFO would wait for ever)
        outcome = score_one(path, task_id=task_id, anchors_dir=anchors_dir, run_gates=run_gates,
                            timeout_s=timeout_s, fingerprint="", ruleset=ruleset,
                            strict_schema=strict_schema, as_row=fmt == "json" or timeout_s is not None,
                            regular_only=timeout_s is None)
        if outcome.report is None and outcome.row["error"]["code"] == "task_not_inferred":
            raise TaskNotInferred(path)
        if outcome.report is None:
            row = {k: v for k, v in outcome.row.items() if k != "batch"}
            seen.append(row["status"])
            if fmt == "html":
                from mmverify.render.report_html import render_error_html

                echo(render_error_html(path, row["error"]["code"], row["error"]["message"]), nl=False)
                return EXIT_NO_TASK if row["status"] == "task_mismatch" else EXIT_VERDICT
            echo(dumps_line(row) if fmt == "json" else
                 f"{path}: error: {row['error']['code']}: {row['error']['message']}\n")
            # an artifact naming another task: the binding failed, as when no task can be told
            return EXIT_NO_TASK if row["status"] == "task_mismatch" else EXIT_VERDICT
        report = outcome.report
    except TaskNotInferred as exc:
        if not many:
            raise
        row = {"artifact": {"source": path}, "status": "error",
               "error": {"code": "task_not_inferred", "message": str(exc)}, "oeval": None}
        seen.append("error")
        echo(dumps_line(row) if fmt == "json" else f"{path}: error: {exc}\n")
        return EXIT_NO_TASK
    seen.append(report.status)
    if fmt == "json":
        # the row is the report's JSON form, already built (under the time cap)
        row = {k: v for k, v in outcome.row.items() if k != "batch"}
        echo(dumps_line(row) if many else dumps(row), nl=many)
    elif fmt == "html":
        from mmverify.render.report_html import render_html

        echo(render_html(report), nl=False)
    else:
        echo(render(report, fmt), nl=False)
        if many:
            echo("")
    if report.status not in ("scored", "not_scored"):
        return EXIT_VERDICT
    if fail_under is not None and (report.oeval is None or float(report.oeval) < fail_under):
        echo(f"{path}: O-EVAL below --fail-under {fail_under}", err=True)
        return EXIT_VERDICT
    return EXIT_OK


def score_plain(artifacts: tuple[str, ...], task_id: str | None, anchors_dir: str | None, fmt: str,
                as_json: bool, no_gates: bool, ruleset: Any, strict_schema: bool) -> int:
    """``mmverify score ARTIFACT`` with the options of :data:`SCORE_OPTIONS`:
    the click command's run on one artifact, returning its exit code."""
    from mmverify.tasks import TaskLoadError
    from mmverify.pipeline.evaluate import TaskNotInferred

    (path,) = artifacts
    try:
        return report_one(path, task_id=task_id, anchors_dir=anchors_dir, fmt="json" if as_json else fmt,
                          many=False, run_gates=not no_gates, timeout_s=None, ruleset=ruleset,
                          strict_schema=strict_schema, fail_under=None)
    except (TaskNotInferred, TaskLoadError) as exc:
        return task_error_exit(exc)
