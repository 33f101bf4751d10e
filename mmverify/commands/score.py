"""``mmverify score ARTIFACT...``: the full report for each artifact.

Every artifact given yields exactly one report: an unreadable, invalid or
infeasible artifact is a report with its status and error, and an artifact
whose task cannot be told is an error report too (exit code 4 when it is the
only one).
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_NO_TASK, EXIT_OK, EXIT_VERDICT

from .common import anchors_option, format_option, task_errors


@click.command()
@click.argument("artifacts", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--task", "task_id", default=None, help="task id (inferred from the artifact or file name if omitted)")
@anchors_option
@format_option
@click.option("--json", "as_json", is_flag=True, help="same as --format json")
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None,
              help="exit 1 when an O-EVAL is below this value")
@click.option("--no-gates", is_flag=True, help="closeness only: skip the feasibility gates (diagnostic)")
@task_errors
def score(artifacts, task_id, anchors_dir, fmt, as_json, fail_under, no_gates):
    """Score each ARTIFACT against its task's panel (O-EVAL), after schema and gates.

    With several artifacts and --format json, the output is one JSON report per
    line (JSON Lines), in the order given.
    """
    from mmverify.evaluate import TaskNotInferred, score_path
    from mmverify.report import dumps_line, render

    fmt = "json" if as_json else fmt
    many = len(artifacts) > 1
    worst = EXIT_OK
    for path in artifacts:
        try:
            report = score_path(path, task_id, anchors_dir, run_gates=not no_gates)
        except TaskNotInferred as exc:
            if not many:
                raise
            row = {"artifact": {"source": path}, "status": "error",
                   "error": {"code": "task_not_inferred", "message": str(exc)}, "oeval": None}
            click.echo(dumps_line(row) if fmt == "json" else f"{path}: error: {exc}\n")
            worst = max(worst, EXIT_NO_TASK)
            continue
        if fmt == "json" and many:
            click.echo(dumps_line(report.as_dict()))
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
